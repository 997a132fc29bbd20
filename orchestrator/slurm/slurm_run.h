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

// The job that runs the request already written in `dir` (under
// options.shared_dir): "run-sandboxed DIR" as `name`, with the run's wall
// limit plus 2 minutes as its Slurm time limit unless `time_limit_minutes`
// is set.
JobSpec RunJobSpec(const SlurmRunOptions& options, const sandbox::Options& run,
                   const std::string& name, const std::string& dir,
                   int time_limit_minutes = 0);

// Polls job `id` every `poll_seconds` until Slurm reports it finished or
// forgets it (then state kUnknown), calling `on_state` with each state read.
// `stop` (may be empty) is asked before each poll: true scancels the job
// and returns kCancelled. A failed scontrol is asked again; errors: the
// client's after kMaxQueryFailures failures in a row (transient: the
// caller retries).
inline constexpr int kMaxQueryFailures = 10;
StatusOr<JobInfo> WaitForJob(
    const SlurmClient& client, int64_t id, double poll_seconds,
    const std::function<bool()>& stop,
    const std::function<void(const JobInfo&)>& on_state);

// The Result of the run in `dir` whose job `name` (Slurm id `id`) ended in
// `state`: the files run-sandboxed wrote; kIoError "cluster failure" for a
// node failure, preemption or boot failure; kIoError naming the job's last
// output line when it left no result.
StatusOr<sandbox::Result> FinishedRunResult(const std::string& dir,
                                            const std::string& name, int64_t id,
                                            JobState state,
                                            const sandbox::Limits& limits);

// Whether `path` is `dir` or below it (lexically).
bool PathIsUnder(const std::string& path, const std::string& dir);

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
