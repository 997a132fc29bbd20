// Fusions the pass forms under its VMEM budget (fusion_support.h counts
// streamed arrays as two chunks) compile and run at the default VMEM:
// an elementwise chain and a reduction over arrays of 9 MiB each, more
// than the fused kernel could stage whole, become one fusion through the
// whole compiler (Compile) and stream, agreeing with the oracle.
#include <string>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectCompiledMatchesOracle;
using testing::Parse;

// The number of fusions in the entry of the optimized module of `text`.
int FusionsAfterCompile(const std::string& text) {
  std::unique_ptr<HloModule> m = Parse(text);
  if (m == nullptr) return -1;
  auto c = Compile(*m, CompileOptions());
  if (!c.ok()) return -1;
  int n = 0;
  for (const HloInstruction* i :
       c->optimized->entry_computation()->instructions()) {
    n += i->opcode() == HloOpcode::kFusion;
  }
  return n;
}

constexpr char kChain[] = R"(
HloModule m
ENTRY e {
  p = f32[2048,1152] parameter(0)
  q = bf16[2048,1152] parameter(1)
  r = f32[2048,1152] parameter(2)
  wide = f32[2048,1152] convert(q)
  m = f32[2048,1152] maximum(p, wide)
  t = f32[2048,1152] tanh(m)
  ROOT out = f32[2048,1152] subtract(t, r)
}
)";

constexpr char kRowSums[] = R"(
HloModule m
sum {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  a = f32[2048,1152] parameter(0)
  b = f32[2048,1152] parameter(1)
  x = f32[2048,1152] multiply(a, b)
  zero = f32[] constant(0)
  ROOT r = f32[2048] reduce(x, zero), dimensions={1}, to_apply=sum
}
)";

TEST(StreamFusionBudgetTest, LargeChainFusesAndStreams) {
  EXPECT_EQ(FusionsAfterCompile(kChain), 1);
  ExpectCompiledMatchesOracle(kChain, 1, testing::F32Ulps(4));
}

TEST(StreamFusionBudgetTest, LargeReductionFusesAndStreams) {
  EXPECT_EQ(FusionsAfterCompile(kRowSums), 1);
  // Sums of 1152 products of values in [-4, 4) added in f32 (the oracle
  // adds in f64): a lost or doubled term is off by far more.
  ComparisonOptions o;
  o.f32 = {2e-5 * 1152, 1e-5};
  ExpectCompiledMatchesOracle(kRowSums, 2, o);
}

}  // namespace
}  // namespace trench::codegen
