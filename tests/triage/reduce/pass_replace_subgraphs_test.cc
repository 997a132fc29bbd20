// replace-subgraphs.
#include "tests/triage/reduce/pass_test_util.h"

namespace trench::hlo_reduce {
namespace {

using testing::ApplyValid;
using testing::CaseOf;
using testing::PassNamed;

// Post order: p, q, e, l, a, s, root. Instructions with operands:
// e, l, a, s, root; l (f32[2,3] = 6 elements) and s, root (scalars) are
// small enough for a constant too.
constexpr char kGraph[] = R"(
HloModule g
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
ENTRY main {
  p = f32[2,3] parameter(0)
  q = f32[2,3] parameter(1)
  e = f32[2,3] exponential(p)
  l = f32[2,3] log-plus-one(q)
  a = f32[2,3] multiply(e, l)
  c0 = f32[] constant(0)
  s = f32[] reduce(a, c0), dimensions={0,1}, to_apply=sum
  ROOT root = f32[] sqrt(s)
}
)";

TEST(ReplaceSubgraphsTest, CountsParameterAndConstantOpportunities) {
  auto pass = PassNamed("replace-subgraphs");
  // e(par, const), l(par, const), a(par, const), s(par, const),
  // root(par, const): every array here has at most 16 elements.
  EXPECT_EQ(pass->Count(CaseOf(kGraph)), 10);
}

TEST(ReplaceSubgraphsTest, ValuesAreKeptExactly) {
  auto pass = PassNamed("replace-subgraphs");
  hlo_diff::Case c = CaseOf(kGraph, 7);
  auto before = testing::Run(c);
  ASSERT_TRUE(before.ok());
  const int64_t n = pass->Count(c);
  for (int64_t k = 0; k < n; ++k) {
    hlo_diff::Case out = ApplyValid(*pass, c, {k});
    EXPECT_LT(MeasureCase(out).instructions, MeasureCase(c).instructions) << k;
    auto after = testing::Run(out);
    ASSERT_TRUE(after.ok()) << k << after.status().ToString();
    EXPECT_EQ(*after, *before) << k << "\n" << out.module_text;
  }
}

TEST(ReplaceSubgraphsTest, CutsOperandsOff) {
  auto pass = PassNamed("replace-subgraphs");
  hlo_diff::Case c = CaseOf(kGraph);
  // a by a parameter: e, l, p, q go; one input f32[2,3] holds a's value.
  hlo_diff::Case out = ApplyValid(*pass, c, {4});
  EXPECT_EQ(out.module_text.find("exponential"), std::string::npos);
  EXPECT_EQ(out.module_text.find("log-plus-one"), std::string::npos);
  ASSERT_EQ(out.inputs.size(), 1u);
  // s by a constant (both of its opportunities chosen: the constant wins).
  hlo_diff::Case k = ApplyValid(*pass, c, {6, 7});
  EXPECT_TRUE(k.inputs.empty());
  EXPECT_EQ(MeasureCase(k).instructions, 2) << k.module_text;
}

TEST(ReplaceSubgraphsTest, AllAtOnceIsValidAndDeterministic) {
  auto pass = PassNamed("replace-subgraphs");
  hlo_diff::Case c = CaseOf(kGraph);
  const auto all = testing::Iota(pass->Count(c));
  hlo_diff::Case out = ApplyValid(*pass, c, all);
  EXPECT_EQ(MeasureCase(out).instructions, 1) << out.module_text;
  EXPECT_EQ(out.module_text, pass->Apply(c, all)->module_text);
}

TEST(ReplaceSubgraphsTest, GreedyToTheOpcode) {
  std::vector<std::unique_ptr<ReductionPass>> passes;
  passes.push_back(PassNamed("replace-subgraphs"));
  passes.push_back(PassNamed("remove-instructions"));
  hlo_diff::Case c = CaseOf(kGraph);
  hlo_diff::Case out = testing::GreedyReduce(
      passes, c,
      [](const hlo_diff::Case& k) { return testing::HasOpcode(k, "reduce"); });
  EXPECT_TRUE(testing::HasOpcode(out, "reduce"));
  // reduce(parameter, constant) as the root, and its reducer (whose
  // parameters stay): 11 -> 6.
  EXPECT_EQ(MeasureCase(c).instructions, 11);
  EXPECT_LE(MeasureCase(out).instructions, 6) << out.module_text;
}

}  // namespace
}  // namespace trench::hlo_reduce
