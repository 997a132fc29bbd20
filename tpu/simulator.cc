#include "tpu/simulator.h"

#include "tpu/slice.h"

namespace trench::tpu {
namespace {

// A single chip's run as the Simulator reports it.
RunResult ChipZero(SliceRunResult s) {
  RunResult r;
  r.report = std::move(s.report);
  r.outputs = std::move(s.chips[0].outputs);
  r.taps = std::move(s.chips[0].taps);
  return r;
}

SliceOptions OneChip(const SimOptions& options) {
  SliceOptions slice;
  slice.chips = 1;
  slice.chip = options;
  return slice;
}

}  // namespace

std::string_view RunStatusName(RunStatus s) {
  switch (s) {
    case RunStatus::kOk:
      return "ok";
    case RunStatus::kMemoryError:
      return "memory_error";
    case RunStatus::kTimeout:
      return "timeout";
    case RunStatus::kTrap:
      return "trap";
  }
  return "?";
}

Simulator::Simulator(std::unique_ptr<SliceSimulator> slice)
    : slice_(std::move(slice)) {}

Simulator::~Simulator() = default;

StatusOr<std::unique_ptr<Simulator>> Simulator::Create(
    Executable exe, const SimOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<SliceSimulator> s,
                   SliceSimulator::Create(std::move(exe), OneChip(options)));
  return std::unique_ptr<Simulator>(new Simulator(std::move(s)));
}

const Executable& Simulator::executable() const { return slice_->executable(); }

int Simulator::num_inputs() const { return slice_->num_inputs(); }

Status Simulator::BindInput(int index, std::span<const uint8_t> bytes) {
  return slice_->BindInput(0, index, bytes);
}

StatusOr<RunResult> Simulator::Run() {
  ASSIGN_OR_RETURN(SliceRunResult s, slice_->Run());
  return ChipZero(std::move(s));
}

StatusOr<RunResult> RunExecutable(
    const Executable& exe, const std::vector<std::vector<uint8_t>>& inputs,
    const SimOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<SliceSimulator> slice,
                   SliceSimulator::Create(exe, OneChip(options)));
  RETURN_IF_ERROR(slice->BindInputs(0, inputs));
  ASSIGN_OR_RETURN(SliceRunResult s, slice->Run());
  return ChipZero(std::move(s));
}

}  // namespace trench::tpu
