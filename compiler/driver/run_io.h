// Pieces of tpusim shared with hlo-run: binding literals, running, and
// writing outputs (.npy) and report.json.
#pragma once

#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "compiler/ir/literal.h"
#include "tpu/executable.h"
#include "tpu/simulator.h"
#include "tpu/slice.h"

namespace trench::tpusim {

// The input leaf shapes of `exe` (by input index).
std::vector<Shape> InputShapes(const tpu::Executable& exe);

// Reads DIR/0.npy .. DIR/(n-1).npy for the inputs of `exe` (a <u2 file
// feeds a bf16 input). InvalidArgument/IoError naming the file on a
// missing file or a dtype/shape mismatch.
StatusOr<std::vector<Literal>> ReadInputDir(const tpu::Executable& exe,
                                            const std::string& dir);

// Checks `inputs` against the executable's inputs and runs it.
// InvalidArgument on a count/dtype/shape mismatch; program failures are in
// the report.
StatusOr<tpu::RunResult> RunWithInputs(const tpu::Executable& exe,
                                       const std::vector<Literal>& inputs);

// "ok", "memory_error", "timeout" or "run_crash" (a trap).
std::string StatusName(tpu::RunStatus s);
// The exit code for a run status (target_driver.h's codes).
int ExitCode(tpu::RunStatus s);

// Writes the outputs as DIR/<i>.npy, the taps as DIR/taps/<label>.npy
// ('/' and other unsafe characters in labels become '_') and
// DIR/report.json; returns the report (also for the caller to print).
// report.json: {"status", "message", "cycles", "steps", "bytes_moved":
// {"hbm_to_vmem", "vmem_to_hbm", "other"}, "dma_transfers",
// "matmul_passes", "memory_errors": [{"kind", "kernel", "launch",
// "instruction_index", "instruction", "space", "address", "message"}],
// "outputs": [{"index", "file", "dtype", "shape"}], "taps": [{"index",
// "label", "file", "dtype", "shape"}]}. Outputs of a failed run are not
// written. `compile` (hlo-run: the compile report), when not null, is
// added as "compile". IoError when a file cannot be written.
StatusOr<Json> WriteResults(const std::string& dir, const tpu::RunResult& r,
                            const Json& compile = Json());

// Chip `chip`'s inputs of a slice run: DIR/<chip>/0.npy, 1.npy, ... as
// ReadInputDir reads them, as bytes to bind. InvalidArgument/IoError
// naming the file as ReadInputDir's.
StatusOr<std::vector<std::vector<uint8_t>>> ReadChipInputs(
    const tpu::Executable& exe, const std::string& dir, int chip);

// A slice's results: chip c's outputs, taps and report.json as
// WriteResults writes them into DIR/<c>/, then DIR/report.json, the
// slice's: WriteResults' keys for the slice's report (status, message,
// cycles: the slowest chip's, steps, memory errors each naming its chip)
// plus "chip" (the failing one, -1 when ok), "chips", "topology",
// "chip_cycles", "link_bytes_sent", "link_transfers",
// "flag_stall_cycles"; `compile` as for WriteResults. Returns that report.
// IoError when a file cannot be written.
StatusOr<Json> WriteSliceResults(const std::string& dir,
                                 const tpu::Topology& topology,
                                 const tpu::SliceRunResult& r,
                                 const Json& compile = Json());

}  // namespace trench::tpusim
