#include "tests/bugzoo/zoo_witness.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "triage/case/case_bundle.h"
#include "triage/case/target_runner.h"
#include "triage/case/verdict.h"

namespace trench::bugzoo {

bool WitnessResult::caught() const { return hlo_diff::IsFailureStatus(status); }

StatusOr<WitnessResult> RunWitness(const std::string& hlo_run,
                                   const std::string& case_dir,
                                   const std::string& work_dir,
                                   double timeout_s) {
  std::unique_ptr<HloModule> module;
  ASSIGN_OR_RETURN(hlo_diff::Case c, hlo_diff::ReadCase(case_dir, &module));
  // The hloc next to hlo-run says how many chips the target's slice has
  // (an SPMD witness needs them).
  hlo_diff::TargetSpec spec = hlo_diff::TargetSpec::FromBinaryDir(
      std::filesystem::path(hlo_run).parent_path().string(),
      hlo_diff::TargetMode::kHloRun);
  spec.hlo_run = hlo_run;
  spec.timeout_seconds = timeout_s;
  hlo_diff::TargetRunner runner(spec);
  ASSIGN_OR_RETURN(hlo_diff::Verdict verdict,
                   hlo_diff::ComputeVerdict(c, *module, runner, work_dir));
  WitnessResult r;
  r.status = verdict.status_name();
  r.verdict = verdict.ToJson();
  return r;
}

}  // namespace trench::bugzoo
