#include "triage/fuzz/reach_steering.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/verifier.h"
#include "triage/fuzz/mutate.h"
#include "triage/fuzz/program_builder.h"

namespace trench::fuzz {

double ReachSteering::Energy(const Seed& s,
                             const std::vector<SourceLine>& unreached) const {
  const std::vector<SourceLine>& all = reach_->map().lines();
  double energy = 0.05;
  for (const SourceLine& u : unreached) {
    int64_t best = std::numeric_limits<int64_t>::max();
    for (int id : s.lines) {
      if (all[id].path != u.path) continue;
      best = std::min<int64_t>(best, std::llabs(all[id].line - u.line));
    }
    if (best != std::numeric_limits<int64_t>::max()) {
      energy += 1.0 / (1.0 + static_cast<double>(best));
    }
  }
  for (int id : s.lines) {
    const int64_t n = reach_->programs(id);
    if (n > 0) energy += 1.0 / static_cast<double>(n);
  }
  return energy;
}

void ReachSteering::Offer(const std::string& hlo,
                          const std::vector<Literal>& inputs,
                          const Json& origin, const std::vector<int>& ids,
                          int fresh) {
  if (ids.empty()) return;
  bool rare = fresh > 0;
  for (int id : ids) rare = rare || reach_->programs(id) < rare_below_;
  if (!rare) return;
  const std::vector<SourceLine> unreached = reach_->Unreached();
  std::lock_guard<std::mutex> lock(mu_);
  Seed s{hlo, inputs, origin, ids};
  if (seeds_.size() < kMaxSeeds) {
    seeds_.push_back(std::move(s));
    return;
  }
  size_t weakest = 0;
  double low = std::numeric_limits<double>::max();
  for (size_t i = 0; i < seeds_.size(); ++i) {
    const double e = Energy(seeds_[i], unreached);
    if (e < low) {
      low = e;
      weakest = i;
    }
  }
  if (Energy(s, unreached) > low) seeds_[weakest] = std::move(s);
}

bool ReachSteering::has_seeds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !seeds_.empty();
}

StatusOr<GeneratedCase> ReachSteering::Mutant(uint64_t seed) {
  const std::vector<SourceLine> unreached = reach_->Unreached();
  Seed parent;
  Rng rng(seed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (seeds_.empty()) return FailedPrecondition("no seed yet");
    std::vector<double> energy;
    for (const Seed& s : seeds_) energy.push_back(Energy(s, unreached));
    const int64_t pick = rng.PickWeighted(energy);
    parent = seeds_[pick < 0 ? 0 : pick];
  }
  for (int attempt = 0; attempt < 4; ++attempt) {
    StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(parent.hlo);
    if (!m.ok()) break;
    Json mutations = Json::MakeArray();
    const int64_t n = rng.Uniform(1, 3);
    for (int64_t k = 0; k < n; ++k) {
      std::string what = rng.Chance(0.5)
                             ? SwapOp(**m, rng, /*allow_nonfinite=*/false)
                             : PerturbConstant(**m, rng);
      if (!what.empty()) mutations.push_back(std::move(what));
    }
    if (mutations.array().empty() || !VerifyModule(**m).ok()) continue;
    GeneratedCase g;
    g.hlo_text = PrintHloModule(**m);
    g.inputs = parent.inputs;
    g.origin = Json::MakeObject();
    g.origin["kind"] = "reach_mutant";
    g.origin["parent"] = parent.origin;
    g.origin["mutations"] = std::move(mutations);
    g.origin["seed"] = static_cast<uint64_t>(seed);
    std::lock_guard<std::mutex> lock(mu_);
    ++mutants_;
    return g;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++mutant_errors_;
  return Internal("no mutation of the picked seed applied and verified");
}

Json ReachSteering::ToJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  Json j = Json::MakeObject();
  j["seeds"] = static_cast<int64_t>(seeds_.size());
  j["mutants"] = mutants_;
  j["mutant_errors"] = mutant_errors_;
  return j;
}

}  // namespace trench::fuzz
