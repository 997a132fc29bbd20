// The fusion pass: what fuses (kLoop, kInput, kOutput, multi-output), what
// does not, --rewrite-limit stopping fusion decisions, and the fused module
// evaluating (oracle) exactly like the unfused one.
#include "compiler/passes/fusion.h"

#include <gtest/gtest.h>

#include "compiler/passes/fusion_support.h"
#include "compiler/passes/pass_registry.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

using testing::ExpectEquivalent;
using testing::Find;
using testing::Parse;
using testing::Root;
using testing::RunPass;

constexpr char kSum[] = R"(
sum {
  sx = f32[] parameter(0)
  sy = f32[] parameter(1)
  ROOT sxy = f32[] add(sx, sy)
}
)";

// The fusion instructions of the entry computation.
std::vector<const HloInstruction*> Fusions(const HloModule& m) {
  std::vector<const HloInstruction*> out;
  for (const HloInstruction* i : m.entry_computation()->instructions()) {
    if (i->opcode() == HloOpcode::kFusion) out.push_back(i);
  }
  return out;
}

// Runs the pass on `text`; checks the result verifies, every fusion
// satisfies the shared predicate and the values are unchanged.
std::unique_ptr<HloModule> Fuse(const std::string& text, PassContext* ctx,
                                bool expect_change = true) {
  auto before = Parse(text);
  auto m = Parse(text);
  if (m == nullptr) return nullptr;
  FusionPass pass;
  EXPECT_EQ(RunPass(pass, m.get(), ctx), expect_change);
  for (const HloInstruction* f : Fusions(*m)) {
    auto spec = AnalyzeFusedComputation(*f->fused_computation());
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    if (spec.ok()) {
      EXPECT_EQ(spec->kind, f->attrs().fusion_kind);
    }
  }
  ExpectEquivalent(*before, *m, 4);
  return m;
}

std::unique_ptr<HloModule> Fuse(const std::string& text,
                                bool expect_change = true) {
  PassContext ctx;
  return Fuse(text, &ctx, expect_change);
}

TEST(FusionTest, LoopFusesElementwiseChainWithBroadcastAndConvert) {
  auto m = Fuse(R"(
HloModule m
ENTRY e {
  a = f32[9,130] parameter(0)
  b = bf16[130] parameter(1)
  c = f32[] constant(2)
  bc = f32[9,130] broadcast(c), dimensions={}
  cb = f32[130] convert(b)
  bb = f32[9,130] broadcast(cb), dimensions={1}
  x = f32[9,130] multiply(a, bc)
  y = f32[9,130] add(x, bb)
  ROOT z = f32[9,130] tanh(y)
}
)");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(Root(*m)->opcode(), HloOpcode::kFusion);
  EXPECT_EQ(Root(*m)->attrs().fusion_kind, FusionKind::kLoop);
  // The convert feeds a broadcast (a position mapping): it stays outside,
  // so it is not evaluated once per broadcast element.
  EXPECT_EQ(Find(*m, "cb")->parent(), m->entry_computation());
  EXPECT_EQ(Find(*m, "x")->parent(), Root(*m)->fused_computation());
  EXPECT_EQ(Find(*m, "bb")->parent(), Root(*m)->fused_computation());
  EXPECT_EQ(Fusions(*m).size(), 1u);
}

TEST(FusionTest, InputFusesReduceWithProducers) {
  auto m = Fuse(std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  a = f32[16,300] parameter(0)
  b = f32[16,300] parameter(1)
  d = f32[16,300] subtract(a, b)
  s = f32[16,300] multiply(d, d)
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(s, z), dimensions={1}, to_apply=sum
}
)");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(Root(*m)->opcode(), HloOpcode::kFusion);
  EXPECT_EQ(Root(*m)->attrs().fusion_kind, FusionKind::kInput);
  EXPECT_EQ(Root(*m)->operand_count(), 2);  // a, b (the init is fused).
}

TEST(FusionTest, OutputFusesDotEpilogue) {
  auto m = Fuse(R"(
HloModule m
ENTRY e {
  a = f32[20,70] parameter(0)
  w = f32[70,33] parameter(1)
  bias = f32[33] parameter(2)
  d = f32[20,33] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[20,33] broadcast(bias), dimensions={1}
  y = f32[20,33] add(d, bb)
  z = f32[] constant(0)
  zb = f32[20,33] broadcast(z), dimensions={}
  ROOT r = f32[20,33] maximum(y, zb)
}
)");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(Root(*m)->opcode(), HloOpcode::kFusion);
  EXPECT_EQ(Root(*m)->attrs().fusion_kind, FusionKind::kOutput);
  EXPECT_EQ(Find(*m, "d")->parent(), Root(*m)->fused_computation());
}

