// shrink-shapes.
#include "tests/tools/hlo-reduce/pass_test_util.h"

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
// (4), d0 halve (5), d1 to 1 (6), d1 halve (7); q: 8..11.
TEST(ShrinkShapesTest, CountsDimsOfSources) {
  auto pass = PassNamed("shrink-shapes");
  EXPECT_EQ(pass->Count(CaseOf(kGraph)), 12);
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
