#include "orchestrator/daemon/job_run.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "base/log_context.h"
#include "orchestrator/daemon/logging.h"

namespace trench::orchestrator {

Json JobLogFields(const Job& job) {
  Json f = Json::MakeObject();
  f["job"] = job.id;
  f["step"] = job.kind;
  f["attempt"] = job.attempts;
  if (const Json* bug = job.payload.Find("bug"); bug && bug->is_number()) {
    f["bug"] = *bug;
  }
  if (const Json* c = job.payload.Find("commit"); c && c->is_string()) {
    f["commit"] = *c;
  }
  return f;
}

bool RetryableStepError(const Status& s) {
  return s.code() != StatusCode::kInvalidArgument &&
         s.code() != StatusCode::kFailedPrecondition &&
         s.code() != StatusCode::kNotFound;
}

Status RunLeasedJob(StepContext& ctx, JobQueue& queue, const Job& job,
                    const StepHandler& handler, const std::string& worker,
                    const std::atomic<bool>& stopping) {
  Json fields = JobLogFields(job);
  fields["worker"] = worker;
  LogScope scope(fields);
  Json start = Json::MakeObject();
  start["payload"] = job.payload;
  LogWithFields(spdlog::level::info, "job started", start);
  const auto t0 = std::chrono::steady_clock::now();
  ctx.BeginJob(job.id, job.attempts);
  StatusOr<Json> result = handler(ctx, job);
  ctx.BeginJob(0, 0);
  Json end = Json::MakeObject();
  end["duration_ms"] = static_cast<int64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - t0)
          .count());
  if (Status s = ReleaseScratches(*ctx.paths, job.id); !s.ok()) {
    spdlog::warn("job {}: {}", job.id, s.message());
  }
  if (result.ok()) {
    LogWithFields(spdlog::level::info, "job done", end);
    return queue.Complete(LeaseOf(job), *result);
  }
  end["error"] = result.status().message();
  if (stopping) {
    LogWithFields(spdlog::level::info,
                  "job interrupted: queued again for the next start", end);
    return queue.Release(LeaseOf(job));
  }
  StatusOr<JobState> state = queue.Fail(LeaseOf(job), result.status().message(),
                                        RetryableStepError(result.status()));
  if (!state.ok()) return state.status();
  switch (*state) {
    case JobState::kQueued:
      LogWithFields(spdlog::level::warn, "job failed: will be retried", end);
      break;
    case JobState::kParked:
      LogWithFields(spdlog::level::err, "job parked: needs a human", end);
      break;
    default:
      LogWithFields(spdlog::level::warn, "job failed for good", end);
      break;
  }
  return Status::Ok();
}

}  // namespace trench::orchestrator
