// Fused kernels (emit_fusion*.cc) against the oracle: modules are fused by
// the fusion pass (or written as fusions), compiled, run on the simulator
// and compared with the oracle's values of the unfused module; taps inside
// fusions equal the oracle's values of those instructions.
#include "compiler/passes/fusion.h"

#include <string>

#include "compiler/codegen/buffer_plan.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

constexpr char kSum[] = R"(
sum {
  sx = f32[] parameter(0)
  sy = f32[] parameter(1)
  ROOT sxy = f32[] add(sx, sy)
}
)";

int CountFusions(const HloModule& m, FusionKind kind) {
  int n = 0;
  for (const HloInstruction* i : m.entry_computation()->instructions()) {
    n += i->opcode() == HloOpcode::kFusion && i->attrs().fusion_kind == kind;
  }
  return n;
}

// Fuses `text`, expects `fusions` fusions of `kind`, compiles and runs the
// fused module and compares it with the oracle on the unfused one.
void ExpectFusedMatchesOracle(const std::string& text, FusionKind kind,
                              int fusions, uint64_t seed,
                              const ComparisonOptions& options = {}) {
  SCOPED_TRACE(text);
  std::unique_ptr<HloModule> original = testing::Parse(text);
  ASSERT_NE(original, nullptr);
  std::unique_ptr<HloModule> m = original->Clone();
  PassContext ctx;
  auto changed = FusionPass().Run(m.get(), &ctx);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  ASSERT_TRUE(VerifyModule(*m).ok());
  EXPECT_EQ(CountFusions(*m, kind), fusions);
  std::vector<Literal> args =
      RandomArguments(*original->entry_computation(), seed);
  auto expected = Evaluate(*original, args);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  auto exe = CompileModule(*m, CompileOptions());
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  tpu::RunResult r = testing::Run(*exe, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk)
      << r.report.message << " at " << r.report.kernel << ": "
      << r.report.instruction;
  std::vector<Literal> leaves;
  for (const tpu::OutputBuffer& b : r.outputs) {
    leaves.push_back(testing::ToLiteral(b));
  }
  Literal actual = expected->shape().IsTuple()
                       ? Literal::Tuple(std::move(leaves))
                       : std::move(leaves.at(0));
  ComparisonResult c = CompareLiterals(actual, *expected, options);
  EXPECT_TRUE(c.ok()) << c.ToText();
}

TEST(FusionCodegenTest, LoopF32RaggedWithBroadcastsAndConstants) {
  ExpectFusedMatchesOracle(R"(
HloModule m
ENTRY e {
  a = f32[9,130] parameter(0)
  b = f32[130] parameter(1)
  c = f32[] constant(0.5)
  cb = f32[9,130] broadcast(c), dimensions={}
  bb = f32[9,130] broadcast(b), dimensions={1}
  x = f32[9,130] multiply(a, cb)
  y = f32[9,130] add(x, bb)
  ROOT z = f32[9,130] tanh(y)
}
)",
                           FusionKind::kLoop, 1, 1, testing::F32Ulps(4));
}

TEST(FusionCodegenTest, LoopBf16AndConverts) {
  ExpectFusedMatchesOracle(R"(
HloModule m
ENTRY e {
  a = bf16[3,700] parameter(0)
  b = bf16[3,700] parameter(1)
  x = bf16[3,700] add(a, b)
  y = bf16[3,700] multiply(x, a)
  f = f32[3,700] convert(y)
  ROOT z = f32[3,700] exponential(f)
}
)",
                           FusionKind::kLoop, 1, 2, testing::F32Ulps(4));
}

TEST(FusionCodegenTest, LoopS32AndPredWithIota) {
  ExpectFusedMatchesOracle(R"(
HloModule m
ENTRY e {
  a = s32[5,257] parameter(0)
  b = s32[5,257] parameter(1)
  i = s32[5,257] iota(), iota_dimension=1
  x = s32[5,257] add(a, i)
  p = pred[5,257] compare(x, b), direction=GT
  y = s32[5,257] multiply(x, b)
  ROOT z = s32[5,257] select(p, y, a)
}
)",
                           FusionKind::kLoop, 1, 3);
}

TEST(FusionCodegenTest, LoopTransposedAndSlicedParameters) {
  ExpectFusedMatchesOracle(R"(
HloModule m
ENTRY e {
  a = f32[40,30] parameter(0)
  b = f32[30,50] parameter(1)
  t = f32[30,40] transpose(a), dimensions={1,0}
  s = f32[30,40] slice(b), slice={[0:30], [3:43]}
  x = f32[30,40] subtract(t, s)
  r = f32[1200] reshape(x)
  ROOT z = f32[1200] abs(r)
}
)",
                           FusionKind::kLoop, 1, 4);
}

