// Fusions the fused-kernel emitter refuses (EmitsFusedKernel false, e.g.
// modules that arrive with multi-output fusions over bitcasts or tuple
// operands) still compile: the fused computation is planned like a call's
// and emitted inline instruction by instruction. Results and taps inside
// such fusions agree with the oracle, through the back end alone
// (CompileModule) and through the whole compiler (Compile).
#include <string>
#include <vector>

#include "compiler/codegen/buffer_plan.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

const HloInstruction* FindFusion(const HloModule& m, const std::string& name) {
  for (const HloComputation* c : m.computations()) {
    if (const HloInstruction* i = c->GetInstructionWithName(name)) return i;
  }
  return nullptr;
}

// XLA multioutput_fusion_test's MultiOutputLoopFusionBitcastCompatibleShapes,
// on ragged shapes.
constexpr char kBitcastMof[] = R"(
HloModule m
fused_computation {
  p = f32[9,130] parameter(0)
  multiply = f32[9,130] multiply(p, p)
  less-than = pred[9,130] compare(p, multiply), direction=LT
  bitcast = pred[1,1170] bitcast(less-than)
  ROOT tuple = (pred[1,1170], f32[9,130]) tuple(bitcast, multiply)
}
ENTRY e {
  p0 = f32[9,130] parameter(0)
  fusion = (pred[1,1170], f32[9,130]) fusion(p0), kind=kLoop,
      calls=fused_computation
  gte0 = pred[1,1170] get-tuple-element(fusion), index=0
  bitcast0 = pred[9,130] bitcast(gte0)
  gte1 = f32[9,130] get-tuple-element(fusion), index=1
  zero = f32[] constant(0)
  zeros = f32[9,130] broadcast(zero), dimensions={}
  ROOT select = f32[9,130] select(bitcast0, gte1, zeros)
}
)";

TEST(FusionFallbackTest, RefusedMultiOutputFusionRunsInline) {
  std::unique_ptr<HloModule> m = testing::Parse(kBitcastMof);
  ASSERT_NE(m, nullptr);
  const HloInstruction* f = FindFusion(*m, "fusion");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(EmitsFusedKernel(*f));
  EXPECT_TRUE(EmitsInline(*f));
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    testing::ExpectMatchesOracle(kBitcastMof, seed, ComparisonOptions::Exact());
    testing::ExpectCompiledMatchesOracle(kBitcastMof, seed,
                                         ComparisonOptions::Exact());
  }
}

TEST(FusionFallbackTest, AcceptedFusionIsOneKernel) {
  std::unique_ptr<HloModule> m = testing::Parse(R"(
HloModule m
fused {
  a = f32[9,130] parameter(0)
  b = f32[9,130] parameter(1)
  ROOT s = f32[9,130] add(a, b)
}
ENTRY e {
  x = f32[9,130] parameter(0)
  y = f32[9,130] parameter(1)
  ROOT f = f32[9,130] fusion(x, y), kind=kLoop, calls=fused
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* f = FindFusion(*m, "f");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(EmitsFusedKernel(*f));
  EXPECT_FALSE(EmitsInline(*f));
  EXPECT_FALSE(
      EmitsFusedKernel(*m->entry_computation()->parameter_instruction(0)));
}

// Taps inside a fusion emitted inline are its instructions' values.
TEST(FusionFallbackTest, TapsInsideInlinedFusion) {
  std::unique_ptr<HloModule> m = testing::Parse(kBitcastMof);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), 7);
  std::vector<std::string> names = {"multiply", "less-than", "bitcast",
                                    "tuple"};
  auto expected = EvaluateWithTaps(*m, args, names);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  CompileOptions options;
  options.taps = names;
  auto exe = CompileModule(*m, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  tpu::RunResult r = testing::Run(*exe, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
  ASSERT_EQ(r.taps.size(), 5u);  // The tuple's two leaves are two taps.
  auto want = [&](const std::string& name) -> const Literal* {
    for (const auto& [n, lit] : expected->taps) {
      if (n == name) return &lit;
    }
    return nullptr;
  };
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.taps[i].label, names[i]);
    const Literal* w = want(names[i]);
    ASSERT_NE(w, nullptr) << names[i];
    ComparisonResult c = CompareLiterals(testing::ToLiteral(r.taps[i]), *w,
                                         ComparisonOptions::Exact());
    EXPECT_TRUE(c.ok()) << names[i] << ": " << c.ToText();
  }
  const Literal* tuple = want("tuple");
  ASSERT_NE(tuple, nullptr);
  ASSERT_EQ(tuple->Leaves().size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(r.taps[3 + k].label, "tuple#" + std::to_string(k));
    ComparisonResult c =
        CompareLiterals(testing::ToLiteral(r.taps[3 + k]), *tuple->Leaves()[k],
                        ComparisonOptions::Exact());
    EXPECT_TRUE(c.ok()) << "tuple#" << k << ": " << c.ToText();
  }
  // taps_all covers the inlined fusion's instructions too.
  CompileOptions all;
  all.taps_all = true;
  auto exe_all = CompileModule(*m, all);
  ASSERT_TRUE(exe_all.ok()) << exe_all.status().ToString();
  tpu::RunResult ra = testing::Run(*exe_all, args);
  EXPECT_EQ(ra.report.status, tpu::RunStatus::kOk) << ra.report.message;
}

