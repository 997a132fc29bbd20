// The reducer: drives the HLO reduction passes (reduction_pass.h) over the
// generic delta-debugging engine (ddmin.h) to a fixpoint.
//
// A round applies the passes in the given (registry) order; each pass runs
// the engine over its Count(best) opportunities repeatedly until a run
// accepts nothing (its own fixpoint: an accepted step may expose new
// opportunities); rounds repeat until one changes nothing (or max_rounds).
// A pass (but the first) that changed the case without making it smaller
// by any measure of CaseSize (a sideways move: rewired uses, simpler
// values) ends the round early, so the next one starts with the removals
// on what it exposed, before later passes shrink the arrays (a rewiring
// that shows a bug on whole arrays may not on one-element ones).
// A candidate is Apply(best, chosen); it must pass ValidateCandidate before
// it is tested (invalid ones cost no test run), and the engine's cache,
// keyed by the candidate's content address (CaseSha256), answers
// candidates seen before (across passes too). A result the reducer has
// already had as its best (a cycle) counts as no progress.
//
// Best so far on disk: after every accepted step, the new best case is
// written with WriteCase to OUT/best.<step> and OUT/best, a symlink, is
// switched to it atomically (symlink + rename; the previous step's
// directory is then removed), and OUT/progress.json is replaced (temp file
// + rename) with {"pass", "step", "round", "size", "initial_size", "tests",
// "seconds", "best"}; at the end it is written once more with "pass":
// "done" and "done": true (false when the test budget stopped the run). So
// OUT/best always is a complete, interesting case; at the end it is read
// back and tested once more (ReduceResult::replayed), and a best that no
// longer fails is an Internal error, never a silent result. Resume
// (ReduceOptions::resume) starts from OUT/best and progress.json's
// counters (step, tests, initial_size); its cache and its set of cases
// already seen start empty.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "triage/case/case_bundle.h"
#include "triage/reduce/ddmin.h"
#include "triage/reduce/interestingness.h"
#include "triage/reduce/reduction_pass.h"

namespace trench::hlo_reduce {

struct ReduceOptions {
  std::string out_dir;  // Required: best case and progress.json.
  int jobs = 1;
  bool resume = false;     // Start from OUT/best (must exist).
  int max_rounds = 50;     // Rounds over all passes.
  int64_t max_tests = -1;  // Test budget over the whole run (< 0: none).
  // Called after every accepted step with the progress.json document.
  std::function<void(const Json& progress)> on_progress;
};

struct PassStats {
  std::string name;
  int64_t runs = 0;   // Engine runs.
  int64_t steps = 0;  // Engine runs that accepted something.
  ddmin::Stats stats;
  double seconds = 0;
};

struct ReduceResult {
  hlo_diff::Case best;
  CaseSize before, after;  // before: the initial case (or resumed from).
  ddmin::Stats stats;      // Over all passes.
  std::vector<PassStats> passes;
  int rounds = 0;
  int64_t steps = 0;  // Accepted steps (including a resumed run's).
  bool budget_exhausted = false;
  // OUT/best, read back from disk, was tested again and still fails
  // (false when no step was accepted, so nothing new was written).
  bool replayed = false;
  double seconds = 0;

  Json ToJson() const;  // Without the case.
};

// Reduces `initial` (or OUT/best with options.resume) with `passes` under
// `test` (whose repeat policy applies). REQUIRES: `test` supports
// options.jobs workers. Errors: InvalidArgument for a missing out_dir or
// jobs < 1; FailedPrecondition when OUT/best exists without resume or is
// missing with it; IoError when OUT cannot be written; Internal when OUT/best
// read back no longer fails (see above); harness errors of
// the test.
StatusOr<ReduceResult> Reduce(
    const hlo_diff::Case& initial,
    const std::vector<std::unique_ptr<ReductionPass>>& passes,
    Interestingness& test, const ReduceOptions& options);

// The sizes as JSON {"instructions", "elements", "text_bytes"}.
Json SizeJson(const CaseSize& s);

// The worst-case test count of each pass on `c` (ddmin::DryRunTests of its
// Count): [{"pass", "opportunities", "max_tests"}...] plus the total.
Json DryRun(const hlo_diff::Case& c,
            const std::vector<std::unique_ptr<ReductionPass>>& passes);

}  // namespace trench::hlo_reduce
