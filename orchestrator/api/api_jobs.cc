// The job queue's routes: GET /api/v1/jobs, GET /api/v1/jobs/{id}, POST
// /api/v1/jobs/{id}/retry (api_handlers.h).
#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/api_handlers.h"
#include "orchestrator/api/api_query.h"
#include "orchestrator/pipeline/pipeline.h"

namespace trench::orchestrator {
namespace {

constexpr std::string_view kJobs = "/api/v1/jobs";
constexpr std::string_view kJobsPrefix = "/api/v1/jobs/";
constexpr std::string_view kRetrySuffix = "/retry";

ApiResponse NoSuchJob(std::string_view id_text) {
  return ErrorResponse(
      404, "not_found",
      "no job '" + std::string(id_text) + "' (job ids are positive integers)");
}

}  // namespace

std::optional<ApiResponse> ApiHandlers::RouteJobs(const ApiRequest& request) {
  const std::string& p = request.path;
  const bool get = request.method == "GET";
  if (p == kJobs)
    return get ? ListJobs(request) : MethodNotAllowed(request, "GET");
  if (!p.starts_with(kJobsPrefix) || p.size() == kJobsPrefix.size()) {
    return std::nullopt;
  }
  std::string_view rest = std::string_view(p).substr(kJobsPrefix.size());
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) {
    return get ? GetJob(rest) : MethodNotAllowed(request, "GET");
  }
  if (rest.substr(slash) != kRetrySuffix || slash == 0) return std::nullopt;
  if (request.method != "POST") return MethodNotAllowed(request, "POST");
  if (std::optional<ApiResponse> denied = CheckToken(request)) return *denied;
  return RetryJob(rest.substr(0, slash), request);
}

ApiResponse ApiHandlers::ListJobs(const ApiRequest& request) {
  JobFilter filter;
  if (auto it = request.query.find("state"); it != request.query.end()) {
    StatusOr<JobState> state = ParseJobStateShownName(it->second);
    if (!state.ok()) {
      return StatusResponse(
          state.status().WithContext("query parameter 'state'"));
    }
    filter.state = *state;
  }
  if (auto it = request.query.find("kind"); it != request.query.end()) {
    if (it->second.empty()) {
      return ErrorResponse(400, "bad_request",
                           "query parameter 'kind' must not be empty");
    }
    filter.kind = it->second;
  }
  if (request.query.count("bug")) {
    StatusOr<int64_t> bug = QueryInt(request, "bug", 0, 1);
    if (!bug.ok()) return StatusResponse(bug.status());
    filter.key_prefix = BugJobKey(*bug, "");
  }
  StatusOr<int64_t> before = QueryInt(request, "before", 0, 1);
  if (!before.ok()) return StatusResponse(before.status());
  filter.before_id = *before;
  StatusOr<int> limit = QueryLimit(request, options_);
  if (!limit.ok()) return StatusResponse(limit.status());
  filter.limit = *limit;
  JobQueue queue(store_);
  StatusOr<std::vector<Job>> jobs = queue.Find(filter);
  if (!jobs.ok()) return StatusResponse(jobs.status());
  JobList list;
  for (const Job& job : *jobs) list.jobs.push_back(BugJobOf(job));
  if (static_cast<int>(list.jobs.size()) == filter.limit) {
    list.next = list.jobs.back().id;
  }
  return JsonResponse(200, ToJson(list));
}

ApiResponse ApiHandlers::GetJob(std::string_view id_text) {
  std::optional<int64_t> id = ParsePositive(id_text);
  if (!id) return NoSuchJob(id_text);
  JobQueue queue(store_);
  StatusOr<Job> job = queue.Get(*id);
  if (!job.ok()) return StatusResponse(job.status());
  return JsonResponse(200, ToJson(BugJobOf(*job)));
}

ApiResponse ApiHandlers::RetryJob(std::string_view id_text,
                                  const ApiRequest& request) {
  std::optional<int64_t> id = ParsePositive(id_text);
  if (!id) return NoSuchJob(id_text);
  StatusOr<std::string> key = IdempotencyKeyOf(request);
  if (!key.ok()) return StatusResponse(key.status());
  JobQueue queue(store_);
  // 404 before the key is looked at: a key never names an unknown job.
  StatusOr<Job> job = queue.Get(*id);
  if (!job.ok()) return StatusResponse(job.status());
  bool replayed = false;
  if (key->empty()) {
    Status s = queue.Unpark(*id);
    if (!s.ok()) return StatusResponse(s);
  } else {
    StatusOr<bool> once = queue.UnparkOnce(
        *id, *key, options_.idempotency_retention_seconds * 1000);
    if (!once.ok()) return StatusResponse(once.status());
    replayed = *once;
  }
  job = queue.Get(*id);
  if (!job.ok()) return StatusResponse(job.status());
  ApiResponse r = JsonResponse(200, ToJson(JobRetried{BugJobOf(*job)}));
  if (replayed) r.headers.emplace_back("Idempotent-Replayed", "true");
  return r;
}

}  // namespace trench::orchestrator