TEST(FusionCodegenTest, LoopF64) {
  ExpectFusedMatchesOracle(R"(
HloModule m
ENTRY e {
  a = f64[1030] parameter(0)
  b = f64[1030] parameter(1)
  x = f64[1030] multiply(a, b)
  ROOT y = f64[1030] add(x, a)
}
)",
                           FusionKind::kLoop, 1, 5);
}

TEST(FusionCodegenTest, InputReduceWithProducers) {
  ComparisonOptions tol;
  tol.f32 = {1e-4, 1e-5};
  ExpectFusedMatchesOracle(std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  a = f32[13,300] parameter(0)
  b = f32[13,300] parameter(1)
  d = f32[13,300] subtract(a, b)
  s = f32[13,300] multiply(d, d)
  z = f32[] constant(0)
  ROOT r = f32[13] reduce(s, z), dimensions={1}, to_apply=sum
}
)",
                           FusionKind::kInput, 1, 6, tol);
}

TEST(FusionCodegenTest, InputReduceOverLeadingDimension) {
  ExpectFusedMatchesOracle(R"(
HloModule m
mx {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] maximum(x, y)
}
ENTRY e {
  a = s32[7,3,150] parameter(0)
  init = s32[] parameter(1)
  n = s32[7,3,150] negate(a)
  ROOT r = s32[3,150] reduce(n, init), dimensions={0}, to_apply=mx
}
)",
                           FusionKind::kInput, 1, 7);
}

TEST(FusionCodegenTest, OutputDotEpilogueHighest) {
  // Inputs in [-4, 4): HIGHEST is f32-level relative to 16 K.
  ComparisonOptions tol;
  tol.f32 = {2e-6 * 16 * 70, 0};
  ExpectFusedMatchesOracle(R"(
HloModule m
ENTRY e {
  a = f32[20,70] parameter(0)
  w = f32[70,33] parameter(1)
  bias = f32[33] parameter(2)
  d = f32[20,33] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={HIGHEST,HIGHEST}
  bb = f32[20,33] broadcast(bias), dimensions={1}
  y = f32[20,33] add(d, bb)
  z = f32[] constant(0)
  zb = f32[20,33] broadcast(z), dimensions={}
  ROOT r = f32[20,33] maximum(y, zb)
}
)",
                           FusionKind::kOutput, 1, 8, tol);
}

TEST(FusionCodegenTest, OutputDotEpilogueBf16TransposedLhs) {
  // bf16 products are exact in one pass; the f32 sums differ in order.
  ComparisonOptions tol;
  tol.f32 = {1e-4 * 16 * 130, 0};
  ExpectFusedMatchesOracle(R"(
HloModule m
ENTRY e {
  a = bf16[130,9] parameter(0)
  w = bf16[130,140] parameter(1)
  d = f32[9,140] dot(a, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = f32[9,140] tanh(d)
}
)",
                           FusionKind::kOutput, 1, 13, tol);
}

TEST(FusionCodegenTest, MultiOutputSiblings) {
  ExpectFusedMatchesOracle(R"(
HloModule m
ENTRY e {
  a = f32[1500] parameter(0)
  b = f32[1500] parameter(1)
  x = f32[1500] add(a, b)
  y = f32[1500] multiply(a, b)
  ROOT t = (f32[1500], f32[1500]) tuple(x, y)
}
)",
                           FusionKind::kLoop, 1, 9);
}

TEST(FusionCodegenTest, MultiOutputReduceAndElementwise) {
  ComparisonOptions tol;
  tol.f32 = {1e-4, 1e-5};
  ExpectFusedMatchesOracle(std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  a = f32[9,200] parameter(0)
  b = f32[9,200] parameter(1)
  x = f32[9,200] exponential(a)
  z = f32[] constant(0)
  r = f32[9] reduce(x, z), dimensions={1}, to_apply=sum
  y = f32[9,200] multiply(x, b)
  ROOT t = (f32[9], f32[9,200]) tuple(r, y)
}
)",
                           FusionKind::kInput, 1, 10, tol);
}

// A fusion written directly (as XLA prints it), with taps inside it.
constexpr char kTapped[] = R"(
HloModule tapped
fused_computation {
  p0 = f32[9,129] parameter(0)
  p1 = f32[129] parameter(1)
  b = f32[9,129] broadcast(p1), dimensions={1}
  e = f32[9,129] exponential(p0)
  m = f32[9,129] multiply(e, b)
  ROOT n = f32[9,129] negate(m)
}
ENTRY main {
  a = f32[9,129] parameter(0)
  v = f32[129] parameter(1)
  ROOT f = f32[9,129] fusion(a, v), kind=kLoop, calls=fused_computation
}
)";

