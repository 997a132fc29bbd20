// remove-instructions.
#include "tests/triage/reduce/pass_test_util.h"

namespace trench::hlo_reduce {
namespace {

using testing::ApplyValid;
using testing::CaseOf;
using testing::PassNamed;

std::string ChainText() {
  return std::string(R"(
HloModule chain
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  c0 = f32[] constant(0)
  e = f32[4] exponential(p)
  a = f32[4] add(e, q)
  m = f32[4] multiply(p, p)
  r = f32[2] slice(a), slice={[0:2]}
  s = f32[2] sine(r)
  d = f32[] reduce(s, c0), dimensions={0}, to_apply=sum
  ROOT root = f32[] negate(d)
}
)");
}

TEST(RemoveInstructionsTest, CountsRemovableInstructions) {
  auto pass = PassNamed("remove-instructions");
  // One per same-shaped operand, else one: z -> x|y (sum's root); entry
  // post order p q c0 e a m r s d root: e -> p, a -> e|q, m goes,
  // r -> parameter, s -> r, d -> c0, root -> d. Leaves
  // with users (parameters, constants) are not offered.
  EXPECT_EQ(pass->Count(CaseOf(ChainText())), 10);
}

TEST(RemoveInstructionsTest, RewiresToSameShapedOperand) {
  auto pass = PassNamed("remove-instructions");
  hlo_diff::Case c = CaseOf(ChainText());
  // Opportunities: z>x 0, z>y 1, e>p 2, a>e 3, a>q 4, m 5, r 6, s>r 7,
  // d>c0 8, root>d 9.
  hlo_diff::Case out = ApplyValid(*pass, c, {2});
  EXPECT_EQ(out.module_text.find("exponential"), std::string::npos)
      << out.module_text;
  EXPECT_NE(out.module_text.find("add(f32[4] %p, f32[4] %q)"),
            std::string::npos)
      << out.module_text;
  EXPECT_EQ(out.inputs.size(), 2u);
}

TEST(RemoveInstructionsTest, NewParameterHoldsTheOracleValue) {
  auto pass = PassNamed("remove-instructions");
  hlo_diff::Case c = CaseOf(ChainText());
  auto before = testing::Run(c);
  ASSERT_TRUE(before.ok());
  // r (slice, f32[4] -> f32[2]): no same-shaped operand, so a parameter
  // with r's value; e, a and both inputs of the old subgraph go.
  hlo_diff::Case out = ApplyValid(*pass, c, {6});
  EXPECT_EQ(out.module_text.find("slice"), std::string::npos);
  EXPECT_EQ(out.module_text.find("exponential"), std::string::npos);
  // p stays for the unused m (unused instructions go only when chosen).
  ASSERT_EQ(out.inputs.size(), 2u);
  EXPECT_EQ(out.inputs[1].shape().dims(), std::vector<int64_t>{2});
  auto after = testing::Run(out);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, *before);  // The failure's values are kept.
  EXPECT_LT(MeasureCase(out).instructions, MeasureCase(c).instructions);
}

TEST(RemoveInstructionsTest, UnusedInstructionsGoAndCalledRootsBecomeZero) {
  auto pass = PassNamed("remove-instructions");
  hlo_diff::Case c = CaseOf(ChainText());
  hlo_diff::Case out = ApplyValid(*pass, c, {5});  // m, unused.
  EXPECT_EQ(out.module_text.find("multiply"), std::string::npos);
  // a -> q: the exponential goes; both a -> e and a -> q chosen: e wins.
  hlo_diff::Case q = ApplyValid(*pass, c, {4});
  EXPECT_EQ(q.module_text.find("exponential"), std::string::npos);
  hlo_diff::Case e = ApplyValid(*pass, c, {3, 4});
  EXPECT_NE(e.module_text.find("exponential"), std::string::npos);
  EXPECT_EQ(e.inputs.size(), 1u);  // q went.
}

TEST(RemoveInstructionsTest, CalledRootWithoutSameShapedOperandBecomesZero) {
  auto pass = PassNamed("remove-instructions");
  hlo_diff::Case c = CaseOf(R"(
HloModule f
fused {
  f0 = f32[4] parameter(0)
  ROOT fr = f32[2] slice(f0), slice={[1:3]}
}
ENTRY main {
  p = f32[4] parameter(0)
  ROOT f = f32[2] fusion(p), kind=kLoop, calls=fused
}
)");
  // fr -> zero constant; f -> parameter.
  ASSERT_EQ(pass->Count(c), 2);
  hlo_diff::Case z = ApplyValid(*pass, c, {0});
  EXPECT_NE(z.module_text.find("constant({0, 0})"), std::string::npos)
      << z.module_text;
  EXPECT_EQ(z.module_text.find("slice"), std::string::npos);
}

TEST(RemoveInstructionsTest, AllAtOnceAndEveryOtherAreValidAndSmaller) {
  auto pass = PassNamed("remove-instructions");
  hlo_diff::Case c = CaseOf(ChainText());
  const int64_t n = pass->Count(c);
  hlo_diff::Case all = ApplyValid(*pass, c, testing::Iota(n));
  EXPECT_LE(MeasureCase(all).instructions, 4) << all.module_text;
  std::vector<int64_t> odd;
  for (int64_t i = 1; i < n; i += 2) odd.push_back(i);
  hlo_diff::Case some = ApplyValid(*pass, c, odd);
  EXPECT_LT(MeasureCase(some).instructions, MeasureCase(c).instructions);
}

TEST(RemoveInstructionsTest, Deterministic) {
  auto pass = PassNamed("remove-instructions");
  hlo_diff::Case c = CaseOf(ChainText());
  auto a = testing::Apply(*pass, c, {1, 4, 6});
  auto b = testing::Apply(*pass, c, {1, 4, 6});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->module_text, b->module_text);
  EXPECT_EQ(a->inputs, b->inputs);
}

TEST(RemoveInstructionsTest, GreedyKeepsOnlyWhatThePredicateNeeds) {
  std::vector<std::unique_ptr<ReductionPass>> passes;
  passes.push_back(PassNamed("remove-instructions"));
  hlo_diff::Case out = testing::GreedyReduce(
      passes, CaseOf(ChainText()),
      [](const hlo_diff::Case& c) { return testing::HasOpcode(c, "sine"); });
  EXPECT_TRUE(testing::HasOpcode(out, "sine"));
  // The sine, as the root, on a parameter holding its operand's value.
  EXPECT_EQ(MeasureCase(out).instructions, 2) << out.module_text;
}

}  // namespace
}  // namespace trench::hlo_reduce
