// shrink-shapes.
#include "tests/triage/reduce/pass_test_util.h"

namespace trench::hlo_reduce {
namespace {

using testing::ApplyValid;
using testing::CaseOf;
using testing::PassNamed;

constexpr char kGraph[] = R"(
HloModule s
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
ENTRY main {
  p = f32[8,6] parameter(0)
  q = f32[8,6] parameter(1)
  c = f32[] constant(2)
  c0 = f32[] constant(0)
  b = f32[8,6] broadcast(c), dimensions={}
  m = f32[8,6] multiply(p, b)
  a = f32[8,6] add(m, q)
  t = f32[6,8] transpose(a), dimensions={1,0}
  s = f32[6,4] slice(t), slice={[0:6], [2:6]}
  r = f32[6] reduce(s, c0), dimensions={1}, to_apply=sum
  ROOT n = f32[6] negate(r)
}
)";

// Opportunities: sizes 6 (to 1: 0, halve: 1) and 8 (2, 3); p: d0 to 1
// (4), d0 halve (5), d1 to 1 (6), d1 halve (7); q: 8..11; the broadcast
// b's dims (not from its operand): 12..15.
TEST(ShrinkShapesTest, CountsDimsOfSources) {
  auto pass = PassNamed("shrink-shapes");
  EXPECT_EQ(pass->Count(CaseOf(kGraph)), 16);
  EXPECT_EQ(pass->Count(CaseOf(R"(
ENTRY m {
  i = s32[2,1] iota(), iota_dimension=0
  k = s32[3] constant({1, 2, 3})
  ROOT t = (s32[2,1], s32[3]) tuple(i, k)
}
)")),
            (1 + 2) + (1 + 2));  // Sizes 2 and 3; i's d0, k's d0.
}

TEST(ShrinkShapesTest, ShrinksInputsAndPropagates) {
  auto pass = PassNamed("shrink-shapes");
  hlo_diff::Case c = CaseOf(kGraph);
  hlo_diff::Case rows = ApplyValid(*pass, c, {4, 8});
  ASSERT_EQ(rows.inputs.size(), 2u);
  EXPECT_EQ(rows.inputs[0].shape().dims(), (std::vector<int64_t>{1, 6}));
  for (int64_t k = 0; k < 6; ++k) {
    EXPECT_EQ(rows.inputs[1].GetAsDouble(k), c.inputs[1].GetAsDouble(k));
  }
  EXPECT_NE(rows.module_text.find("f32[1,6] broadcast"), std::string::npos)
      << rows.module_text;
  EXPECT_LT(MeasureCase(rows).elements, MeasureCase(c).elements);
  hlo_diff::Case cols = ApplyValid(*pass, c, {7, 11});  // 6 -> 3.
  EXPECT_NE(cols.module_text.find("ROOT %n = f32[3] negate"), std::string::npos)
      << cols.module_text;
  // The same by size: every dim of size 8, or of size 6.
  EXPECT_EQ(ApplyValid(*pass, c, {2}).module_text, rows.module_text);
  EXPECT_EQ(ApplyValid(*pass, c, {1}).module_text, cols.module_text);
  // Only one of two operands of the add: invalid, no crash.
  auto half = testing::Apply(*pass, c, {4});
  ASSERT_TRUE(half.ok());
  EXPECT_FALSE(ValidateCandidate(*half).ok());
  // Halve and to-1 of one dim: to 1 wins.
  EXPECT_EQ(ApplyValid(*pass, c, {4, 5, 8, 9}).module_text, rows.module_text);
  hlo_diff::Case all = ApplyValid(*pass, c, testing::Iota(12));
  EXPECT_NE(all.module_text.find("ROOT %n = f32[1] negate"), std::string::npos)
      << all.module_text;
}

TEST(ShrinkShapesTest, ReshapesDotsFusionsConstantsIotas) {
  auto pass = PassNamed("shrink-shapes");
  hlo_diff::Case c = CaseOf(R"(
HloModule r
fused {
  f0 = f32[4,6] parameter(0)
  ROOT fe = f32[4,6] exponential(f0)
}
ENTRY main {
  p = f32[4,6] parameter(0)
  w = f32[6,5] constant({ {1,2,3,4,5}, {1,2,3,4,5}, {1,2,3,4,5}, {1,2,3,4,5}, {1,2,3,4,5}, {1,2,3,4,5} })
  f = f32[4,6] fusion(p), kind=kLoop, calls=fused
  d = f32[4,5] dot(f, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[4,5,1] reshape(d)
  i = s32[4] iota(), iota_dimension=0
  ROOT t = (f32[4,5,1], s32[4]) tuple(r, i)
}
)");
  // Sizes 4 (0, 1), 5 (2, 3), 6 (4, 5); p: 6 7 8 9, w: 10 11 12 13,
  // i: 14 15.
  ASSERT_EQ(pass->Count(c), 16);
  hlo_diff::Case out = ApplyValid(*pass, c, {6, 12});
  EXPECT_NE(out.module_text.find("f32[1,1,1] reshape"), std::string::npos)
      << out.module_text;
  EXPECT_NE(out.module_text.find("ROOT %fe = f32[1,6] exponential"),
            std::string::npos);
  EXPECT_NE(out.module_text.find("f32[6,1] constant({ {1}, {1},"),
            std::string::npos)
      << out.module_text;
  hlo_diff::Case iota = ApplyValid(*pass, c, {15});
  EXPECT_NE(iota.module_text.find("s32[2] iota"), std::string::npos);
  // Contracting dims shrunk on one side only: invalid, never a crash.
  auto bad = testing::Apply(*pass, c, {8});
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(ValidateCandidate(*bad).ok());
  hlo_diff::Case both = ApplyValid(*pass, c, {8, 10});
  EXPECT_NE(both.module_text.find("f32[4,5,1] reshape"), std::string::npos);
  EXPECT_EQ(ApplyValid(*pass, c, {4}).module_text, both.module_text);
}

constexpr char kPadded[] = R"(
HloModule padded
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY main {
  x = s32[2,10] parameter(0)
  fill = s32[] parameter(1)
  wide = s32[3,50] pad(x, fill), padding=1_0x3_28_1
  zero = s32[] constant(0)
  ROOT sums = s32[3] reduce(wide, zero), dimensions={1}, to_apply=add
}
)";

TEST(ShrinkShapesTest, ShrinksPadding) {
  auto pass = PassNamed("shrink-shapes");
  hlo_diff::Case c = CaseOf(kPadded);
  // Sizes 2 (0) and 10 (1, 2); x: 3, 4, 5; wide d0: zero (6; nothing
  // above 1 to halve); wide d1: zero (7), halve (8).
  ASSERT_EQ(pass->Count(c), 9);
  hlo_diff::Case zero = ApplyValid(*pass, c, {7});
  EXPECT_NE(zero.module_text.find("s32[3,10] pad"), std::string::npos)
      << zero.module_text;
  EXPECT_NE(zero.module_text.find("padding=1_0x0_0\n"), std::string::npos)
      << zero.module_text;
  // Halved: 3_28_1 -> 1_14_0, 10 + 1 + 14 = 25.
  hlo_diff::Case half = ApplyValid(*pass, c, {8});
  EXPECT_NE(half.module_text.find("s32[3,25] pad"), std::string::npos)
      << half.module_text;
  EXPECT_LT(MeasureCase(half).elements, MeasureCase(c).elements);
  // With the operand shrunk too: 1 + 1 + 14.
  hlo_diff::Case both = ApplyValid(*pass, c, {4, 8});
  EXPECT_NE(both.module_text.find("s32[3,16] pad"), std::string::npos)
      << both.module_text;
  EXPECT_NE(ApplyValid(*pass, c, {6, 7}).module_text.find("s32[2,10] pad"),
            std::string::npos);
  // The sums of the unpadded rows stay (fill only adds the padding).
  hlo_diff::Case fill0 = zero;
  fill0.inputs[1].SetFromInt64(0, 0);
  hlo_diff::Case orig0 = c;
  orig0.inputs[1].SetFromInt64(0, 0);
  auto a = testing::Run(orig0);
  auto b = testing::Run(fill0);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  // Nothing shrinks back: every reachable case once on a path.
  EXPECT_GT(testing::ExpectAcyclic(*pass, c, 5000), 20);
}

TEST(ShrinkShapesTest, ZeroesTheZooWitnessHugePad) {
  // tests/bugzoo/01-*'s witness: a 2.2M-element pad kept every target run
  // slow after reduction; its padding alone can go now.
  auto pass = PassNamed("shrink-shapes");
  hlo_diff::Case c = CaseOf(R"(
HloModule padded_row_sums
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY main {
  x = s32[2,1100]{1,0} parameter(0)
  fill = s32[] parameter(1)
  wide = s32[2,1100000]{1,0} pad(x, fill), padding=0_0x1098900_0
  zero = s32[] constant(0)
  ROOT sums = s32[2]{0} reduce(wide, zero), dimensions={1}, to_apply=add
}
)");
  // Size 2: to 1 (0). Size 1100: to 1 (1), then coarsest first: / 256
  // (2), / 16 (3), / 2 (4). x: d0 (5), d1 (6..9). wide d1's padding
  // 1098900: zero (10), / 65536 (11), / 4096 (12), / 256 (13), / 16 (14),
  // / 2 (15).
  ASSERT_EQ(pass->Count(c), 16);
  hlo_diff::Case out = ApplyValid(*pass, c, {10});
  EXPECT_NE(out.module_text.find("s32[2,1100]{1,0} pad"), std::string::npos)
      << out.module_text;
  EXPECT_LT(MeasureCase(out).elements, 10000);
  EXPECT_NE(
      ApplyValid(*pass, c, {15}).module_text.find("s32[2,550550]{1,0} pad"),
      std::string::npos);
  // 1098900 / 65536 = 16 (padding rounds down): 1100 + 16.
  EXPECT_NE(ApplyValid(*pass, c, {11}).module_text.find("s32[2,1116]{1,0} pad"),
            std::string::npos);
  // Every size 1100 to ceil(1100 / 16) = 69 (the input follows), or to
  // ceil(1100 / 256) = 5; the coarsest chosen wins.
  hlo_diff::Case x69 = ApplyValid(*pass, c, {3});
  EXPECT_NE(x69.module_text.find("s32[2,1098969]{1,0} pad"), std::string::npos)
      << x69.module_text;
  EXPECT_EQ(x69.inputs[0].shape().dims(), (std::vector<int64_t>{2, 69}));
  EXPECT_EQ(x69.inputs[0].GetAsDouble(70), c.inputs[0].GetAsDouble(1101));
  EXPECT_EQ(ApplyValid(*pass, c, {2, 3, 4}).module_text,
            ApplyValid(*pass, c, {2}).module_text);
  EXPECT_NE(ApplyValid(*pass, c, {2}).module_text.find("s32[2,5]{1,0} param"),
            std::string::npos);
}

TEST(ShrinkShapesTest, ShrinksBroadcastDims) {
  auto pass = PassNamed("shrink-shapes");
  hlo_diff::Case c = CaseOf(R"(
HloModule b
ENTRY main {
  v = f32[8] parameter(0)
  b = f32[3,8] broadcast(v), dimensions={1}
  ROOT n = f32[3,8] negate(b)
}
)");
  // Size 8 (0, 1); v (2, 3); b's d0 (not from v): to 1 (4), halve (5).
  ASSERT_EQ(pass->Count(c), 6);
  EXPECT_NE(
      ApplyValid(*pass, c, {4}).module_text.find("ROOT %n = f32[1,8] negate"),
      std::string::npos);
  EXPECT_NE(ApplyValid(*pass, c, {5}).module_text.find("f32[2,8] broadcast"),
            std::string::npos);
  hlo_diff::Case tiny = ApplyValid(*pass, c, {0, 4});
  EXPECT_NE(tiny.module_text.find("ROOT %n = f32[1,1] negate"),
            std::string::npos)
      << tiny.module_text;
}

TEST(ShrinkShapesTest, DeterministicAndGreedyToTiny) {
  auto pass = PassNamed("shrink-shapes");
  hlo_diff::Case c = CaseOf(kGraph);
  EXPECT_EQ(testing::Apply(*pass, c, {1, 3, 5, 7})->module_text,
            testing::Apply(*pass, c, {1, 3, 5, 7})->module_text);
  std::vector<std::unique_ptr<ReductionPass>> passes;
  passes.push_back(PassNamed("shrink-shapes"));
  hlo_diff::Case out =
      testing::GreedyReduce(passes, c, [](const hlo_diff::Case& k) {
        return testing::HasOpcode(k, "transpose");
      });
  EXPECT_TRUE(testing::HasOpcode(out, "transpose"));
  // 6 arrays of 48, s 24, r and n 6, five scalars (c, c0, sum's x y z).
  EXPECT_EQ(MeasureCase(c).elements, 6 * 48 + 24 + 6 + 6 + 5);
  EXPECT_LE(MeasureCase(out).elements, 16) << out.module_text;
}

}  // namespace
}  // namespace trench::hlo_reduce