TEST(FusionTest, SiblingConsumersBecomeMultiOutput) {
  auto m = Fuse(R"(
HloModule m
ENTRY e {
  a = f32[300] parameter(0)
  b = f32[300] parameter(1)
  x = f32[300] add(a, b)
  y = f32[300] multiply(a, b)
  ROOT t = (f32[300], f32[300]) tuple(x, y)
}
)");
  ASSERT_NE(m, nullptr);
  auto fusions = Fusions(*m);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_TRUE(fusions[0]->shape().IsTuple());
  EXPECT_EQ(fusions[0]->fused_computation()->root_instruction()->opcode(),
            HloOpcode::kTuple);
  for (const HloInstruction* op : Root(*m)->operands()) {
    EXPECT_EQ(op->opcode(), HloOpcode::kGetTupleElement);
  }
}

TEST(FusionTest, ReduceAndElementwiseShareTheirProducer) {
  auto m = Fuse(std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  a = f32[8,200] parameter(0)
  b = f32[8,200] parameter(1)
  x = f32[8,200] exponential(a)
  z = f32[] constant(0)
  r = f32[8] reduce(x, z), dimensions={1}, to_apply=sum
  y = f32[8,200] multiply(x, b)
  ROOT t = (f32[8], f32[8,200]) tuple(r, y)
}
)");
  ASSERT_NE(m, nullptr);
  auto fusions = Fusions(*m);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->attrs().fusion_kind, FusionKind::kInput);
  // The shared exponential is computed once, inside the fusion.
  EXPECT_EQ(Find(*m, "x")->parent(), fusions[0]->fused_computation())
      << PrintHloModule(*m);
}

TEST(FusionTest, ExpensiveProducerWithOutsideUserIsNotDuplicated) {
  auto m = Fuse(R"(
HloModule m
ENTRY e {
  a = f32[64,128] parameter(0)
  x = f32[64,128] exponential(a)
  y = f32[64,128] negate(x)
  t = f32[128,64] transpose(x), dimensions={1,0}
  ROOT o = (f32[64,128], f32[128,64]) tuple(y, t)
}
)",
                /*expect_change=*/false);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Fusions(*m).size(), 0u);
  EXPECT_EQ(Find(*m, "x")->parent(), m->entry_computation());
}

// A reduce with only its constant init stays unfused (the unfused reduce
// folds across lanes; a fusion of the two gains nothing); a computed
// producer still fuses into it.
TEST(FusionTest, LoneReduceWithItsInitStaysUnfused) {
  const std::string lone = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  a = f32[4,3000] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(a, z), dimensions={1}, to_apply=sum
}
)";
  auto m = Fuse(lone, /*expect_change=*/false);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(Fusions(*m).empty());
  auto n = Fuse(std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  a = f32[4,3000] parameter(0)
  e = f32[4,3000] exponential(a)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(e, z), dimensions={1}, to_apply=sum
}
)");
  ASSERT_NE(n, nullptr);
  ASSERT_EQ(Fusions(*n).size(), 1u);
  EXPECT_EQ(Fusions(*n)[0]->attrs().fusion_kind, FusionKind::kInput);
}

TEST(FusionTest, UnfusibleOpsStayOutside) {
  auto m = Fuse(R"(
HloModule m
lt {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT c = pred[] compare(p, q), direction=LT
}
ENTRY e {
  a = f32[100] parameter(0)
  x = f32[100] exponential(a)
  s = f32[100] sort(x), dimensions={0}, to_apply=lt
  ROOT y = f32[100] negate(s)
}
)",
                /*expect_change=*/false);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Find(*m, "s")->parent(), m->entry_computation());
}

TEST(FusionTest, CheapBroadcastIsCopiedIntoEachConsumer) {
  auto m = Fuse(R"(
HloModule m
ENTRY e {
  a = f32[40,50] parameter(0)
  b = f32[50] parameter(1)
  bb = f32[40,50] broadcast(b), dimensions={1}
  x = f32[40,50] add(a, bb)
  t = f32[50,40] transpose(bb), dimensions={1,0}
  ROOT o = (f32[40,50], f32[50,40]) tuple(x, t)
}
)");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(Fusions(*m).size(), 1u);
  // bb stays for the transpose and a copy is fused into x's fusion.
  EXPECT_EQ(Find(*m, "bb")->parent(), m->entry_computation());
  EXPECT_EQ(Find(*m, "x")->parent(), Fusions(*m)[0]->fused_computation());
}

