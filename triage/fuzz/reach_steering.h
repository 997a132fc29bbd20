// Steering a campaign toward the changed lines it has not reached yet
// (line_reach.h), in the spirit of AFLGo's directed greybox fuzzing, kept
// simple:
//
// - Seeds: a program is kept when it reached a changed line that no
//   earlier program reached, or one that fewer than `rare_below` programs
//   reached. At most kMaxSeeds are kept (the lowest energy goes).
// - Energy of a seed, recomputed at every pick:
//     sum over unreached lines u in a file the seed reached code of:
//       1 / (1 + min |line(u) - line(r)|) over the seed's lines r there
//     + sum over the seed's lines r: 1 / programs(r)
//   The first term is the distance to the targets (AFLGo uses call-graph
//   and control-flow distance; here source-line distance within a file is
//   the proxy); the second favours seeds of rarely reached lines, so that
//   every line gets its N programs. A small floor keeps every seed alive.
// - A mutant applies 1 to 3 of mutate.h's SwapOp and PerturbConstant (they
//   keep the parameters' shapes, so the seed's inputs still fit) and must
//   verify; its origin is {"kind": "reach_mutant", "parent": <seed's
//   origin>, "mutations": [...], "seed": N}.
// Thread safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "compiler/ir/literal.h"
#include "triage/fuzz/generator.h"
#include "triage/fuzz/line_reach.h"

namespace trench::fuzz {

class ReachSteering {
 public:
  static constexpr size_t kMaxSeeds = 64;

  ReachSteering(const LineReach* reach, int64_t rare_below)
      : reach_(reach), rare_below_(rare_below) {}

  // Offers a program that reached line ids `ids`, of which `fresh` no
  // program had reached before.
  void Offer(const std::string& hlo, const std::vector<Literal>& inputs,
             const Json& origin, const std::vector<int>& ids, int fresh);
  bool has_seeds() const;
  // A mutant of a seed picked by energy (deterministic in `seed` for a
  // given pool). FailedPrecondition with no seed; Internal when no
  // mutation applied and verified in a few tries.
  StatusOr<GeneratedCase> Mutant(uint64_t seed);
  // {"seeds", "mutants", "mutant_errors"}.
  Json ToJson() const;

 private:
  struct Seed {
    std::string hlo;
    std::vector<Literal> inputs;
    Json origin;
    std::vector<int> lines;
  };
  double Energy(const Seed& s, const std::vector<SourceLine>& unreached) const;

  const LineReach* reach_;
  int64_t rare_below_;
  mutable std::mutex mu_;
  std::vector<Seed> seeds_;
  int64_t mutants_ = 0, mutant_errors_ = 0;
};

}  // namespace trench::fuzz
