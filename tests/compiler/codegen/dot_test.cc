// dot with general dimension numbers and every element type, on the
// simulator against the oracle.
//
// Tolerances. Random floats are in [-4, 4) (random_inputs.h), so a result
// element's sum of |a_ik b_kj| is at most 16 K; errors are bounded
// relative to that scale:
//   DEFAULT  one bf16 pass: each operand rounded to bf16 (2^-9 relative),
//            f32 accumulation: 1e-2 * 16 K.
//   HIGH     bf16x3: operands split to ~16 bits: 1e-4 * 16 K.
//   HIGHEST  bf16x6: f32-level: 2e-6 * 16 K.
// bf16 x bf16 (and s8/u8/pred-valued) operands are exact in one pass; only
// the f32 accumulation order differs from the oracle's f64 sum (1e-6 * 16 K).
// f64 and integer dots run on the vector unit and match exactly (f64 sums
// in the oracle's k order without FMA; integers wrap in the result type).
#include <string>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracle;

ComparisonOptions Scaled(double rel, int64_t k) {
  const double abs = rel * 16 * static_cast<double>(std::max<int64_t>(k, 1));
  ComparisonOptions o;
  o.f32 = {abs, 0};
  o.bf16 = {abs + 2e-2, 1e-2};  // Plus the bf16 rounding of the result.
  o.f16 = {abs + 4e-3, 1e-3};   // Plus the f16 rounding of the result.
  o.f64 = {1e-12, 1e-12};
  return o;
}

std::string Module(const std::string& lhs, const std::string& rhs,
                   const std::string& out, const std::string& attrs) {
  return "HloModule m\nENTRY e {\n  a = " + lhs +
         " parameter(0)\n  b = " + rhs + " parameter(1)\n  ROOT r = " + out +
         " dot(a, b)" + (attrs.empty() ? "" : ", " + attrs) + "\n}\n";
}

// [m,k] x [k,n] -> [m,n] in type t (result type rt), precision p.
std::string MatMul(const std::string& t, const std::string& rt, int64_t m,
                   int64_t k, int64_t n, const std::string& p) {
  auto s = [](const std::string& ty, int64_t a, int64_t b) {
    return ty + "[" + std::to_string(a) + "," + std::to_string(b) + "]";
  };
  return Module(s(t, m, k), s(t, k, n), s(rt, m, n),
                "lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
                "operand_precision={" +
                    p + "," + p + "}");
}

TEST(DotCodegenTest, RaggedShapesAtEveryPrecision) {
  const int64_t sizes[][3] = {{3, 130, 129}, {1, 1, 1},    {8, 128, 128},
                              {9, 257, 7},   {17, 3, 300}, {130, 5, 2}};
  const std::pair<const char*, double> modes[] = {
      {"DEFAULT", 1e-2}, {"HIGH", 1e-4}, {"HIGHEST", 2e-6}};
  for (const auto& [mode, rel] : modes) {
    for (const auto& s : sizes) {
      ExpectMatchesOracle(MatMul("f32", "f32", s[0], s[1], s[2], mode), 11,
                          Scaled(rel, s[1]));
    }
  }
}

