// inline-calls and unfuse.
#include "tests/triage/reduce/pass_test_util.h"

namespace trench::hlo_reduce {
namespace {

using testing::ApplyValid;
using testing::CaseOf;
using testing::PassNamed;

constexpr char kCalls[] = R"(
HloModule calls
callee {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT m = f32[4] multiply(a, b)
}
fused {
  f0 = f32[4] parameter(0)
  ROOT fe = f32[4] exponential(f0)
}
unused {
  u = f32[] parameter(0)
  ROOT un = f32[] negate(u)
}
ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  c = f32[4] call(p, q), to_apply=callee
  f = f32[4] fusion(c), kind=kLoop, calls=fused
  ROOT r = f32[4] add(f, p)
}
)";

constexpr char kControl[] = R"(
HloModule control
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
yes {
  y = f32[2] parameter(0)
  ROOT ys = f32[2] sine(y)
}
no {
  n = f32[2] parameter(0)
  ROOT nc = f32[2] cosine(n)
}
ENTRY main {
  z = s32[] constant(0)
  p = f32[2] parameter(0)
  b = pred[] parameter(1)
  init = (s32[], f32[2]) tuple(z, p)
  w = (s32[], f32[2]) while(init), condition=cond, body=body
  v = f32[2] get-tuple-element(w), index=1
  ROOT c = f32[2] conditional(b, v, v), true_computation=yes, false_computation=no
}
)";

TEST(InlineCallsTest, CountsCallsBranchesLoopsAndUnreachable) {
  EXPECT_EQ(PassNamed("inline-calls")->Count(CaseOf(kCalls)), 2);  // c, unused
  EXPECT_EQ(PassNamed("unfuse")->Count(CaseOf(kCalls)), 1);
  // while: remove, body once; conditional: two branches.
  EXPECT_EQ(PassNamed("inline-calls")->Count(CaseOf(kControl)), 4);
  EXPECT_EQ(PassNamed("unfuse")->Count(CaseOf(kControl)), 0);
}

TEST(InlineCallsTest, InliningAndUnfusingKeepValues) {
  hlo_diff::Case c = CaseOf(kCalls, 3);
  auto before = testing::Run(c);
  ASSERT_TRUE(before.ok());
  for (const char* name : {"inline-calls", "unfuse"}) {
    auto pass = PassNamed(name);
    hlo_diff::Case out = ApplyValid(*pass, c, {0});
    auto after = testing::Run(out);
    ASSERT_TRUE(after.ok()) << name;
    EXPECT_EQ(*after, *before) << name << "\n" << out.module_text;
    EXPECT_LT(MeasureCase(out).instructions, MeasureCase(c).instructions);
  }
  hlo_diff::Case inlined = ApplyValid(*PassNamed("inline-calls"), c, {0});
  EXPECT_EQ(inlined.module_text.find("call("), std::string::npos);
  EXPECT_EQ(inlined.module_text.find("%callee"), std::string::npos);
  EXPECT_NE(inlined.module_text.find("%unused"), std::string::npos);
  hlo_diff::Case unfused = ApplyValid(*PassNamed("unfuse"), c, {0});
  EXPECT_EQ(unfused.module_text.find("fusion("), std::string::npos);
  EXPECT_NE(unfused.module_text.find("exponential"), std::string::npos);
  hlo_diff::Case both = ApplyValid(*PassNamed("inline-calls"), c, {0, 1});
  EXPECT_EQ(both.module_text.find("%unused"), std::string::npos);
}

TEST(InlineCallsTest, ConditionalBecomesOneBranch) {
  auto pass = PassNamed("inline-calls");
  hlo_diff::Case c = CaseOf(kControl);
  hlo_diff::Case yes = ApplyValid(*pass, c, {2});
  EXPECT_EQ(yes.module_text.find("conditional"), std::string::npos);
  EXPECT_NE(yes.module_text.find("sine"), std::string::npos);
  EXPECT_EQ(yes.module_text.find("cosine"), std::string::npos);
  EXPECT_EQ(yes.inputs.size(), 1u);  // The predicate input went.
  hlo_diff::Case no = ApplyValid(*pass, c, {3});
  EXPECT_NE(no.module_text.find("cosine"), std::string::npos);
  // Both chosen: the first wins.
  EXPECT_EQ(ApplyValid(*pass, c, {2, 3}).module_text, yes.module_text);
}

TEST(InlineCallsTest, WhileRemovedOrBodyOnce) {
  auto pass = PassNamed("inline-calls");
  hlo_diff::Case c = CaseOf(kControl);
  hlo_diff::Case removed = ApplyValid(*pass, c, {0});
  EXPECT_EQ(removed.module_text.find("while"), std::string::npos);
  EXPECT_EQ(removed.module_text.find("%body"), std::string::npos);
  hlo_diff::Case once = ApplyValid(*pass, c, {1});
  EXPECT_EQ(once.module_text.find("while"), std::string::npos);
  EXPECT_NE(once.module_text.find("add(f32[2]"), std::string::npos)
      << once.module_text;
  EXPECT_LT(MeasureCase(removed).instructions, MeasureCase(once).instructions);
  EXPECT_EQ(testing::Apply(*pass, c, {1, 2})->module_text,
            testing::Apply(*pass, c, {1, 2})->module_text);
}

TEST(InlineCallsTest, GreedyLeavesTheOpcodeAlone) {
  std::vector<std::unique_ptr<ReductionPass>> passes;
  passes.push_back(PassNamed("inline-calls"));
  passes.push_back(PassNamed("remove-instructions"));
  hlo_diff::Case out = testing::GreedyReduce(
      passes, CaseOf(kControl),
      [](const hlo_diff::Case& c) { return testing::HasOpcode(c, "cosine"); });
  EXPECT_TRUE(testing::HasOpcode(out, "cosine"));
  EXPECT_LE(MeasureCase(out).instructions, 2) << out.module_text;
}

}  // namespace
}  // namespace trench::hlo_reduce
