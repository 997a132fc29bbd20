// Buffer assignment: liveness, reuse of dead buffers, in-place updates,
// the values that must never be shared, and the bisection hooks.
#include "compiler/passes/buffer_assignment.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "compiler/passes/pass_registry.h"
#include "compiler/passes/pipeline.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

// A chain of same-shape elementwise ops; `a` is used again by `d`.
constexpr char kChain[] = R"(
HloModule chain
ENTRY e {
  a = f32[64,64] parameter(0)
  b = f32[64,64] exponential(a)
  c = f32[64,64] negate(b)
  d = f32[64,64] add(c, a)
  f = f32[64,64] sine(d)
  g = f32[64,64] cosine(f)
  ROOT h = f32[64,64] tanh(g)
}
)";

constexpr int64_t kBytes = 64 * 64 * 4;

struct Fixture {
  std::unique_ptr<HloModule> m;
  std::vector<HloInstruction*> order;
  const HloComputation* entry = nullptr;
};

Fixture Load(const char* text) {
  Fixture f;
  f.m = testing::Parse(text);
  if (f.m == nullptr) return f;
  f.entry = f.m->entry_computation();
  f.order = f.entry->MakeInstructionPostOrder();
  return f;
}

BufferAssignmentOptions NoInPlace(PassContext* ctx = nullptr) {
  BufferAssignmentOptions o;
  o.ctx = ctx;
  o.may_write_over = [](const HloInstruction&, int64_t) { return false; };
  return o;
}

const LogicalValue& ValueOf(const BufferAssignment& a, const HloModule& m,
                            const std::string& name, int k = 0) {
  const HloInstruction* i = testing::Find(m, name);
  EXPECT_NE(i, nullptr) << name;
  return a.values.at(a.leaves.at(i).at(k));
}

int64_t Position(const Fixture& f, const std::string& name) {
  for (size_t p = 0; p < f.order.size(); ++p) {
    if (f.order[p]->name() == name) return static_cast<int64_t>(p);
  }
  return -100;
}

TEST(BufferAssignmentTest, LiveRangesFollowUses) {
  Fixture f = Load(kChain);
  ASSERT_NE(f.m, nullptr);
  auto a = AssignBuffers(*f.entry, f.order, {}, NoInPlace());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->end, static_cast<int64_t>(f.order.size()));
  const LogicalValue& b = ValueOf(*a, *f.m, "b");
  EXPECT_EQ(b.kind, ValueKind::kTemp);
  EXPECT_EQ(b.def, Position(f, "b"));
  EXPECT_EQ(b.last_use, Position(f, "c"));
  EXPECT_EQ(b.bytes, kBytes);
  const LogicalValue& pa = ValueOf(*a, *f.m, "a");
  EXPECT_EQ(pa.kind, ValueKind::kInput);
  EXPECT_EQ(pa.input_index, 0);
  EXPECT_EQ(pa.last_use, Position(f, "d"));
  EXPECT_EQ(ValueOf(*a, *f.m, "h").last_use, a->end);  // The output.
}

TEST(BufferAssignmentTest, ChainReusesDeadBuffers) {
  Fixture f = Load(kChain);
  ASSERT_NE(f.m, nullptr);
  auto a = AssignBuffers(*f.entry, f.order, {}, NoInPlace());
  ASSERT_TRUE(a.ok());
  // Without in-place, a chain needs two buffers that alternate.
  EXPECT_EQ(a->stats.temp_values, 6);
  EXPECT_EQ(a->stats.temp_buffers, 2);
  EXPECT_EQ(a->stats.reused, 4);
  EXPECT_EQ(a->stats.in_place, 0);
  EXPECT_EQ(a->stats.bytes_unshared, 6 * kBytes);
  EXPECT_EQ(a->stats.bytes_saved(), 4 * kBytes);
  // A value never shares a buffer with a value it reads.
  EXPECT_NE(ValueOf(*a, *f.m, "b").buffer, ValueOf(*a, *f.m, "c").buffer);
  EXPECT_EQ(ValueOf(*a, *f.m, "b").buffer, ValueOf(*a, *f.m, "d").buffer);
  // Live ranges of values sharing a buffer never overlap.
  for (const AssignedBuffer& buf : a->buffers) {
    for (size_t i = 1; i < buf.values.size(); ++i) {
      const LogicalValue& prev = a->values[buf.values[i - 1]];
      const LogicalValue& next = a->values[buf.values[i]];
      EXPECT_LT(prev.last_use, next.def);
    }
  }
}

TEST(BufferAssignmentTest, ElementwiseChainRunsInPlace) {
  Fixture f = Load(kChain);
  ASSERT_NE(f.m, nullptr);
  auto a = AssignBuffers(*f.entry, f.order, {}, {});
  ASSERT_TRUE(a.ok());
  // b over nothing (its operand is an input); c over b; d over c (a is an
  // input); f over d, g over f, h over g.
  EXPECT_EQ(a->stats.in_place, 5);
  EXPECT_EQ(a->stats.temp_buffers, 1);
  EXPECT_EQ(ValueOf(*a, *f.m, "h").buffer, ValueOf(*a, *f.m, "b").buffer);
  EXPECT_NE(ValueOf(*a, *f.m, "b").buffer, ValueOf(*a, *f.m, "a").buffer);
}

