// The bug zoo's witness runner: the verdict of one witness case (a case
// bundle, triage/case/case_bundle.h) for one hlo-run binary (any build
// of the target, patched or not), through hlo-diff's target runner and
// verdict (triage/case/verdict.h: the numerics contract decides, unless
// the case's options say "near" or "exact").
#pragma once

#include <string>

#include "base/json.h"
#include "base/status.h"
#include "tests/bugzoo/zoo_build.h"

namespace trench::bugzoo {

struct WitnessResult {
  std::string status;  // The verdict status: "pass", "mismatch", ...
  Json verdict;        // The whole verdict JSON.

  // The witness shows a bug: a mismatch or a failure of the target.
  // (invalid_input, oracle_unsupported and target_unsupported show none.)
  bool caught() const;
};

// Reads the case in `case_dir`, runs `hlo_run` one-shot on it (the hloc
// of the same build, next to it, describes the target: an SPMD witness
// runs on its slice) in
// `work_dir` (created; kept for inspection) with a `timeout_s` second
// limit, and returns the verdict. Errors: the case cannot be read, or the
// harness fails (hlo-run cannot be started, work_dir cannot be written).
StatusOr<WitnessResult> RunWitness(const std::string& hlo_run,
                                   const std::string& case_dir,
                                   const std::string& work_dir,
                                   double timeout_s = 300);

}  // namespace trench::bugzoo
