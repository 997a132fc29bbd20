// One sandboxed run as a Slurm job (slurm_run.h).
#include "orchestrator/slurm/slurm_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/lines.h"
#include "base/scoped_temp_dir.h"
#include "sandbox/run_files.h"

namespace trench::orchestrator::slurm {
namespace {

bool Under(const std::string& path, const std::string& dir) {
  const std::filesystem::path p =
      std::filesystem::path(path).lexically_normal();
  const std::filesystem::path d = std::filesystem::path(dir).lexically_normal();
  auto [end, _] = std::mismatch(d.begin(), d.end(), p.begin(), p.end());
  return end == d.end();
}

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

SlurmRunner::SlurmRunner(const SlurmClient* client, SlurmRunOptions options)
    : client_(client), options_(std::move(options)) {}

StatusOr<sandbox::Result> SlurmRunner::Run(
    const sandbox::Options& options, const std::string& tag,
    const std::function<void(int64_t)>& on_submit,
    const std::atomic<bool>* cancel) {
  if (!IsSlurmToken(tag)) {
    return InvalidArgument("job tag '" + tag + "' is not a Slurm token");
  }
  if (!Under(options.work_dir, options_.shared_dir)) {
    return InvalidArgument("work dir " + options.work_dir +
                           " is not under the shared directory " +
                           options_.shared_dir + ": the node would not see it");
  }
  ASSIGN_OR_RETURN(
      ScopedTempDir scratch,
      ScopedTempDir::Make(options_.shared_dir, "run." + tag, 0700));
  const std::string& dir = scratch.path();
  RETURN_IF_ERROR(sandbox::WriteRunRequest(dir, options));
  JobSpec job;
  job.name = options_.job_name_prefix + "-" + tag;
  job.partition = options_.partition;
  job.account = options_.account;
  job.extra_args = options_.extra_args;
  job.work_dir = dir;
  job.argv = {options_.trench_binary, "run-sandboxed", dir};
  // The sandbox's own wall clock ends the run; Slurm's limit is a backstop.
  job.time_limit_minutes =
      options.limits.wall_seconds > 0
          ? static_cast<int>(std::ceil(options.limits.wall_seconds / 60)) + 2
          : 0;
  ASSIGN_OR_RETURN(int64_t id, client_->Submit(job));
  if (on_submit) on_submit(id);
  JobInfo info;
  while (true) {
    if (cancel != nullptr && cancel->load()) {
      RETURN_IF_ERROR(client_->Cancel(id));
      return Cancelled("Slurm job " + std::to_string(id) + " cancelled");
    }
    StatusOr<JobInfo> q = client_->Query(id);
    if (q.ok()) {
      info = *q;
      if (IsFinished(info.state)) break;
    } else if (q.status().code() == StatusCode::kNotFound) {
      break;  // Forgotten: the result files say how it ended.
    } else {
      return q.status();  // Transient: the caller retries the step.
    }
    std::this_thread::sleep_for(
        std::chrono::duration<double>(options_.poll_seconds));
  }
  const std::string what = "Slurm job " + std::to_string(id) + " (" +
                           std::string(JobStateName(info.state)) + ")";
  if (IsClusterFailure(info.state)) {
    return IoError(what + ": cluster failure, to be requeued");
  }
  StatusOr<sandbox::Result> r = sandbox::ReadRunResult(dir, options.limits);
  if (r.ok()) return r;
  if (r.status().code() != StatusCode::kNotFound) return r.status();
  const std::string said = LastOutputLine(dir + "/" + job.name + ".out");
  return IoError(what + " ended without a result" +
                 (said.empty() ? std::string() : ": " + said));
}

}  // namespace trench::orchestrator::slurm
