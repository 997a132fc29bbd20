// The parts of one sandboxed run as a Slurm job (SlurmExecutor's): the
// request is in a directory under a shared directory every node mounts
// (sandbox/run_files.h), the job runs `trench run-sandboxed DIR` on a
// compute node, which runs the same sandbox with the same limits there,
// and the Result comes back from the files, as sandbox::Run would give it.
#pragma once

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

}  // namespace trench::orchestrator::slurm