TEST(DotCodegenTest, GeneralDimensionNumbers) {
  const ComparisonOptions o = Scaled(2e-6, 60);
  // Batch dims (two, not leading), contracting dims (two, any order).
  ExpectMatchesOracle(Module("f32[3,4,2,5]", "f32[5,2,3,6]", "f32[2,3,4,6]",
                             "lhs_batch_dims={2,0}, lhs_contracting_dims={3}, "
                             "rhs_batch_dims={1,2}, rhs_contracting_dims={0}, "
                             "operand_precision={HIGHEST,HIGHEST}"),
                      1, o);
  ExpectMatchesOracle(
      Module("f32[3,2,4,5]", "f32[4,6,5]", "f32[3,2,6]",
             "lhs_contracting_dims={3,2}, rhs_contracting_dims={2,0}, "
             "operand_precision={HIGHEST,HIGHEST}"),
      2, o);
  // Several free dims on both sides, contracting dim first.
  ExpectMatchesOracle(
      Module("f32[7,3,2]", "f32[4,7,5]", "f32[3,2,4,5]",
             "lhs_contracting_dims={0}, rhs_contracting_dims={1}, "
             "operand_precision={HIGHEST,HIGHEST}"),
      3, o);
  // Batch only (elementwise products), and no dimension numbers at all
  // (an outer product).
  ExpectMatchesOracle(Module("f32[5,3]", "f32[5,3]", "f32[5,3]",
                             "lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, "
                             "operand_precision={HIGHEST,HIGHEST}"),
                      4, o);
  ExpectMatchesOracle(Module("s32[2,3]", "s32[4]", "s32[2,3,4]", ""), 5,
                      ComparisonOptions::Exact());
  // Batched, ragged, on the vector unit.
  ExpectMatchesOracle(Module("s64[9,3,4]", "s64[4,9,130]", "s64[9,3,130]",
                             "lhs_batch_dims={0}, lhs_contracting_dims={2}, "
                             "rhs_batch_dims={1}, rhs_contracting_dims={0}"),
                      6, ComparisonOptions::Exact());
}

TEST(DotCodegenTest, EveryDtype) {
  for (const char* t :
       {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "pred"}) {
    ExpectMatchesOracle(MatMul(t, t, 9, 33, 130, "DEFAULT"), 7,
                        ComparisonOptions::Exact());
  }
  ExpectMatchesOracle(MatMul("f64", "f64", 9, 33, 130, "DEFAULT"), 7,
                      Scaled(0, 33));
  // bf16 is exact in one pass whatever the precision asks.
  ExpectMatchesOracle(MatMul("bf16", "bf16", 9, 129, 130, "HIGHEST"), 7,
                      Scaled(1e-6, 129));
  ExpectMatchesOracle(MatMul("f16", "f16", 9, 129, 130, "HIGHEST"), 7,
                      Scaled(2e-6, 129));
  ExpectMatchesOracle(MatMul("f16", "f16", 9, 129, 130, "DEFAULT"), 7,
                      Scaled(1e-2, 129));
}

