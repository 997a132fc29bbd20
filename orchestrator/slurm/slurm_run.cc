// One sandboxed run as a Slurm job (slurm_run.h).
#include "orchestrator/slurm/slurm_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/lines.h"
#include "sandbox/run_files.h"

namespace trench::orchestrator::slurm {
namespace {

// The last line of the job's output file (what run-sandboxed said).
std::string LastOutputLine(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  const std::streamoff size = f ? static_cast<std::streamoff>(f.tellg()) : 0;
  f.seekg(std::max<std::streamoff>(0, size - 4096));  // Its tail only.
  std::string text((std::istreambuf_iterator<char>(f)), {});
  std::string last;
  for (std::string_view line : SplitLineViews(text)) {
    if (!TrimWhitespace(line).empty()) last = std::string(line);
  }
  return last;
}

}  // namespace

bool PathIsUnder(const std::string& path, const std::string& dir) {
  const std::filesystem::path p =
      std::filesystem::path(path).lexically_normal();
  const std::filesystem::path d = std::filesystem::path(dir).lexically_normal();
  auto [end, _] = std::mismatch(d.begin(), d.end(), p.begin(), p.end());
  return end == d.end() || (std::next(end) == d.end() && end->empty());
}

JobSpec RunJobSpec(const SlurmRunOptions& options, const sandbox::Options& run,
                   const std::string& name, const std::string& dir,
                   int time_limit_minutes) {
  JobSpec job;
  job.name = name;
  job.partition = options.partition;
  job.account = options.account;
  job.extra_args = options.extra_args;
  job.work_dir = dir;
  job.argv = {options.trench_binary, "run-sandboxed", dir};
  // The sandbox's own wall clock ends the run; Slurm's limit is a backstop.
  job.time_limit_minutes =
      time_limit_minutes > 0 ? time_limit_minutes
      : run.limits.wall_seconds > 0
          ? static_cast<int>(std::ceil(run.limits.wall_seconds / 60)) + 2
          : 0;
  return job;
}

StatusOr<JobInfo> WaitForJob(
    const SlurmClient& client, int64_t id, double poll_seconds,
    const std::function<bool()>& stop,
    const std::function<void(const JobInfo&)>& on_state) {
  int failures = 0;  // Consecutive transient failures of scontrol.
  while (true) {
    if (stop && stop()) {
      RETURN_IF_ERROR(client.Cancel(id));
      return Cancelled("Slurm job " + std::to_string(id) + " cancelled");
    }
    StatusOr<JobInfo> q = client.Query(id);
    if (q.ok()) {
      failures = 0;
      if (on_state) on_state(*q);
      if (IsFinished(q->state)) return *q;
    } else if (q.status().code() == StatusCode::kNotFound) {
      JobInfo gone;  // Forgotten: the result files say how it ended.
      gone.id = id;
      return gone;
    } else if (++failures >= kMaxQueryFailures) {
      return q.status();  // The caller's step retries (and reattaches).
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_seconds));
  }
}

StatusOr<sandbox::Result> FinishedRunResult(const std::string& dir,
                                            const std::string& name, int64_t id,
                                            JobState state,
                                            const sandbox::Limits& limits) {
  const std::string what = "Slurm job " + std::to_string(id) + " (" +
                           std::string(JobStateName(state)) + ")";
  if (IsClusterFailure(state)) {
    return IoError(what + ": cluster failure, to be requeued");
  }
  StatusOr<sandbox::Result> r = sandbox::ReadRunResult(dir, limits);
  if (r.ok()) return r;
  if (r.status().code() != StatusCode::kNotFound) return r.status();
  const std::string said = LastOutputLine(dir + "/" + name + ".out");
  return IoError(what + " ended without a result" +
                 (said.empty() ? std::string() : ": " + said));
}

}  // namespace trench::orchestrator::slurm
