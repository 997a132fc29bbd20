#include "compiler/passes/constant_folding.h"

#include <cmath>

#include "compiler/passes/dce.h"
#include "compiler/passes/literal_folder.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

using testing::Parse;
using testing::Root;
using testing::RunPass;

// Folds, checks that the root became a constant and that the value is the
// oracle's value of the original module, bit for bit.
void ExpectFoldsToOracleValue(std::string_view text) {
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  auto before = m->Clone();
  ConstantFolding cf;
  EXPECT_TRUE(RunPass(cf, m.get()));
  EXPECT_EQ(Root(*m)->opcode(), HloOpcode::kConstant) << PrintHloModule(*m);
  testing::ExpectSameValues(*before, *m, {});
}

TEST(ConstantFoldingTest, FoldsChainsOfArithmetic) {
  ExpectFoldsToOracleValue(R"(
HloModule m
ENTRY e {
  a = f32[4] constant({1.5, -2, 3.25, 0})
  b = f32[4] constant({0.1, 7, -0, -0})
  s = f32[4] add(a, b)
  n = f32[4] negate(s)
  d = f32[4] divide(n, b)
  ROOT r = f32[4] maximum(d, a)
})");
}

TEST(ConstantFoldingTest, RoundsBf16AndF16ToNearestEven) {
  // 1 + 2^-8 is a tie between bf16 1 and 1 + 2^-7: RNE gives 1.
  ExpectFoldsToOracleValue(R"(
HloModule m
ENTRY e {
  a = bf16[3] constant({1, 3, 0.1})
  b = bf16[3] constant({0.00390625, 0.01171875, 0.2})
  ROOT r = bf16[3] add(a, b)
})");
  ExpectFoldsToOracleValue(R"(
HloModule m
ENTRY e {
  a = f16[3] constant({1, 65504, 0.1})
  b = f16[3] constant({0.0004882812, 32, 3})
  m = f16[3] multiply(a, b)
  ROOT r = f16[3] sqrt(m)
})");
  auto m = Parse(R"(
HloModule m
ENTRY e {
  a = bf16[] constant(1)
  b = bf16[] constant(0.00390625)
  ROOT r = bf16[] add(a, b)
})");
  ConstantFolding cf;
  EXPECT_TRUE(RunPass(cf, m.get()));
  EXPECT_EQ(Root(*m)->literal().GetAsDouble(0), 1.0);
}

TEST(ConstantFoldingTest, IntegerEdgeCasesFollowXla) {
  ExpectFoldsToOracleValue(R"(
HloModule m
ENTRY e {
  a = s32[5] constant({7, -7, -2147483648, 5, 100})
  b = s32[5] constant({0, 2, -1, 0, 3})
  d = s32[5] divide(a, b)
  m = s32[5] remainder(a, b)
  ROOT r = s32[5] add(d, m)
})");
  ExpectFoldsToOracleValue(R"(
HloModule m
ENTRY e {
  a = u8[4] constant({255, 1, 128, 7})
  b = u8[4] constant({1, 9, 7, 0})
  s = u8[4] add(a, b)
  l = u8[4] shift-left(s, b)
  q = u8[4] divide(l, b)
  ROOT r = u8[4] shift-right-logical(q, b)
})");
  ExpectFoldsToOracleValue(R"(
HloModule m
ENTRY e {
  a = s8[4] constant({-128, 127, -1, 64})
  b = s8[4] constant({1, 9, 3, -1})
  s = s8[4] shift-right-arithmetic(a, b)
  c = s8[4] count-leading-zeros(s)
  p = s8[4] popcnt(a)
  ROOT r = s8[4] multiply(c, p)
})");
}

TEST(ConstantFoldingTest, FoldsConvertsAndCompares) {
  ExpectFoldsToOracleValue(R"(
HloModule m
ENTRY e {
  a = f32[6] constant({1e10, -1e10, nan, -2.7, 2.7, 0.5})
  i = s32[6] convert(a)
  u = u8[6] convert(i)
  ROOT r = bf16[6] convert(u)
})");
  ExpectFoldsToOracleValue(R"(
HloModule m
ENTRY e {
  a = f32[4] constant({1, nan, -0, 3})
  b = f32[4] constant({1, nan, 0, 2})
  ROOT r = pred[4] compare(a, b), direction=EQ
})");
  ExpectFoldsToOracleValue(R"(
HloModule m
ENTRY e {
  a = u32[3] constant({4294967295, 0, 5})
  b = u32[3] constant({1, 1, 5})
  ROOT r = pred[3] compare(a, b), direction=GT
})");
}

