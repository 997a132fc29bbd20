// The simulator API: load an executable, bind inputs, run, read outputs.
//
//   ASSIGN_OR_RETURN(auto sim, Simulator::Create(exe));
//   RETURN_IF_ERROR(sim->BindInput(0, bytes));
//   ASSIGN_OR_RETURN(RunResult r, sim->Run());
//   if (r.report.status != RunStatus::kOk) ... r.report.message ...
//
// Create() decodes once (validation, symbol resolution, cost per
// instruction); Run() executes with no string handling and no allocation per
// instruction, and may be called many times (memory state is reset, bound
// inputs are kept). Not thread-safe; use one Simulator per thread.
//
// A Simulator is one chip: a slice of one (slice.h), whatever `slice` the
// executable declares: `chipid` is 0, `nchips` 1, rdmastart and flagsignal
// trap for want of a peer, and a flagwait for a signal is a deadlock.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tpu/cost_model.h"
#include "tpu/executable.h"
#include "tpu/memory.h"

namespace trench::tpu {

struct SimOptions {
  int64_t vmem_bytes = 16 << 20;  // VMEM capacity.
  int64_t smem_bytes = 16 << 10;
  int64_t guard_bytes = 1024;       // Guard zone on each side of HBM buffers.
  int64_t max_steps = 200'000'000;  // Instructions, all launches.
  int64_t max_cycles = int64_t{1} << 50;     // Cost-model cycles.
  int64_t max_hbm_bytes = int64_t{4} << 30;  // Create() refuses larger.
  CostParams cost;
};

enum class RunStatus : uint8_t { kOk, kMemoryError, kTimeout, kTrap };
std::string_view RunStatusName(RunStatus s);  // "ok", "memory_error", ...

struct RunReport {
  RunStatus status = RunStatus::kOk;
  std::string message;  // Empty when ok.
  std::string kernel;   // Where it stopped (failures only).
  int launch = -1;      // Index into Executable::launches.
  int64_t instruction_index = -1;
  std::string instruction;  // Assembly text of that instruction.
  MemoryErrorKind memory_error = MemoryErrorKind::kNone;
  std::string memory_space;  // "hbm", "vmem", "smem" for memory errors.
  int64_t address = -1;      // First offending byte address.
  int64_t steps = 0;         // Instructions executed.
  CostReport cost;
  int chip = -1;  // The chip that failed (0 on a single chip); -1 when ok.
};

// An output or tap buffer after a run. Bytes never written by the program
// read as 0xff and make the run a memory_error (uninitialized_output).
struct OutputBuffer {
  std::string name;
  BufferRole role = BufferRole::kOutput;
  int index = 0;
  std::string dtype;
  std::vector<int64_t> dims;
  std::vector<int64_t> layout;
  std::string label;
  std::vector<uint8_t> bytes;
};

struct RunResult {
  RunReport report;
  std::vector<OutputBuffer> outputs;  // By index.
  std::vector<OutputBuffer> taps;     // By index.
};

class SliceSimulator;

class Simulator {
 public:
  // Validates and decodes `exe`. InvalidArgument for an invalid executable,
  // ResourceExhausted when HBM or a kernel's .vmem cannot be allocated.
  // (A kernel whose .vmem exceeds the VMEM capacity is accepted here and
  // reported as a vmem_over_capacity memory error when launched.)
  static StatusOr<std::unique_ptr<Simulator>> Create(
      Executable exe, const SimOptions& options = SimOptions());
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  const Executable& executable() const;
  int num_inputs() const;

  // Copies `bytes` as input `index`. InvalidArgument when the index is out
  // of range or the size differs from the buffer's bytes.
  Status BindInput(int index, std::span<const uint8_t> bytes);

  // Runs the launch sequence. FailedPrecondition when an input is unbound;
  // program failures (memory errors, traps, timeouts) are an OK StatusOr
  // whose report says what happened.
  StatusOr<RunResult> Run();

 private:
  explicit Simulator(std::unique_ptr<SliceSimulator> slice);
  std::unique_ptr<SliceSimulator> slice_;
};

// One-shot convenience: Create, bind `inputs` in order, Run.
StatusOr<RunResult> RunExecutable(
    const Executable& exe, const std::vector<std::vector<uint8_t>>& inputs,
    const SimOptions& options = SimOptions());

}  // namespace trench::tpu
