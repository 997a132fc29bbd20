// Test helpers for streamed and tiled kernels: the oracle comparison of
// codegen_test_util.h with a chosen VMEM capacity (compiler and simulator
// alike), so tiling and streaming are exercised with modest shapes.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen::testing {

// The largest `.vmem` of the executable's kernels.
inline int64_t MaxKernelVmem(const tpu::Executable& exe) {
  int64_t v = 0;
  for (const tpu::Kernel& k : exe.kernels) v = std::max(v, k.vmem_bytes);
  return v;
}

// Compiles `text` with CompileModule and `vmem_bytes` of VMEM, runs it on
// a simulator with that capacity and RandomArguments(seed), and expects the
// oracle's values within `options`. Returns the run's cost report total
// (zeros on failure).
inline tpu::KernelStats ExpectMatchesOracleWithVmem(
    const std::string& text, uint64_t seed, const ComparisonOptions& options,
    int64_t vmem_bytes) {
  SCOPED_TRACE(text);
  std::unique_ptr<HloModule> m = Parse(text);
  if (m == nullptr) return {};
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), seed);
  auto expected = Evaluate(*m, args);
  EXPECT_TRUE(expected.ok()) << expected.status().ToString();
  if (!expected.ok()) return {};
  CompileOptions co;
  co.vmem_bytes = vmem_bytes;
  auto exe = CompileModule(*m, co);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString();
  if (!exe.ok()) return {};
  EXPECT_LE(MaxKernelVmem(*exe), vmem_bytes);
  tpu::SimOptions so;
  so.vmem_bytes = vmem_bytes;
  auto r = tpu::RunExecutable(*exe, InputBytes(args), so);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return {};
  EXPECT_EQ(r->report.status, tpu::RunStatus::kOk)
      << r->report.message << " at " << r->report.kernel << ": "
      << r->report.instruction;
  if (r->report.status != tpu::RunStatus::kOk) return {};
  std::vector<Literal> leaves;
  for (const tpu::OutputBuffer& b : r->outputs) leaves.push_back(ToLiteral(b));
  Literal actual = expected->shape().IsTuple()
                       ? Literal::Tuple(std::move(leaves))
                       : std::move(leaves.at(0));
  ComparisonResult c = CompareLiterals(actual, *expected, options);
  EXPECT_TRUE(c.ok()) << c.ToText();
  return r->report.cost.total;
}

// HLO lines defining `name` = `it``dims` parameter(`param`) times `k`
// (wrapping): random indices in [-8, 7] or [0, 15] spread over an operand
// dim of about 16 * k, past both ends for signed types.
inline std::string SpreadIndices(const std::string& name, const std::string& it,
                                 const std::string& dims, int param, int k) {
  const std::string t = it + dims;
  return "  " + name + "_p = " + t + " parameter(" + std::to_string(param) +
         ")\n  " + name + "_k = " + it + "[] constant(" + std::to_string(k) +
         ")\n  " + name + "_b = " + t + " broadcast(" + name +
         "_k), dimensions={}\n  " + name + " = " + t + " multiply(" + name +
         "_p, " + name + "_b)\n";
}

}  // namespace trench::codegen::testing
