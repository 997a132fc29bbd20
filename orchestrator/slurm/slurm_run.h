// One sandboxed run as a Slurm job (the core of issue 22's executor): the
// request goes to a fresh directory under a shared directory every node
// mounts (sandbox/run_files.h), the job runs `trench run-sandboxed DIR` on
// a compute node, which runs the same sandbox with the same limits there,
// and the Result comes back from the files, as sandbox::Run would give it.
//
// Errors: kInvalidArgument for options that cannot run (a work dir outside
// the shared directory); kFailedPrecondition when sbatch refuses the job;
// kIoError, retryable, when the job ends without a result: it was
// cancelled, ran out of its Slurm time, its node failed or it was
// preempted (IsClusterFailure: the caller requeues it without counting a
// failure; the message says "cluster failure"), or run-sandboxed could not
// run it (its last output line).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "orchestrator/slurm/slurm_client.h"
#include "sandbox/sandbox.h"

namespace trench::orchestrator::slurm {

struct SlurmRunOptions {
  std::string trench_binary;  // Absolute; every node sees it.
  std::string shared_dir;     // Absolute; every node mounts it.
  std::string partition;      // "": the default partition.
  std::string account;
  std::vector<std::string> extra_args;     // More sbatch options.
  std::string job_name_prefix = "trench";  // IsSlurmToken.
  double poll_seconds = 0.5;
};

class SlurmRunner {
 public:
  // `client` is not owned and must outlive the runner.
  SlurmRunner(const SlurmClient* client, SlurmRunOptions options);

  // Runs `options` (its work_dir under shared_dir) as job
  // "<prefix>-<tag>" (tag: IsSlurmToken) and waits for it; `on_submit`
  // (may be empty) gets the Slurm job id as soon as it is known, e.g. to
  // store it with the step's lease. `cancel` (may be null) set to true
  // scancels the job and returns kCancelled.
  StatusOr<sandbox::Result> Run(const sandbox::Options& options,
                                const std::string& tag,
                                const std::function<void(int64_t)>& on_submit,
                                const std::atomic<bool>* cancel = nullptr);

 private:
  const SlurmClient* client_;
  SlurmRunOptions options_;
};

}  // namespace trench::orchestrator::slurm