TEST(DotCodegenTest, PreferredResultTypes) {
  auto mixed = [](const std::string& lt, const std::string& rt,
                  const std::string& out) {
    return Module(lt + "[5,70]", rt + "[70,131]", out + "[5,131]",
                  "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  };
  const ComparisonOptions exact = ComparisonOptions::Exact();
  ExpectMatchesOracle(mixed("s8", "s8", "s32"), 8, exact);
  ExpectMatchesOracle(mixed("u8", "s8", "s16"), 8, exact);
  ExpectMatchesOracle(mixed("s8", "u16", "u64"), 8, exact);
  ExpectMatchesOracle(mixed("s32", "s32", "s64"), 8, exact);
  ExpectMatchesOracle(mixed("f32", "f32", "f64"), 8, Scaled(0, 70));
  ExpectMatchesOracle(mixed("s8", "s8", "f32"), 8, Scaled(1e-6, 70));
  ExpectMatchesOracle(mixed("bf16", "bf16", "f32"), 8, Scaled(1e-6, 70));
  ExpectMatchesOracle(mixed("f16", "bf16", "f32"), 8, Scaled(1e-2, 70));
  // f32 operands rounded to the bf16 result type first (as the oracle
  // does), then exact products.
  ExpectMatchesOracle(mixed("f32", "f32", "bf16"), 8, Scaled(1e-6, 70));
}

// Compiles `m` with `options`, runs it on `args` and compares with the
// oracle within `cmp`.
void ExpectRunMatches(const HloModule& m, const std::vector<Literal>& args,
                      const CompileOptions& options,
                      const ComparisonOptions& cmp) {
  auto expected = Evaluate(m, args);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  auto exe = CompileModule(m, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  tpu::RunResult r = testing::Run(*exe, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
  ComparisonResult c =
      CompareLiterals(testing::ToLiteral(r.outputs.at(0)), *expected, cmp);
  EXPECT_TRUE(c.ok()) << c.ToText();
}

// Operands larger than VMEM are tiled over M and N with strided DMAs.
TEST(DotCodegenTest, TilesWhenOperandsExceedVmem) {
  CompileOptions small;
  // Untiled, the 40x260x300 dot needs ~1 MiB; 8x128 tiles (all of K)
  // need ~329 KiB, so both M and N are tiled, with ragged last tiles.
  small.vmem_bytes = 352 << 10;
  const char* layouts[][2] = {{"[40,260]", "[260,300]"},
                              {"[260,40]", "[300,260]"}};
  for (const auto& l : layouts) {
    const bool tl = std::string(l[0]) == "[260,40]";
    const std::string attrs = std::string("lhs_contracting_dims={") +
                              (tl ? "0" : "1") + "}, rhs_contracting_dims={" +
                              (tl ? "1" : "0") +
                              "}, operand_precision={HIGH,HIGH}";
    for (const char* t : {"f32", "s32"}) {
      const std::string text =
          Module(std::string(t) + l[0], std::string(t) + l[1],
                 std::string(t) + "[40,300]", attrs);
      SCOPED_TRACE(text);
      auto m = testing::Parse(text);
      ASSERT_NE(m, nullptr);
      ExpectRunMatches(*m, RandomArguments(*m->entry_computation(), 5), small,
                       Scaled(1e-4, 260));
    }
  }
  // K is tiled too (dot_tiling_test.cc); a dot with two contracting dims
  // in one operand is not tiled: a clear error.
  auto m = testing::Parse(
      Module("f32[40,300,30]", "f32[300,30,8]", "f32[40,8]",
             "lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}"));
  ASSERT_NE(m, nullptr);
  auto exe = CompileModule(*m, small);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), StatusCode::kResourceExhausted);
}

// Integer sums wrap in the result type: inputs chosen to overflow it.
TEST(DotCodegenTest, IntegerSumsWrap) {
  struct Case {
    const char* t;
    int64_t value;
  };
  for (const Case& c :
       {Case{"s8", 100}, Case{"u8", 200}, Case{"s16", 30000},
        Case{"s32", int64_t{1} << 30}, Case{"u32", int64_t{3} << 30},
        Case{"s64", int64_t{1} << 62}}) {
    SCOPED_TRACE(c.t);
    auto m = testing::Parse(MatMul(c.t, c.t, 3, 37, 5, "DEFAULT"));
    ASSERT_NE(m, nullptr);
    std::vector<Literal> args = RandomArguments(*m->entry_computation(), 12);
    for (Literal& a : args) {
      for (int64_t i = 0; i < a.element_count(); i += 2) {
        a.SetFromInt64(i, c.value - (i % 7));
      }
    }
    ExpectRunMatches(*m, args, CompileOptions(), ComparisonOptions::Exact());
  }
}

TEST(DotCodegenTest, EmptyContractionIsZero) {
  ExpectMatchesOracle(MatMul("f32", "f32", 3, 0, 5, "DEFAULT"), 1,
                      ComparisonOptions::Exact());
  ExpectMatchesOracle(MatMul("s32", "s32", 3, 0, 5, "DEFAULT"), 1,
                      ComparisonOptions::Exact());
  ExpectMatchesOracle(MatMul("f32", "f32", 0, 4, 5, "DEFAULT"), 1,
                      ComparisonOptions::Exact());
}

TEST(DotCodegenTest, LargeF32DotCompilesAndRuns) {
  ExpectMatchesOracle(MatMul("f32", "f32", 512, 512, 512, "DEFAULT"), 13,
                      Scaled(1e-2, 512));
}

}  // namespace
}  // namespace trench::codegen