TEST(BufferAssignmentTest, InPlaceOnlyWhereTheOperandDiesAndShapesMatch) {
  Fixture f = Load(R"(
HloModule m
ENTRY e {
  p = f32[32] parameter(0)
  i = s32[] parameter(1)
  x = f32[32] exponential(p)
  y = f32[32] negate(x)
  c = pred[32] compare(y, x), direction=LT
  u = f32[4] slice(y), slice={[0:4]}
  z = f32[32] dynamic-update-slice(y, u, i)
  w = f32[32] add(z, z)
  v = f32[32] convert(c)
  ROOT t = (f32[32], f32[32]) tuple(w, v)
}
)");
  ASSERT_NE(f.m, nullptr);
  auto a = AssignBuffers(*f.entry, f.order, {}, {});
  ASSERT_TRUE(a.ok());
  // y: x is still read by c; c: pred differs; z over y (y dies at z, and
  // the update u is another buffer); w over z (z twice is fine for an
  // elementwise op); v: a convert from pred to f32 changes the dtype.
  EXPECT_NE(ValueOf(*a, *f.m, "y").buffer, ValueOf(*a, *f.m, "x").buffer);
  EXPECT_EQ(ValueOf(*a, *f.m, "z").buffer, ValueOf(*a, *f.m, "y").buffer);
  EXPECT_EQ(ValueOf(*a, *f.m, "w").buffer, ValueOf(*a, *f.m, "z").buffer);
  EXPECT_EQ(a->stats.in_place, 2);
}

TEST(BufferAssignmentTest, OutputsInputsConstantsAndTapsAreNeverShared) {
  Fixture f = Load(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  k = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(p, k)
  b = f32[4] exponential(a)
  c = f32[4] negate(b)
  d = f32[4] sine(c)
  o = f32[4] cosine(d)
  q = f32[4] tanh(o)
  ROOT t = (f32[4], f32[4]) tuple(o, q)
}
)");
  ASSERT_NE(f.m, nullptr);
  const HloInstruction* tapped = testing::Find(*f.m, "b");
  auto a = AssignBuffers(*f.entry, f.order, {tapped}, NoInPlace());
  ASSERT_TRUE(a.ok());
  for (const AssignedBuffer& buf : a->buffers) {
    if (buf.kind != ValueKind::kTemp) {
      EXPECT_EQ(buf.values.size(), 1u);
    }
  }
  for (const char* name : {"b", "o", "q"}) {
    const LogicalValue& v = ValueOf(*a, *f.m, name);
    EXPECT_EQ(v.last_use, a->end) << name;
    // Nothing is defined in its buffer after it.
    EXPECT_EQ(a->buffers[v.buffer].values.back(),
              a->leaves.at(testing::Find(*f.m, name))[0])
        << name;
  }
  EXPECT_GT(a->stats.reused, 0);
}

TEST(BufferAssignmentTest, ReusesEqualOrLargerBuffersBestFit) {
  Fixture f = Load(R"(
HloModule m
ENTRY e {
  p = f32[1024] parameter(0)
  big = f32[1024] exponential(p)
  small = f32[16] slice(big), slice={[0:16]}
  s2 = f32[16] exponential(small)
  big2 = f32[64,16] broadcast(s2), dimensions={1}
  ROOT r = f32[64,16] add(big2, big2)
}
)");
  ASSERT_NE(f.m, nullptr);
  auto a = AssignBuffers(*f.entry, f.order, {}, NoInPlace());
  ASSERT_TRUE(a.ok());
  // big dies at small; s2 (64 bytes) takes big's 4 KiB buffer; big2
  // cannot use small's 64-byte buffer after small dies.
  EXPECT_EQ(ValueOf(*a, *f.m, "s2").buffer, ValueOf(*a, *f.m, "big").buffer);
  EXPECT_NE(ValueOf(*a, *f.m, "big2").buffer,
            ValueOf(*a, *f.m, "small").buffer);
}

