// One hlo-reduce run on a case, as a function: what the hlo-reduce tool and
// `trench triage` call. It chooses the interestingness test (the same-bug
// test, or an external command), measures the initial case's reproduction
// rate, reduces (reducer.h) and returns the summary JSON that hlo-reduce
// prints (tools/hlo-reduce/hlo_reduce.h describes it).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_runner.h"
#include "triage/reduce/reduction_pass.h"

namespace trench::hlo_reduce {

struct ReduceCaseOptions {
  std::string case_name;  // For messages and the summary's "case".
  std::string out_dir;    // Required: OUT/best and OUT/progress.json.
  std::string work_dir;   // Required: the test's work files (created).
  // The same-bug test runs the target `target`; its timeout_seconds also
  // bounds each external command.
  hlo_diff::TargetSpec target;
  std::string test_command;  // Non-empty: the external-command test.
  bool test_module = false;  // The command gets DIR/module.hlo.
  // The culprit pass of the same-bug test; "" takes the case's refined
  // signature's (CulpritFromSignature). REQUIRES: empty with a command.
  std::string culprit_pass;
  int jobs = 1, repeats = 1, max_rounds = 50;
  double min_rate = 1.0;
  int64_t max_tests = -1;
  bool resume = false;
  std::function<void(const Json& progress)> on_progress;
};

// Reduces `c` with `passes` under the chosen test and returns the summary.
// Errors: FailedPrecondition "<case_name>: ..." with *not_interesting set
// when the case is not interesting (passes, fails differently from its
// culprit, or reproduces below min_rate); otherwise (with *not_interesting
// false) InvalidArgument for bad options, "<case_name>: ..." when the
// same-bug test cannot start, and the reducer's and the harness's errors.
StatusOr<Json> ReduceCase(
    const hlo_diff::Case& c,
    const std::vector<std::unique_ptr<ReductionPass>>& passes,
    const ReduceCaseOptions& options, bool* not_interesting);

}  // namespace trench::hlo_reduce