TEST(FusionCodegenTest, TapsInsideFusionEqualOracleValues) {
  auto m = testing::Parse(kTapped);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), 11);
  std::vector<std::string> names = {"e", "m", "b", "n", "p1"};
  auto expected = EvaluateWithTaps(*m, args, names);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  CompileOptions options;
  options.taps = names;
  auto exe = CompileModule(*m, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  tpu::RunResult r = testing::Run(*exe, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
  ASSERT_EQ(r.taps.size(), names.size());
  for (const tpu::OutputBuffer& tap : r.taps) {
    const Literal* want = nullptr;
    for (const auto& [name, lit] : expected->taps) {
      if (name == tap.label) want = &lit;
    }
    ASSERT_NE(want, nullptr) << tap.label;
    ComparisonResult c =
        CompareLiterals(testing::ToLiteral(tap), *want, testing::F32Ulps(4));
    EXPECT_TRUE(c.ok()) << tap.label << ": " << c.ToText();
  }
}

TEST(FusionCodegenTest, TapsInsideReduceFusionAfterThePass) {
  const std::string text = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  a = f32[6,140] parameter(0)
  x = f32[6,140] exponential(a)
  s = f32[6,140] multiply(x, a)
  z = f32[] constant(0)
  ROOT r = f32[6] reduce(s, z), dimensions={1}, to_apply=sum
}
)";
  auto original = testing::Parse(text);
  ASSERT_NE(original, nullptr);
  auto m = original->Clone();
  PassContext ctx;
  ASSERT_TRUE(FusionPass().Run(m.get(), &ctx).ok());
  ASSERT_EQ(CountFusions(*m, FusionKind::kInput), 1);
  std::vector<Literal> args =
      RandomArguments(*original->entry_computation(), 12);
  CompileOptions options;
  options.taps_all = true;
  auto exe = CompileModule(*m, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  tpu::RunResult r = testing::Run(*exe, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
  std::vector<std::string> names = {"x", "s", "r"};
  auto expected = EvaluateWithTaps(*original, args, names);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  ComparisonOptions tol;
  tol.f32 = {1e-4, 1e-5};
  int found = 0;
  for (const tpu::OutputBuffer& tap : r.taps) {
    for (const auto& [name, lit] : expected->taps) {
      if (name != tap.label) continue;
      ++found;
      ComparisonResult c = CompareLiterals(testing::ToLiteral(tap), lit, tol);
      EXPECT_TRUE(c.ok()) << name << ": " << c.ToText();
    }
  }
  EXPECT_EQ(found, 3);
}

TEST(FusionCodegenTest, DefaultPipelineFusesAndRewriteLimitNamesFusions) {
  const std::string text = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  a = f32[12,260] parameter(0)
  b = f32[260] parameter(1)
  bb = f32[12,260] broadcast(b), dimensions={1}
  x = f32[12,260] multiply(a, bb)
  y = f32[12,260] exponential(x)
  ny = f32[12,260] negate(y)
  z = f32[] constant(0)
  r = f32[12] reduce(ny, z), dimensions={1}, to_apply=sum
  ROOT t = (f32[12], f32[12,260]) tuple(r, y)
}
)";
  auto m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), 14);
  auto expected = Evaluate(*m, args);
  ASSERT_TRUE(expected.ok());
  for (int64_t limit : {-1, 0}) {
    SCOPED_TRACE(limit);
    CompileOptions options;
    if (limit >= 0) options.rewrite_limit = limit;
    auto c = Compile(*m, options);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    const int fused = CountFusions(*c->optimized, FusionKind::kInput);
    EXPECT_EQ(fused, limit < 0 ? 1 : 0);
    bool asked = false;
    for (const RewriteDecision& d : c->decisions) asked |= d.pass == "fusion";
    EXPECT_EQ(asked, limit < 0 || fused == 0);
    tpu::RunResult r = testing::Run(c->executable, args);
    ASSERT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
    std::vector<Literal> leaves;
    for (const tpu::OutputBuffer& b : r.outputs) {
      leaves.push_back(testing::ToLiteral(b));
    }
    ComparisonOptions tol;
    tol.f32 = {1e-3, 1e-5};
    ComparisonResult cmp =
        CompareLiterals(Literal::Tuple(std::move(leaves)), *expected, tol);
    EXPECT_TRUE(cmp.ok()) << cmp.ToText();
  }
}

// A fused computation the fused-kernel emitter refuses (a sort) still
// compiles: it is emitted inline like a call (emit_inline.h).
TEST(FusionCodegenTest, RefusedFusedComputationRunsInline) {
  const std::string text = R"(
HloModule bad
lt {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT c = pred[] compare(p, q), direction=LT
}
fused_computation {
  p0 = f32[100] parameter(0)
  ROOT s = f32[100] sort(p0), dimensions={0}, to_apply=lt
}
ENTRY main {
  a = f32[100] parameter(0)
  ROOT f = f32[100] fusion(a), kind=kLoop, calls=fused_computation
}
)";
  auto m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(EmitsFusedKernel(*m->entry_computation()->root_instruction()));
  testing::ExpectMatchesOracle(text, 3, ComparisonOptions::Exact());
}

}  // namespace
}  // namespace trench::codegen
