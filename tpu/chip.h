// Internal to tpu/: one chip running an executable's launch sequence, in
// turns. Program is the executable decoded once (it is the same on every
// chip of a slice: SPMD, one HBM layout); Chip is a core with its own
// memories, registers and clock that runs until a given cycle, a flagwait,
// the end of the launches or a failure, and resumes where it stopped. The
// slice (slice.h) decides whose turn it is.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "tpu/executable.h"
#include "tpu/machine.h"
#include "tpu/simulator.h"

namespace trench::tpu {

// Per instruction, computed once.
struct Decoded {
  uint8_t route;  // How the run loop dispatches it.
  uint8_t cost_class;
  int64_t cycles;
};

struct Program {
  Executable exe;
  HbmLayout layout;
  int64_t vmem_bytes = 0;                         // VMEM to allocate.
  std::vector<int> launch_kernel;                 // Launch -> kernel index.
  std::vector<std::vector<int64_t>> symbol_addr;  // Per kernel.
  std::vector<std::vector<Decoded>> decoded;      // Per kernel.
  std::vector<int64_t> buffer_base;               // Per buffer.
  std::vector<const BufferDecl*> inputs;          // By index.

  // Decodes a validated `exe` for `opts`. InvalidArgument for negative
  // memory sizes, ResourceExhausted when HBM exceeds opts.max_hbm_bytes.
  static StatusOr<std::unique_ptr<Program>> Build(Executable exe,
                                                  const SimOptions& opts);
};

class Chip {
 public:
  enum class State : uint8_t {
    kReady,    // Can run from clock().
    kWaiting,  // Blocked in flagwait (wait_flag(), wait_count()).
    kDone,     // Ran every launch.
    kFailed,   // report() says why.
  };

  // `prog`, `opts` and `ici` outlive the chip.
  Chip(const Program& prog, const SimOptions& opts, int id, int nchips,
       Interconnect* ici);
  ~Chip();
  Chip(const Chip&) = delete;
  Chip& operator=(const Chip&) = delete;

  Machine& machine() { return *m_; }
  int id() const { return id_; }
  State state() const { return state_; }
  int64_t clock() const;
  int wait_flag() const;
  int64_t wait_count() const;

  // As Simulator::BindInput.
  Status BindInput(int index, std::span<const uint8_t> bytes);
  // FailedPrecondition naming the first unbound input.
  Status CheckBound() const;

  // Resets memories (inputs and constants in, the rest uninitialized), the
  // clock and statistics, and rewinds to the first launch.
  void Reset();
  // Runs while the clock is below `until` (the instruction that crosses it
  // completes), stopping early at a flagwait, a send, the end or a failure.
  // REQUIRES: state() is kReady.
  State Run(int64_t until);
  // Ends the flagwait the chip is blocked in at cycle `wake` (its signals
  // have landed). REQUIRES: state() is kWaiting.
  void FinishWait(int64_t wake);

  // After Run() returned kFailed: the failure (status, message, kernel,
  // instruction, memory error, chip); not its cost (see Finish()).
  const RunReport& report() const { return report_; }
  // Where the chip stands (a chip blocked in flagwait: at the flagwait):
  // fills chip, kernel, launch, instruction_index and instruction.
  void Locate(RunReport* report) const;
  // The same as text: "kernel k, instruction 7 `flagwait 0, 1`".
  std::string Where() const;
  // Closes the statistics of a kernel left unfinished (a run that stopped
  // elsewhere), then fills `cost` and returns the steps executed.
  int64_t Finish(CostReport* cost);
  // Copies an output or tap buffer; bytes not initialized make `report` a
  // memory error (uninitialized_output, or unsynchronized_peer_access for a
  // peer's write never synchronized) when it is still ok.
  OutputBuffer Collect(const BufferDecl& decl, RunReport* report) const;

 private:
  bool BeginLaunch();
  State Execute(int64_t until);
  State Fail(int64_t pc, bool timeout);

  const Program& prog_;
  const SimOptions& opts_;
  const int id_;
  std::unique_ptr<Machine> m_;
  std::vector<std::vector<uint8_t>> bound_;
  std::vector<bool> is_bound_;
  std::vector<KernelStats> stats_;
  RunReport report_;
  State state_ = State::kDone;
  int launch_ = 0;   // Index into the launch sequence.
  int64_t pc_ = -1;  // In the current kernel; -1 before it starts.
  int64_t kernel_start_ = 0;
  int64_t steps_ = 0;
};

}  // namespace trench::tpu
