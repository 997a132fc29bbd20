// Cross-check of the numerics contract (oracle/numerics_contract.h) with
// this project's compiler: the bug-free code generator's results on the
// simulator lie within the per-element bounds, for programs where the
// compiler legitimately differs from the oracle (fused bf16 chains, f32
// matmuls at each precision, long reductions, approximate transcendentals).
#include <gtest/gtest.h>

#include "oracle/numerics_contract.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::Parse;
using testing::ToLiteral;

// Compiles and runs `text` on RandomArguments(seed); expects the target's
// outputs within the contract's bounds. Returns the comparison.
ComparisonResult ExpectWithinBounds(const std::string& text, uint64_t seed) {
  SCOPED_TRACE(text);
  std::unique_ptr<HloModule> m = Parse(text);
  if (m == nullptr) return {};
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), seed);
  auto bounds = EvaluateWithBounds(*m, args);
  EXPECT_TRUE(bounds.ok()) << bounds.status().ToString();
  if (!bounds.ok()) return {};
  auto exe = CompileModule(*m, CompileOptions());
  EXPECT_TRUE(exe.ok()) << exe.status().ToString();
  if (!exe.ok()) return {};
  tpu::RunResult r = testing::Run(*exe, args);
  EXPECT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
  std::vector<Literal> leaves;
  for (const tpu::OutputBuffer& b : r.outputs) leaves.push_back(ToLiteral(b));
  EXPECT_FALSE(leaves.empty());
  if (leaves.empty()) return {};
  Literal actual = bounds->nominal.shape().IsTuple()
                       ? Literal::Tuple(std::move(leaves))
                       : std::move(leaves.at(0));
  ComparisonResult c = CompareWithBounds(actual, *bounds);
  EXPECT_TRUE(c.ok()) << c.ToText();
  // Not vacuous: most elements carry a finite allowance.
  for (const OutputComparison& o : c.outputs) {
    EXPECT_LT(o.undetermined_count, o.element_count / 2 + 1);
  }
  return c;
}

const char* kAdd =
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = "
    "f32[] add(a, b)\n}\n\n";

TEST(NumericsContractTargetTest, Bf16ElementwiseChain) {
  const std::string text =
      "HloModule m\n\nENTRY e {\n  x = bf16[9,130] parameter(0)\n  y = "
      "bf16[9,130] parameter(1)\n  a = bf16[9,130] multiply(x, y)\n  b = "
      "bf16[9,130] add(a, x)\n  c = bf16[9,130] multiply(b, y)\n  d = "
      "bf16[9,130] subtract(c, a)\n  t = bf16[9,130] tanh(d)\n  ROOT r = "
      "bf16[9,130] exponential(t)\n}\n";
  for (uint64_t seed = 1; seed <= 3; ++seed) ExpectWithinBounds(text, seed);
}

TEST(NumericsContractTargetTest, F32DotAtEachPrecision) {
  for (const char* p : {"default", "high", "highest"}) {
    const std::string text =
        std::string(
            "HloModule m\n\nENTRY e {\n  a = f32[16,200] "
            "parameter(0)\n  b = f32[200,24] parameter(1)\n  ROOT d = "
            "f32[16,24] dot(a, b), lhs_contracting_dims={1}, "
            "rhs_contracting_dims={0}, operand_precision={") +
        p + "," + p + "}\n}\n";
    ExpectWithinBounds(text, 7);
  }
}

TEST(NumericsContractTargetTest, LongReductionsAndTranscendentals) {
  ExpectWithinBounds(std::string("HloModule m\n\n") + kAdd +
                         "ENTRY e {\n  x = f32[5000] parameter(0)\n  z = f32[] "
                         "constant(0)\n  ROOT r = f32[] reduce(x, z), "
                         "dimensions={0}, to_apply=add\n}\n",
                     3);
  ExpectWithinBounds(
      std::string("HloModule m\n\n") + kAdd +
          "ENTRY e {\n  x = f32[37,300] parameter(0)\n  l = f32[37,300] "
          "log-plus-one(x)\n  s = f32[37,300] sine(l)\n  z = f32[] "
          "constant(0)\n  ROOT r = f32[37] reduce(s, z), dimensions={1}, "
          "to_apply=add\n}\n",
      4);
}

}  // namespace
}  // namespace trench::codegen
