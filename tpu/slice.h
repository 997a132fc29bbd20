// A slice: N chips (1..kMaxSliceChips) running one executable (SPMD), each
// with its own HBM, VMEM, SMEM, registers, inputs and outputs, linked as
// topology.h says. Chips exchange data with rdmastart into a peer's HBM and
// synchronize with flagsignal/flagwait (tpu/ISA.md, "Slice").
//
//   SliceOptions opts;
//   opts.chips = 4;
//   ASSIGN_OR_RETURN(auto slice, SliceSimulator::Create(exe, opts));
//   for (int c = 0; c < 4; ++c) RETURN_IF_ERROR(slice->BindInput(c, 0, x[c]));
//   ASSIGN_OR_RETURN(SliceRunResult r, slice->Run());
//   if (r.report.status != RunStatus::kOk) ... r.report.chip ...
//
// Scheduling is a deterministic discrete-event interleaving on one thread:
// the chip with the smallest cost-model clock runs (ties: the lowest
// index) until its clock passes the next chip's by quantum_cycles, or it
// sends, blocks in flagwait or ends. A chip blocked in flagwait resumes
// when it is the earliest chip and enough signals have landed; when every
// unfinished chip is blocked the run stops with a "deadlock" trap. Each
// chip runs the launch sequence on its own (no barrier between kernels).
// Not thread-safe; use one SliceSimulator per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "tpu/executable.h"
#include "tpu/simulator.h"
#include "tpu/topology.h"

namespace trench::tpu {

struct SliceOptions {
  int chips = 0;    // 1..kMaxSliceChips; 0 takes the executable's `slice`.
  SimOptions chip;  // Per chip: memories, limits (steps, cycles), costs.
  // How far (cycles) the running chip may get ahead of the next one before
  // the scheduler switches. 0 interleaves in cycle order, instruction by
  // instruction, so that races show in the order the clocks say.
  int64_t quantum_cycles = 0;
};

// One chip's outputs, taps and cost after a run.
struct ChipResult {
  std::vector<OutputBuffer> outputs;  // By index.
  std::vector<OutputBuffer> taps;     // By index.
  CostReport cost;  // total.cycles: this chip's clock at its end.
  int64_t steps = 0;
};

struct SliceRunResult {
  // The slice's status; on a failure `chip` names the chip (for a
  // deadlock, the first blocked one; the message names them all) and the
  // kernel/instruction fields are that chip's. cost.total sums the chips'
  // counters but for cycles, the slice's: the maximum over chips (per
  // kernel entries sum over chips); steps sums over chips.
  RunReport report;
  std::vector<ChipResult> chips;  // By chip index.
};

class Chip;
class Interconnect;
struct Program;

class SliceSimulator {
 public:
  // Validates and decodes `exe` once for every chip. InvalidArgument for an
  // invalid executable or a chip count outside 1..kMaxSliceChips;
  // ResourceExhausted as Simulator::Create (per chip).
  static StatusOr<std::unique_ptr<SliceSimulator>> Create(
      Executable exe, const SliceOptions& options = SliceOptions());
  ~SliceSimulator();
  SliceSimulator(const SliceSimulator&) = delete;
  SliceSimulator& operator=(const SliceSimulator&) = delete;

  const Executable& executable() const;
  const Topology& topology() const { return topology_; }
  int num_chips() const { return topology_.chips(); }
  int num_inputs() const;

  // Copies `bytes` as input `index` of chip `chip`. InvalidArgument when
  // the chip or index is out of range or the size differs from the buffer.
  Status BindInput(int chip, int index, std::span<const uint8_t> bytes);

  // Binds inputs[i] as input i of `chip`, for every input: as BindInput,
  // and InvalidArgument when inputs.size() != num_inputs().
  Status BindInputs(int chip, const std::vector<std::vector<uint8_t>>& inputs);

  // Runs the launch sequence on every chip (memories and flags reset).
  // FailedPrecondition when an input of some chip is unbound; program
  // failures (memory errors, traps, deadlocks, timeouts) are an OK
  // StatusOr whose report says what happened and on which chip.
  StatusOr<SliceRunResult> Run();

 private:
  SliceSimulator(const SliceOptions& options, const Topology& topology);
  int64_t TimeOf(int chip) const;
  void Schedule(RunReport* report);
  void ReportDeadlock(RunReport* report) const;
  // Names `chip` as the one that failed (and in the message of a slice).
  void Blame(int chip, RunReport* report) const;

  SliceOptions opts_;
  Topology topology_;
  std::unique_ptr<Program> prog_;
  std::unique_ptr<Interconnect> ici_;
  std::vector<std::unique_ptr<Chip>> chips_;
};

// One-shot convenience: Create, bind inputs[chip][index], Run.
// InvalidArgument when the counts do not match the slice and executable.
StatusOr<SliceRunResult> RunSliceExecutable(
    const Executable& exe,
    const std::vector<std::vector<std::vector<uint8_t>>>& inputs,
    const SliceOptions& options = SliceOptions());

}  // namespace trench::tpu