TEST(BufferAssignmentTest, TupleLeavesGetDistinctBuffersAndLeafNames) {
  Fixture f = Load(R"(
HloModule m
body {
  p = (f32[8], f32[8]) parameter(0)
  x = f32[8] get-tuple-element(p), index=0
  y = f32[8] get-tuple-element(p), index=1
  ROOT t = (f32[8], f32[8]) tuple(y, x)
}
cond {
  p = (f32[8], f32[8]) parameter(0)
  ROOT f = pred[] constant(false)
}
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] exponential(a)
  c = f32[8] negate(b)
  t = (f32[8], f32[8]) tuple(a, c)
  w = (f32[8], f32[8]) while(t), condition=cond, body=body
  x = f32[8] get-tuple-element(w), index=0
  ROOT y = f32[8] sine(x)
}
)");
  ASSERT_NE(f.m, nullptr);
  PassContext ctx;
  auto a = AssignBuffers(*f.entry, f.order, {}, NoInPlace(&ctx));
  ASSERT_TRUE(a.ok());
  const LogicalValue& w0 = ValueOf(*a, *f.m, "w", 0);
  const LogicalValue& w1 = ValueOf(*a, *f.m, "w", 1);
  EXPECT_NE(w0.buffer, w1.buffer);
  // The while reads c, so c's buffer is not free for its state.
  EXPECT_NE(w0.buffer, ValueOf(*a, *f.m, "c").buffer);
  EXPECT_NE(w1.buffer, ValueOf(*a, *f.m, "c").buffer);
  // w#0 took b's dead buffer (a decision named after the leaf).
  std::set<std::string> names;
  for (const RewriteDecision& d : ctx.decisions()) names.insert(d.instruction);
  EXPECT_TRUE(names.count("w#0")) << ctx.decisions().size();
}

TEST(BufferAssignmentTest, RewriteLimitStopsDecisions) {
  for (int64_t limit = 0; limit <= 4; ++limit) {
    Fixture f = Load(kChain);
    ASSERT_NE(f.m, nullptr);
    PassContext ctx(limit);
    auto a = AssignBuffers(*f.entry, f.order, {}, NoInPlace(&ctx));
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->stats.reused, limit);
    EXPECT_EQ(ctx.rewrites_allowed(), limit);
    EXPECT_EQ(a->stats.temp_buffers, 6 - limit >= 2 ? 6 - limit : 2);
    for (const RewriteDecision& d : ctx.decisions()) {
      EXPECT_EQ(d.pass, "buffer-assignment");
      EXPECT_EQ(d.site, "reuse");
    }
    if (limit > 0) {
      ASSERT_NE(ctx.LastAllowed(), nullptr);
      EXPECT_EQ(ctx.LastAllowed()->instruction,
                std::vector<std::string>({"d", "f", "g", "h"})[limit - 1]);
    }
  }
  // In-place decisions are decisions too.
  Fixture f = Load(kChain);
  ASSERT_NE(f.m, nullptr);
  PassContext ctx(2);
  BufferAssignmentOptions o;
  o.ctx = &ctx;
  auto a = AssignBuffers(*f.entry, f.order, {}, o);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->stats.in_place + a->stats.reused, 2);
  ASSERT_FALSE(ctx.decisions().empty());
  EXPECT_EQ(ctx.decisions()[0].site, "in-place");
  EXPECT_EQ(ctx.decisions()[0].instruction, "c");
}

TEST(BufferAssignmentTest, DisabledSharesNothingAndAsksNothing) {
  Fixture f = Load(kChain);
  ASSERT_NE(f.m, nullptr);
  PassContext ctx;
  BufferAssignmentOptions o;
  o.enabled = false;
  o.ctx = &ctx;
  auto a = AssignBuffers(*f.entry, f.order, {}, o);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(ctx.decisions().empty());
  EXPECT_EQ(a->stats.temp_buffers, a->stats.temp_values);
  EXPECT_EQ(a->stats.bytes_saved(), 0);
  EXPECT_EQ(a->stats.reused + a->stats.in_place, 0);
  std::set<int> seen;
  for (const LogicalValue& v : a->values) {
    EXPECT_TRUE(seen.insert(v.buffer).second);
  }
}

TEST(BufferAssignmentTest, RejectsABadSchedule) {
  Fixture f = Load(kChain);
  ASSERT_NE(f.m, nullptr);
  std::vector<HloInstruction*> reversed(f.order.rbegin(), f.order.rend());
  auto a = AssignBuffers(*f.entry, reversed, {}, {});
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  std::vector<HloInstruction*> partial(f.order.begin(), f.order.end() - 1);
  EXPECT_FALSE(AssignBuffers(*f.entry, partial, {}, {}).ok());
}

TEST(BufferAssignmentTest, RegisteredForCodegenNotForThePipeline) {
  const PassInfo* info = FindPass("buffer-assignment");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->stage, PassStage::kCodegen);
  auto list = ParsePassList("dce,buffer-assignment");
  ASSERT_TRUE(list.ok());
  Fixture f = Load(kChain);
  ASSERT_NE(f.m, nullptr);
  PipelineOptions po;
  po.disabled_passes = {"buffer-assignment"};
  auto pipeline = PassPipeline::CreateDefault(po);
  PassContext ctx = pipeline->MakeContext();
  ASSERT_TRUE(pipeline->Run(f.m.get(), &ctx).ok());
  for (const PassRunStats& s : pipeline->stats()) {
    EXPECT_NE(s.pass, "buffer-assignment");
  }
  // Run as a pass: an analysis that logs and changes nothing.
  BufferAssignmentPass pass;
  PassContext pctx;
  EXPECT_FALSE(testing::RunPass(pass, f.m.get(), &pctx));
  ASSERT_FALSE(pctx.log().empty());
  EXPECT_NE(pctx.log().back().find("bytes saved"), std::string::npos);
}

}  // namespace
}  // namespace trench
