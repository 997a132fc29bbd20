#include "tpu/slice.h"

#include "tpu/chip.h"
#include "tpu/interconnect.h"

namespace trench::tpu {

SliceSimulator::SliceSimulator(const SliceOptions& options,
                               const Topology& topology)
    : opts_(options), topology_(topology) {}

SliceSimulator::~SliceSimulator() = default;

StatusOr<std::unique_ptr<SliceSimulator>> SliceSimulator::Create(
    Executable exe, const SliceOptions& options) {
  RETURN_IF_ERROR(ValidateExecutable(exe));
  const int n = options.chips == 0 ? exe.slice : options.chips;
  StatusOr<Topology> topology = Topology::ForChips(n);
  if (!topology.ok()) {
    return InvalidArgument("slice options: " + topology.status().message());
  }
  // Bounds that keep clock arithmetic (turns, landing cycles) from
  // overflowing.
  constexpr int64_t kMaxQuantum = int64_t{1} << 62;
  constexpr int64_t kMaxLatency = int64_t{1} << 40;
  if (options.quantum_cycles < 0 || options.quantum_cycles > kMaxQuantum) {
    return InvalidArgument(
        "slice options: quantum_cycles must be in [0, 2^62]");
  }
  const int64_t latency = options.chip.cost.link_latency_cycles;
  if (latency < 0 || latency > kMaxLatency) {
    return InvalidArgument(
        "slice options: link_latency_cycles must be in [0, 2^40]");
  }
  std::unique_ptr<SliceSimulator> s(new SliceSimulator(options, *topology));
  ASSIGN_OR_RETURN(s->prog_, Program::Build(std::move(exe), s->opts_.chip));
  s->ici_ = std::make_unique<Interconnect>(s->topology_, s->opts_.chip.cost);
  std::vector<Machine*> machines;
  for (int c = 0; c < n; ++c) {
    s->chips_.push_back(
        std::make_unique<Chip>(*s->prog_, s->opts_.chip, c, n, s->ici_.get()));
    machines.push_back(&s->chips_.back()->machine());
  }
  s->ici_->Attach(std::move(machines));
  return s;
}

const Executable& SliceSimulator::executable() const { return prog_->exe; }

int SliceSimulator::num_inputs() const {
  return static_cast<int>(prog_->inputs.size());
}

Status SliceSimulator::BindInput(int chip, int index,
                                 std::span<const uint8_t> bytes) {
  if (chip < 0 || chip >= num_chips()) {
    return InvalidArgument("chip " + std::to_string(chip) +
                           " out of range (a slice of " +
                           std::to_string(num_chips()) + " chips)");
  }
  Status s = chips_[chip]->BindInput(index, bytes);
  if (!s.ok() && num_chips() > 1) {
    return s.WithContext("chip " + std::to_string(chip));
  }
  return s;
}

// When the chip can run next: its clock, the cycle its flagwait can end,
// or kNever (blocked without enough signals sent, done or failed).
int64_t SliceSimulator::TimeOf(int c) const {
  const Chip& chip = *chips_[c];
  switch (chip.state()) {
    case Chip::State::kReady:
      return chip.clock();
    case Chip::State::kWaiting:
      return ici_->WakeTime(c, chip.wait_flag(), chip.wait_count(),
                            chip.clock());
    default:
      return kNever;
  }
}

void SliceSimulator::Schedule(RunReport* report) {
  const int n = num_chips();
  while (true) {
    // The earliest chip (ties: lowest index) and the one after it.
    int pick = -1, next = -1;
    int64_t tp = kNever, tn = kNever;
    for (int c = 0; c < n; ++c) {
      const int64_t t = TimeOf(c);
      if (t < tp) {
        next = pick;
        tn = tp;
        pick = c;
        tp = t;
      } else if (t < tn) {
        next = c;
        tn = t;
      }
    }
    if (pick < 0) return;  // Every chip done, or a deadlock.
    Chip& chip = *chips_[pick];
    if (chip.state() == Chip::State::kWaiting) chip.FinishWait(tp);
    // Run past the next chip's clock by the quantum; on a tie, the lower
    // index goes first.
    const int64_t ahead = opts_.quantum_cycles + (pick < next ? 1 : 0);
    const int64_t until =
        next < 0 || tn >= kNever - ahead ? kNever : tn + ahead;
    if (chip.Run(until) == Chip::State::kFailed) {
      *report = chip.report();
      Blame(pick, report);
      return;
    }
  }
}

void SliceSimulator::ReportDeadlock(RunReport* report) const {
  std::string blocked;
  for (const std::unique_ptr<Chip>& c : chips_) {
    if (c->state() != Chip::State::kWaiting) continue;
    if (blocked.empty()) {
      c->Locate(report);
      report->status = RunStatus::kTrap;
    } else {
      blocked += "; ";
    }
    blocked += "chip " + std::to_string(c->id()) + " (" + c->Where() +
               ") waits for flag " + std::to_string(c->wait_flag()) +
               " to reach " + std::to_string(c->wait_count()) + " and has " +
               std::to_string(ici_->Pending(c->id(), c->wait_flag()));
  }
  report->message =
      "deadlock: every unfinished chip is blocked in flagwait: " + blocked;
}

void SliceSimulator::Blame(int chip, RunReport* report) const {
  report->chip = chip;
  if (num_chips() > 1) {
    report->message = "chip " + std::to_string(chip) + ": " + report->message;
  }
}

StatusOr<SliceRunResult> SliceSimulator::Run() {
  for (const std::unique_ptr<Chip>& c : chips_) {
    Status s = c->CheckBound();
    if (!s.ok() && num_chips() > 1) {
      return s.WithContext("chip " + std::to_string(c->id()));
    }
    RETURN_IF_ERROR(s);
  }
  ici_->Reset();
  for (const std::unique_ptr<Chip>& c : chips_) c->Reset();
  SliceRunResult result;
  RunReport& report = result.report;
  Schedule(&report);
  bool waiting = false;
  for (const std::unique_ptr<Chip>& c : chips_) {
    waiting |= c->state() == Chip::State::kWaiting;
  }
  if (report.status == RunStatus::kOk && waiting) ReportDeadlock(&report);
  std::vector<KernelStats> launches;
  int64_t cycles = 0, busy_cycles = 0;
  for (const std::unique_ptr<Chip>& c : chips_) {
    ChipResult& cr = result.chips.emplace_back();
    cr.steps = c->Finish(&cr.cost);
    report.steps += cr.steps;
    cycles = std::max(cycles, cr.cost.total.cycles);
    busy_cycles += cr.cost.total.cycles;
    for (const KernelStats& k : cr.cost.per_kernel) launches.push_back(k);
    const bool was_ok = report.status == RunStatus::kOk;
    for (const BufferDecl* b :
         prog_->exe.BuffersWithRole(BufferRole::kOutput)) {
      cr.outputs.push_back(c->Collect(*b, &report));
    }
    for (const BufferDecl* b : prog_->exe.BuffersWithRole(BufferRole::kTap)) {
      cr.taps.push_back(c->Collect(*b, &report));
    }
    if (was_ok && report.status != RunStatus::kOk) Blame(c->id(), &report);
  }
  report.cost = MakeCostReport(launches);
  report.cost.total.cycles = cycles;
  report.cost.mxu_utilization =
      busy_cycles > 0 ? static_cast<double>(report.cost.total.mxu_busy_cycles) /
                            static_cast<double>(busy_cycles)
                      : 0;
  return result;
}

Status SliceSimulator::BindInputs(
    int chip, const std::vector<std::vector<uint8_t>>& inputs) {
  if (static_cast<int>(inputs.size()) != num_inputs()) {
    return InvalidArgument(
        "executable takes " + std::to_string(num_inputs()) + " inputs, got " +
        std::to_string(inputs.size()) +
        (num_chips() > 1 ? " for chip " + std::to_string(chip) : ""));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    RETURN_IF_ERROR(BindInput(chip, static_cast<int>(i), inputs[i]));
  }
  return Status::Ok();
}

StatusOr<SliceRunResult> RunSliceExecutable(
    const Executable& exe,
    const std::vector<std::vector<std::vector<uint8_t>>>& inputs,
    const SliceOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<SliceSimulator> slice,
                   SliceSimulator::Create(exe, options));
  if (static_cast<int>(inputs.size()) != slice->num_chips()) {
    return InvalidArgument("a slice of " + std::to_string(slice->num_chips()) +
                           " chips needs inputs for each, got " +
                           std::to_string(inputs.size()));
  }
  for (int c = 0; c < slice->num_chips(); ++c) {
    RETURN_IF_ERROR(slice->BindInputs(c, inputs[c]));
  }
  return slice->Run();
}

}  // namespace trench::tpu