constexpr char kTwoFusions[] = R"(
HloModule m
sum {
  sx = f32[] parameter(0)
  sy = f32[] parameter(1)
  ROOT sxy = f32[] add(sx, sy)
}
ENTRY e {
  a = f32[16,64] parameter(0)
  w = f32[64,32] parameter(1)
  n = f32[16,64] negate(a)
  q = f32[16,64] multiply(n, n)
  z = f32[] constant(0)
  r = f32[16] reduce(q, z), dimensions={1}, to_apply=sum
  d = f32[16,32] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[16,32] exponential(d)
  ROOT t = (f32[16], f32[16,32]) tuple(r, e)
}
)";

TEST(FusionTest, RewriteLimitStopsFusionDecisions) {
  PassContext all;
  auto full = Fuse(kTwoFusions, &all);
  ASSERT_NE(full, nullptr);
  EXPECT_EQ(Fusions(*full).size(), 2u);
  std::vector<std::string> sites;
  for (const RewriteDecision& d : all.decisions()) {
    EXPECT_EQ(d.pass, "fusion");
    sites.push_back(d.site);
  }
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0], "output");  // Consumers first: e's fusion, then r's.
  EXPECT_EQ(sites[1], "input");
  EXPECT_EQ(all.decisions()[0].instruction, "e");

  PassContext none(0);
  auto unfused = Fuse(kTwoFusions, &none, /*expect_change=*/false);
  ASSERT_NE(unfused, nullptr);
  EXPECT_EQ(Fusions(*unfused).size(), 0u);

  PassContext one(1);
  auto partial = Fuse(kTwoFusions, &one);
  ASSERT_NE(partial, nullptr);
  ASSERT_EQ(Fusions(*partial).size(), 1u);
  EXPECT_EQ(Fusions(*partial)[0]->attrs().fusion_kind, FusionKind::kOutput);
  ASSERT_NE(one.LastAllowed(), nullptr);
  EXPECT_EQ(one.LastAllowed()->site, "output");
}

TEST(FusionTest, RegisteredAfterLayoutAssignment) {
  const auto& passes = RegisteredPasses();
  int layout = -1, fusion = -1;
  for (size_t i = 0; i < passes.size(); ++i) {
    if (passes[i].name == "layout-assignment") layout = static_cast<int>(i);
    if (passes[i].name == "fusion") fusion = static_cast<int>(i);
  }
  ASSERT_GE(fusion, 0);
  EXPECT_GT(fusion, layout);
  EXPECT_EQ(passes[fusion].stage, PassStage::kOnce);
}

TEST(FusionTest, RejectsComputedValueUnderBroadcast) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[50] parameter(0)
  x = f32[50] exponential(a)
  ROOT b = f32[40,50] broadcast(x), dimensions={1}
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* b = Root(*m);
  const HloInstruction* x = Find(*m, "x");
  EXPECT_FALSE(AnalyzeFusion({x, b}, {b}).ok());
  EXPECT_TRUE(AnalyzeFusion({b}, {b}).ok());
}

TEST(FusionTest, RandomElementwiseProgramsKeepTheirValues) {
  // Chains of mixed ops over a few parameters, fused and evaluated.
  const char* ops[] = {"add", "multiply", "subtract", "maximum", "minimum"};
  for (int seed = 0; seed < 6; ++seed) {
    std::string text = "HloModule r\nENTRY e {\n";
    text += "  p0 = f32[7,130] parameter(0)\n";
    text += "  p1 = f32[7,130] parameter(1)\n";
    text += "  p2 = f32[130] parameter(2)\n";
    text += "  v2 = f32[7,130] broadcast(p2), dimensions={1}\n";
    int n = 3;
    uint32_t s = 12345u + seed * 7919u;
    auto next = [&]() { return s = s * 1103515245u + 12345u, s >> 16; };
    std::vector<std::string> vals = {"p0", "p1", "v2"};
    for (int k = 0; k < 8; ++k) {
      std::string a = vals[next() % vals.size()];
      std::string b = vals[next() % vals.size()];
      std::string v = "v" + std::to_string(n++);
      text += "  " + v + " = f32[7,130] " + ops[next() % 5] + "(" + a + ", " +
              b + ")\n";
      vals.push_back(v);
    }
    text += "  ROOT out = f32[7,130] tanh(" + vals.back() + ")\n}\n";
    SCOPED_TRACE(text);
    auto m = Fuse(text);
    ASSERT_NE(m, nullptr);
    EXPECT_GE(Fusions(*m).size(), 1u);
  }
}

}  // namespace
}  // namespace trench
