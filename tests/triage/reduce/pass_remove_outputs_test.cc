// remove-outputs.
#include "tests/triage/reduce/pass_test_util.h"

namespace trench::hlo_reduce {
namespace {

using testing::ApplyValid;
using testing::CaseOf;
using testing::PassNamed;

constexpr char kThree[] = R"(
HloModule three, entry_computation_layout={(f32[4]{0})->(f32[4]{0}, f32[4]{0}, f32[]{})}
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
ENTRY main {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  e = f32[4] exponential(p)
  c0 = f32[] constant(0)
  r = f32[] reduce(e, c0), dimensions={0}, to_apply=sum
  ROOT t = (f32[4], f32[4], f32[]) tuple(n, e, r)
}
)";

constexpr char kWhileRoot[] = R"(
HloModule w
cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v2 = f32[2] add(v, v)
  ROOT t = (s32[], f32[2]) tuple(i2, v2)
}
ENTRY main {
  z = s32[] constant(0)
  p = f32[2] parameter(0)
  init = (s32[], f32[2]) tuple(z, p)
  ROOT w = (s32[], f32[2]) while(init), condition=cond, body=body
}
)";

TEST(RemoveOutputsTest, CountsRootTupleElements) {
  auto pass = PassNamed("remove-outputs");
  EXPECT_EQ(pass->Count(CaseOf(kThree)), 3);
  EXPECT_EQ(pass->Count(CaseOf(kWhileRoot)), 2);
  EXPECT_EQ(
      pass->Count(CaseOf("ENTRY m {\n ROOT p = f32[2] parameter(0)\n}\n")), 0);
}

TEST(RemoveOutputsTest, DropsOutputsAndWhatOnlyTheyUse) {
  auto pass = PassNamed("remove-outputs");
  hlo_diff::Case c = CaseOf(kThree);
  hlo_diff::Case two = ApplyValid(*pass, c, {2});  // r goes, and sum.
  EXPECT_EQ(two.module_text.find("reduce"), std::string::npos);
  EXPECT_EQ(two.module_text.find("%sum"), std::string::npos);
  EXPECT_NE(two.module_text.find("(f32[4], f32[4]) tuple"), std::string::npos)
      << two.module_text;
  // The header describing the old signature goes with it.
  EXPECT_EQ(two.module_text.find("entry_computation_layout"),
            std::string::npos);
  hlo_diff::Case one = ApplyValid(*pass, c, {0, 2});  // Only e is left.
  EXPECT_NE(one.module_text.find("ROOT %e"), std::string::npos)
      << one.module_text;
  EXPECT_EQ(MeasureCase(one).instructions, 2);
  EXPECT_LT(MeasureCase(two).elements, MeasureCase(c).elements);
}

TEST(RemoveOutputsTest, AllOutputsCannotGo) {
  auto pass = PassNamed("remove-outputs");
  auto all = testing::Apply(*pass, CaseOf(kThree), {0, 1, 2});
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().code(), StatusCode::kFailedPrecondition);
}

TEST(RemoveOutputsTest, NonTupleRootKeepsAnElement) {
  auto pass = PassNamed("remove-outputs");
  hlo_diff::Case c = CaseOf(kWhileRoot);
  hlo_diff::Case out = ApplyValid(*pass, c, {0});
  EXPECT_NE(out.module_text.find("ROOT %w.output = f32[2] get-tuple-element"),
            std::string::npos)
      << out.module_text;
  auto before = testing::Run(c);
  auto after = testing::Run(out);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(*after, before->tuple_element(1));
}

TEST(RemoveOutputsTest, DeterministicAndGreedy) {
  auto pass = PassNamed("remove-outputs");
  hlo_diff::Case c = CaseOf(kThree);
  EXPECT_EQ(testing::Apply(*pass, c, {1})->module_text,
            testing::Apply(*pass, c, {1})->module_text);
  std::vector<std::unique_ptr<ReductionPass>> passes;
  passes.push_back(PassNamed("remove-outputs"));
  passes.push_back(PassNamed("remove-instructions"));
  hlo_diff::Case out = testing::GreedyReduce(
      passes, c,
      [](const hlo_diff::Case& k) { return testing::HasOpcode(k, "negate"); });
  EXPECT_EQ(MeasureCase(out).instructions, 2) << out.module_text;
  EXPECT_TRUE(testing::HasOpcode(out, "negate"));
}

}  // namespace
}  // namespace trench::hlo_reduce
