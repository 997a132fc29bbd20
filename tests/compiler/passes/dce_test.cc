#include "compiler/passes/dce.h"

#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

using testing::Find;
using testing::Parse;
using testing::RunPass;

TEST(DceTest, RemovesDeadChainsKeepsLiveOnes) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  dead1 = f32[4] exponential(p)
  dead2 = f32[4] add(dead1, dead1)
  live = f32[4] negate(p)
  ROOT r = f32[4] multiply(live, p)
})");
  DeadCodeElimination dce;
  EXPECT_TRUE(RunPass(dce, m.get()));
  EXPECT_EQ(Find(*m, "dead1"), nullptr);
  EXPECT_EQ(Find(*m, "dead2"), nullptr);
  EXPECT_NE(Find(*m, "live"), nullptr);
  EXPECT_EQ(m->entry_computation()->instruction_count(), 3);
  EXPECT_FALSE(RunPass(dce, m.get()));
}

TEST(DceTest, KeepsParametersAndSideEffects) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p0 = f32[2] parameter(0)
  p1 = f32[2] parameter(1)
  cc = f32[2] custom-call(p0), custom_call_target="foo"
  t = token[] after-all()
  ROOT r = f32[2] negate(p0)
})");
  DeadCodeElimination dce;
  EXPECT_FALSE(RunPass(dce, m.get()));
  EXPECT_NE(Find(*m, "p1"), nullptr);
  EXPECT_NE(Find(*m, "cc"), nullptr);
}

TEST(DceTest, RemovesUnreachableComputations) {
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
  unused = f32[] reduce(p, z), dimensions={0}, to_apply=max_f
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add_f
})");
  DeadCodeElimination dce;
  EXPECT_TRUE(RunPass(dce, m.get()));
  EXPECT_EQ(m->computation_count(), 2);
  EXPECT_EQ(m->GetComputationWithName("max_f"), nullptr);
  EXPECT_NE(m->GetComputationWithName("add_f"), nullptr);
}

TEST(DceTest, RewriteLimitStopsAfterN) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  d1 = f32[4] exponential(p)
  d2 = f32[4] negate(p)
  d3 = f32[4] abs(p)
  ROOT r = f32[4] add(p, p)
})");
  DeadCodeElimination dce;
  PassContext ctx(2);
  EXPECT_TRUE(RunPass(dce, m.get(), &ctx));
  EXPECT_EQ(m->entry_computation()->instruction_count(), 3);
  ASSERT_EQ(ctx.decisions().size(), 3u);
  EXPECT_TRUE(ctx.decisions()[1].allowed);
  EXPECT_FALSE(ctx.decisions()[2].allowed);
  EXPECT_EQ(ctx.decisions()[2].site, "remove-dead-instruction");
  EXPECT_EQ(ctx.decisions()[2].pass, "dce");
  ASSERT_NE(ctx.LastAllowed(), nullptr);
  EXPECT_EQ(ctx.LastAllowed()->index, 1);
  // The one the limit kept is still there.
  EXPECT_NE(Find(*m, ctx.decisions()[2].instruction), nullptr);
}

TEST(DceTest, RewriteLimitZeroChangesNothing) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  d1 = f32[4] exponential(p)
  ROOT r = f32[4] add(p, p)
})");
  DeadCodeElimination dce;
  PassContext ctx(0);
  EXPECT_FALSE(RunPass(dce, m.get(), &ctx));
  EXPECT_EQ(ctx.rewrites_allowed(), 0);
}

}  // namespace
}  // namespace trench
