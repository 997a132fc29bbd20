// Helpers for the collective emitters' tests: compile an SPMD module for a
// mesh, run it on a slice (tpu/slice.h) with per-device random inputs, and
// compare every device's outputs with the SPMD oracle (oracle/spmd.h).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/compile.h"
#include "oracle/comparator.h"
#include "oracle/spmd.h"
#include "tests/compiler/codegen/codegen_test_util.h"
#include "tpu/slice.h"

namespace trench::codegen::testing {

struct SpmdRun {
  std::vector<std::vector<Literal>> args;  // By device.
  tpu::SliceRunResult result;
};

// Compiles `m` for `mesh` (full pipeline or back end alone).
inline StatusOr<tpu::Executable> CompileForMesh(const HloModule& m,
                                                const DeviceMesh& mesh,
                                                bool full_pipeline,
                                                int64_t vmem_bytes = 0) {
  CompileOptions o;
  o.mesh = mesh;
  if (vmem_bytes > 0) o.vmem_bytes = vmem_bytes;
  if (!full_pipeline) return CompileModule(m, o);
  ASSIGN_OR_RETURN(Compilation c, Compile(m, o));
  return std::move(c.executable);
}

// Runs `exe` on a slice of mesh.size() chips, device d on
// RandomArguments(entry, seed + d).
inline SpmdRun RunOnSlice(const HloModule& m, const tpu::Executable& exe,
                          const DeviceMesh& mesh, uint64_t seed) {
  SpmdRun run;
  std::vector<std::vector<std::vector<uint8_t>>> bytes;
  for (int64_t d = 0; d < mesh.size(); ++d) {
    run.args.push_back(RandomArguments(*m.entry_computation(), seed + d));
    bytes.push_back(InputBytes(run.args.back()));
  }
  auto r = tpu::RunSliceExecutable(exe, bytes);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (r.ok()) run.result = std::move(r).value();
  return run;
}

// Compiles `text` for `mesh`, runs it and the oracle, and expects every
// device's outputs to match within `options`.
inline void ExpectSpmdMatchesOracle(const std::string& text,
                                    const DeviceMesh& mesh, uint64_t seed,
                                    const ComparisonOptions& options = {},
                                    bool full_pipeline = false,
                                    int64_t vmem_bytes = 0) {
  SCOPED_TRACE(text + "mesh " + std::to_string(mesh.replicas) + "x" +
               std::to_string(mesh.partitions));
  std::unique_ptr<HloModule> m = Parse(text);
  ASSERT_NE(m, nullptr);
  auto exe = CompileForMesh(*m, mesh, full_pipeline, vmem_bytes);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  EXPECT_EQ(exe->slice, mesh.size());
  SpmdRun run = RunOnSlice(*m, *exe, mesh, seed);
  const tpu::RunReport& rep = run.result.report;
  ASSERT_EQ(rep.status, tpu::RunStatus::kOk)
      << rep.message << " at " << rep.kernel << ": " << rep.instruction;
  SpmdOptions so;
  so.mesh = mesh;
  auto expected = EvaluateSpmd(*m, run.args, so);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  for (int64_t d = 0; d < mesh.size(); ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    std::vector<Literal> leaves;
    for (const tpu::OutputBuffer& b : run.result.chips[d].outputs) {
      leaves.push_back(ToLiteral(b));
    }
    ASSERT_FALSE(leaves.empty());
    const Literal& want = (*expected)[d];
    Literal actual = want.shape().IsTuple() ? Literal::Tuple(std::move(leaves))
                                            : std::move(leaves.at(0));
    ComparisonResult c = CompareLiterals(actual, want, options);
    EXPECT_TRUE(c.ok()) << c.ToText();
  }
}

// The meshes every collective is tested on.
inline const std::vector<DeviceMesh> kTestMeshes = {
    {1, 2}, {2, 2}, {1, 4}, {2, 1}, {1, 8}};

}  // namespace trench::codegen::testing