TEST(ConstantFoldingTest, FoldsDataMovementAndIota) {
  ExpectFoldsToOracleValue(R"(
HloModule m
ENTRY e {
  a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  t = s32[3,2] transpose(a), dimensions={1,0}
  r = s32[6] reshape(t)
  s = s32[3] slice(r), slice={[1:6:2]}
  i = s32[3] iota(), iota_dimension=0
  c = s32[6] concatenate(s, i), dimensions={0}
  b = s32[2,6] broadcast(c), dimensions={1}
  ROOT v = s32[2,6] reverse(b), dimensions={0,1}
})");
  ExpectFoldsToOracleValue(R"(
HloModule m
ENTRY e {
  i = bf16[2,300] iota(), iota_dimension=1
  p = pred[2,300] broadcast(pred[] constant(true)), dimensions={}
  z = bf16[2,300] broadcast(bf16[] constant(-0)), dimensions={}
  ROOT r = bf16[2,300] select(p, i, z)
})");
}

TEST(ConstantFoldingTest, LeavesWhatItCannotFoldExactly) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  c = f32[2] constant({1, 2})
  e = f32[2] exponential(c)
  pw = f32[2] power(c, c)
  a = f32[2] add(p, c)
  big = s64[] constant(9007199254740993)
  cv = f32[] convert(big)
  ROOT r = (f32[2], f32[2], f32[2], f32[]) tuple(e, pw, a, cv)
})");
  ConstantFolding cf;
  EXPECT_FALSE(RunPass(cf, m.get()));
}

TEST(ConstantFoldingTest, CapsTheSizeOfFoldedLiterals) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  ROOT i = s32[1024,1024] iota(), iota_dimension=0
})");
  ConstantFolding cf;
  EXPECT_FALSE(RunPass(cf, m.get()));
  EXPECT_GT(1024 * 1024, kMaxFoldedElements);
}

TEST(ConstantFoldingTest, RewriteLimitAndSiteName) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  a = s32[] constant(1)
  b = s32[] add(a, a)
  ROOT c = s32[] multiply(b, b)
})");
  ConstantFolding cf;
  PassContext ctx(1);
  EXPECT_TRUE(RunPass(cf, m.get(), &ctx));
  EXPECT_EQ(Root(*m)->opcode(), HloOpcode::kMultiply);
  ASSERT_EQ(ctx.decisions().size(), 2u);
  EXPECT_EQ(ctx.decisions()[0].site, "fold");
  EXPECT_EQ(ctx.decisions()[0].instruction, "b");
  EXPECT_EQ(ctx.decisions()[1].instruction, "c");
  EXPECT_FALSE(ctx.decisions()[1].allowed);
}

TEST(ConstantFoldingTest, RandomizedAgainstOracle) {
  // Elementwise ops over every real type with constants from the random
  // input generator, folded and compared bit for bit with the oracle.
  const char* types[] = {"pred", "s8",  "s16", "s32",  "s64", "u8", "u16",
                         "u32",  "u64", "f16", "bf16", "f32", "f64"};
  const char* float_ops[] = {"add",       "subtract", "multiply", "divide",
                             "remainder", "maximum",  "minimum"};
  const char* int_ops[] = {"add",
                           "subtract",
                           "multiply",
                           "divide",
                           "remainder",
                           "maximum",
                           "minimum",
                           "and",
                           "or",
                           "xor",
                           "shift-left",
                           "shift-right-logical",
                           "shift-right-arithmetic"};
  const char* pred_ops[] = {"and", "or", "xor"};
  for (const char* t : types) {
    const PrimitiveType type = *PrimitiveTypeFromName(t);
    std::vector<const char*> ops;
    if (type == PrimitiveType::PRED) {
      ops.assign(std::begin(pred_ops), std::end(pred_ops));
    } else if (IsFloat(type)) {
      ops.assign(std::begin(float_ops), std::end(float_ops));
    } else {
      ops.assign(std::begin(int_ops), std::end(int_ops));
    }
    for (const char* op : ops) {
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        Shape shape(type, {16});
        Literal a = RandomLiteral(shape, seed),
                b = RandomLiteral(shape, seed + 7);
        const std::string ts = std::string(t) + "[16]";
        const std::string text =
            "HloModule m\nENTRY e {\n  a = " + ts + " constant(" +
            PrintLiteral(a) + ")\n  b = " + ts + " constant(" +
            PrintLiteral(b) + ")\n  ROOT x = " + ts + " " + op + "(a, b)\n}\n";
        SCOPED_TRACE(text);
        auto m = Parse(text);
        ASSERT_NE(m, nullptr);
        auto before = m->Clone();
        ConstantFolding cf;
        EXPECT_TRUE(RunPass(cf, m.get()));
        EXPECT_EQ(Root(*m)->opcode(), HloOpcode::kConstant);
        testing::ExpectSameValues(*before, *m, {});
      }
    }
  }
}

}  // namespace
}  // namespace trench
