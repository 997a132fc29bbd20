#include "compiler/passes/cse.h"

#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

using testing::Find;
using testing::Parse;
using testing::Root;
using testing::RunPass;

TEST(CseTest, MergesIdenticalExpressions) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4]{0} parameter(0)
  a1 = f32[4]{0} add(p, p)
  a2 = f32[4]{0} add(p, p)
  n1 = f32[4]{0} negate(a1)
  n2 = f32[4]{0} negate(a2)
  ROOT r = f32[4]{0} multiply(n1, n2)
})");
  auto before = m->Clone();
  CommonSubexpressionElimination cse;
  EXPECT_TRUE(RunPass(cse, m.get()));
  HloInstruction* r = Root(*m);
  EXPECT_EQ(r->operand(0), r->operand(1));
  EXPECT_EQ(r->operand(0)->name(), "n1");
  EXPECT_EQ(Find(*m, "a2"), nullptr);
  EXPECT_EQ(Find(*m, "n2"), nullptr);
  testing::ExpectEquivalent(*before, *m);
  EXPECT_FALSE(RunPass(cse, m.get()));
}

TEST(CseTest, MergesEqualConstants) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  c1 = s32[2] constant({1, 2})
  c2 = s32[2] constant({1, 2})
  c3 = s32[2] constant({1, 3})
  a = s32[2] add(c1, c2)
  ROOT r = s32[2] add(a, c3)
})");
  CommonSubexpressionElimination cse;
  EXPECT_TRUE(RunPass(cse, m.get()));
  EXPECT_EQ(Find(*m, "c2"), nullptr);
  EXPECT_NE(Find(*m, "c3"), nullptr);
}

TEST(CseTest, KeepsDifferentComparisonDirectionsAndTypes) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  lt = pred[4] compare(p, q), direction=LT
  gt = pred[4] compare(p, q), direction=GT
  lt2 = pred[4] compare(p, q), direction=LT, type=TOTALORDER
  o = pred[4] or(lt, gt)
  ROOT r = pred[4] or(o, lt2)
})");
  CommonSubexpressionElimination cse;
  EXPECT_FALSE(RunPass(cse, m.get()));
}

TEST(CseTest, KeepsDifferentLayoutsAndAttributes) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  c1 = f32[2,3]{1,0} copy(p)
  c2 = f32[2,3]{0,1} copy(p)
  t1 = f32[3,2]{1,0} transpose(c1), dimensions={1,0}
  s1 = f32[2,1]{1,0} slice(c1), slice={[0:2], [0:1]}
  s2 = f32[2,1]{1,0} slice(c1), slice={[0:2], [1:2]}
  ROOT r = (f32[2,3]{1,0}, f32[2,3]{0,1}, f32[3,2]{1,0}, f32[2,1]{1,0}, f32[2,1]{1,0}) tuple(c1, c2, t1, s1, s2)
})");
  CommonSubexpressionElimination cse;
  EXPECT_FALSE(RunPass(cse, m.get()));
}

TEST(CseTest, NeverMergesSideEffects) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  c1 = f32[2] custom-call(p), custom_call_target="foo"
  c2 = f32[2] custom-call(p), custom_call_target="foo"
  ROOT r = f32[2] add(c1, c2)
})");
  CommonSubexpressionElimination cse;
  EXPECT_FALSE(RunPass(cse, m.get()));
}

TEST(CseTest, DifferentCalledComputationsStayApart) {
  auto m = Parse(R"(
HloModule m
add_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  r1 = f32[] reduce(p, z), dimensions={0}, to_apply=add_f
  r2 = f32[] reduce(p, z), dimensions={0}, to_apply=max_f
  r3 = f32[] reduce(p, z), dimensions={0}, to_apply=add_f
  ROOT r = (f32[], f32[], f32[]) tuple(r1, r2, r3)
})");
  CommonSubexpressionElimination cse;
  EXPECT_TRUE(RunPass(cse, m.get()));
  EXPECT_EQ(Find(*m, "r3"), nullptr);
  EXPECT_NE(Find(*m, "r2"), nullptr);
  EXPECT_EQ(Root(*m)->operand(0), Root(*m)->operand(2));
}

TEST(CseTest, RewriteLimitIsHonored) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a1 = f32[4] negate(p)
  a2 = f32[4] negate(p)
  a3 = f32[4] negate(p)
  ROOT r = (f32[4], f32[4], f32[4]) tuple(a1, a2, a3)
})");
  CommonSubexpressionElimination cse;
  PassContext ctx(1);
  EXPECT_TRUE(RunPass(cse, m.get(), &ctx));
  EXPECT_EQ(m->entry_computation()->instruction_count(), 4);
  EXPECT_EQ(ctx.decisions().size(), 2u);
  EXPECT_EQ(ctx.decisions()[0].site, "merge-identical");
}

}  // namespace
}  // namespace trench
