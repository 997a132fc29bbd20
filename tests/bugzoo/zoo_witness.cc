#include "tests/bugzoo/zoo_witness.h"

#include <sys/wait.h>

#include <cstdlib>

#include "triage/case/case_bundle.h"
#include "triage/case/target_runner.h"
#include "triage/case/verdict.h"

namespace trench::bugzoo {

bool WitnessResult::caught() const {
  return status == "mismatch" || status == "nan_mismatch" ||
         status == "compile_crash" || status == "run_crash" ||
         status == "timeout" || status == "memory_error";
}

StatusOr<WitnessResult> RunWitness(const std::string& hlo_run,
                                   const std::string& case_dir,
                                   const std::string& work_dir,
                                   double timeout_s) {
  ASSIGN_OR_RETURN(hlo_diff::Case c, hlo_diff::ReadCase(case_dir));
  hlo_diff::TargetSpec spec;
  spec.mode = hlo_diff::TargetMode::kHloRun;
  spec.hlo_run = hlo_run;
  spec.timeout_seconds = timeout_s;
  hlo_diff::TargetRunner runner(spec);
  ASSIGN_OR_RETURN(Json verdict, hlo_diff::ComputeVerdict(c, runner, work_dir));
  WitnessResult r;
  const Json* status = verdict.Find("status");
  r.status =
      status != nullptr && status->is_string() ? status->string_value() : "?";
  r.verdict = std::move(verdict);
  return r;
}

}  // namespace trench::bugzoo