// A fusion taking a tuple operand (the fused-kernel emitter stages arrays
// only), inside a while body: planned through the while, emitted inline.
TEST(FusionFallbackTest, TupleOperandFusionInsideWhile) {
  const std::string text = R"(
HloModule m
fused {
  s = (s32[], f32[3,5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[3,5] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[3,5] multiply(x, x)
  ROOT r = (s32[], f32[3,5]) tuple(i1, x1)
}
cond {
  s = (s32[], f32[3,5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[3,5]) parameter(0)
  ROOT f = (s32[], f32[3,5]) fusion(s), kind=kLoop, calls=fused
}
ENTRY e {
  x = f32[3,5] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[3,5]) tuple(z, x)
  ROOT w = (s32[], f32[3,5]) while(init), condition=cond, body=body
}
)";
  std::unique_ptr<HloModule> m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  const HloInstruction* f = FindFusion(*m, "f");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(EmitsFusedKernel(*f));
  testing::ExpectMatchesOracle(text, 8, ComparisonOptions::Exact());
  testing::ExpectCompiledMatchesOracle(text, 8, ComparisonOptions::Exact());
}

// XLA multioutput_fusion_test's MultiOutputLoopFeedingMap: a multi-output
// fusion inside a map's to_apply (emitted lane-wise, vector_ops.h).
TEST(FusionFallbackTest, MultiOutputFusionInsideMap) {
  const std::string text = R"(
HloModule m
fused_computation {
  p = f32[] parameter(0)
  multiply = f32[] multiply(p, p)
  less-than = pred[] compare(p, multiply), direction=LT
  ROOT tuple = (pred[], f32[]) tuple(less-than, multiply)
}
map_computation {
  p0 = f32[] parameter(0)
  fusion = (pred[], f32[]) fusion(p0), kind=kLoop, calls=fused_computation
  gte0 = pred[] get-tuple-element(fusion), index=0
  gte1 = f32[] get-tuple-element(fusion), index=1
  const = f32[] constant(0)
  ROOT select = f32[] select(gte0, gte1, const)
}
ENTRY e {
  p1 = f32[9,130] parameter(0)
  ROOT map = f32[9,130] map(p1), to_apply=map_computation
}
)";
  testing::ExpectMatchesOracle(text, 10, ComparisonOptions::Exact());
  testing::ExpectCompiledMatchesOracle(text, 10, ComparisonOptions::Exact());
}

// The same fused computation called by two refused fusions: parameters get
// buffers of their own, bound by copies at each call.
TEST(FusionFallbackTest, SharedFusedComputationTwoCallSites) {
  const std::string text = R"(
HloModule m
fused {
  p = s32[4,33] parameter(0)
  q = s32[4,33] multiply(p, p)
  b = s32[132] bitcast(q)
  ROOT t = (s32[132], s32[4,33]) tuple(b, q)
}
ENTRY e {
  x = s32[4,33] parameter(0)
  f1 = (s32[132], s32[4,33]) fusion(x), kind=kLoop, calls=fused
  y = s32[4,33] get-tuple-element(f1), index=1
  f2 = (s32[132], s32[4,33]) fusion(y), kind=kLoop, calls=fused
  a = s32[132] get-tuple-element(f1), index=0
  b = s32[132] get-tuple-element(f2), index=0
  ROOT r = s32[132] subtract(b, a)
}
)";
  std::unique_ptr<HloModule> m = testing::Parse(text);
  if (m == nullptr) return;  // Parse() reported why.
  testing::ExpectMatchesOracle(text, 9, ComparisonOptions::Exact());
}

}  // namespace
}  // namespace trench::codegen
