// The API's routing, authentication and read endpoints; reports are in
// api_reports.cc.
#include "orchestrator/api/api_handlers.h"

#include <cctype>
#include <charconv>
#include <chrono>
#include <initializer_list>
#include <optional>

#include "base/display_text.h"
#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/api_query.h"
#include "orchestrator/api/metrics.h"
#include "orchestrator/api/web_assets.h"
#include "orchestrator/api/web_data.h"
#include "orchestrator/pipeline/pipeline.h"
#include "orchestrator/pipeline/triage_verbs.h"

namespace trench::orchestrator {
namespace {

constexpr std::string_view kBugsPrefix = "/api/v1/bugs/";
constexpr std::string_view kPatchesPrefix = "/api/v1/patches/";
constexpr std::string_view kReviewSuffix = "/review";
constexpr std::string_view kRetrySuffix = "/retry";
// The jobs a bug's page lists (newest first).
constexpr int kBugPageJobs = 50;

}  // namespace

ApiResponse ApiHandlers::Handle(const ApiRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  ApiResponse response;
  {
    std::lock_guard<std::mutex> lock(mu_);
    response = Route(request);
  }
  http_metrics_.Record(
      request.path, request.method, response.status,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  return response;
}

void ApiHandlers::SetExecutor(const Executor* runner) {
  std::lock_guard<std::mutex> lock(mu_);
  runner_ = runner;
}

ApiResponse ApiHandlers::Route(const ApiRequest& request) {
  const std::string& p = request.path;
  const bool get = request.method == "GET";
  const bool post = request.method == "POST";
  if (std::optional<ApiResponse> web = ServeWeb(request)) return *web;
  if (p == "/healthz") {
    if (!get) return MethodNotAllowed(request, "GET");
    return JsonResponse(200, JsonDoc{{"status", "ok"}});
  }
  if (request.method != "POST" && (p == "/metrics" || p.starts_with("/api/"))) {
    if (std::optional<ApiResponse> denied = CheckRead(request)) return *denied;
  }
  if (p == "/metrics") {
    return get ? Metrics() : MethodNotAllowed(request, "GET");
  }
  // The dashboard's data (web_data.h), GET /api/v1/bugs included.
  if (std::optional<ApiResponse> web =
          RouteWebData(store_, options_, request)) {
    return *web;
  }
  if (p == "/api/v1/events") {
    return get ? ListEvents(request) : MethodNotAllowed(request, "GET");
  }
  if (p == "/api/v1/events/stream") {
    return get ? StreamEvents(request) : MethodNotAllowed(request, "GET");
  }
  if (std::optional<ApiResponse> jobs = RouteJobs(request)) return *jobs;
  if (std::optional<ApiResponse> t = RouteTriage(request)) return *t;
  if (p.starts_with(kBugsPrefix) && p.size() > kBugsPrefix.size() &&
      p.find('/', kBugsPrefix.size()) == std::string::npos) {
    if (!get) return MethodNotAllowed(request, "GET");
    return GetBug(std::string_view(p).substr(kBugsPrefix.size()));
  }
  if (p.starts_with(kBugsPrefix) && p.ends_with(kRetrySuffix) &&
      p.size() > kBugsPrefix.size() + kRetrySuffix.size()) {
    if (!post) return MethodNotAllowed(request, "POST");
    if (std::optional<ApiResponse> denied = CheckToken(request)) {
      return *denied;
    }
    return Retry(std::string_view(p).substr(
        kBugsPrefix.size(),
        p.size() - kBugsPrefix.size() - kRetrySuffix.size()));
  }
  const bool is_review =
      p.starts_with(kPatchesPrefix) && p.ends_with(kReviewSuffix) &&
      p.size() > kPatchesPrefix.size() + kReviewSuffix.size();
  if (p == "/api/v1/reports" || is_review) {
    if (!post) return MethodNotAllowed(request, "POST");
    if (std::optional<ApiResponse> denied = CheckToken(request)) {
      return *denied;
    }
    if (!is_review) return PostReport(request);
    std::string_view id = std::string_view(p).substr(
        kPatchesPrefix.size(),
        p.size() - kPatchesPrefix.size() - kReviewSuffix.size());
    return Review(id, request);
  }
  return ErrorResponse(404, "not_found", "no route for " + p);
}

namespace {

// 401 without "Authorization: Bearer <x>", 403 when x is none of `tokens`.
std::optional<ApiResponse> CheckBearer(
    const ApiRequest& request, std::initializer_list<std::string_view> tokens,
    std::string_view what) {
  auto it = request.headers.find("authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (it == request.headers.end() || !it->second.starts_with(kBearer)) {
    ApiResponse r = ErrorResponse(
        401, "unauthorized",
        std::string(what) +
            " and needs an 'Authorization: Bearer <token>' header");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
  }
  const std::string_view given =
      std::string_view(it->second).substr(kBearer.size());
  bool match = false;
  for (std::string_view t : tokens) {
    // Every token is compared (no early exit), each in constant time.
    match = (!t.empty() && ConstantTimeEquals(given, t)) || match;
  }
  if (!match)
    return ErrorResponse(403, "forbidden", "the bearer token is not valid");
  return std::nullopt;
}

// A request another site's page made the browser send (CSRF), by its
// Origin or Sec-Fetch-Site header: the reason, or "".
std::string CrossSiteReason(const ApiRequest& request) {
  if (auto s = request.headers.find("sec-fetch-site");
      s != request.headers.end() && s->second == "cross-site") {
    return "a cross-site request (Sec-Fetch-Site: cross-site)";
  }
  auto origin = request.headers.find("origin");
  if (origin == request.headers.end()) return "";
  auto host = request.headers.find("host");
  const std::string own =
      host == request.headers.end() ? std::string() : "http://" + host->second;
  if (origin->second == own) return "";
  return "a request from another origin (Origin: " +
         OneLine(origin->second, 200) + ")";
}

bool IsJsonContentType(std::string_view type) {
  const std::string_view base = type.substr(0, type.find(';'));
  std::string lower;
  for (char c : base) {
    if (c != ' ' && c != '\t')
      lower += std::tolower(static_cast<unsigned char>(c));
  }
  return lower == "application/json";
}

}  // namespace

std::optional<ApiResponse> ApiHandlers::CheckToken(
    const ApiRequest& request) const {
  if (std::string why = CrossSiteReason(request); !why.empty()) {
    return ErrorResponse(403, "forbidden",
                         "refused " + why +
                             ": state changes are accepted only from the "
                             "daemon's own pages and from API clients");
  }
  if (options_.token.empty()) {
    return ErrorResponse(403, "forbidden",
                         "writes are disabled: the daemon has no API token "
                         "configured");
  }
  if (std::optional<ApiResponse> denied =
          CheckBearer(request, {options_.token}, "this request writes")) {
    return denied;
  }
  // From a browser (it names the origin), a body must be declared JSON:
  // what no cross-site form can send without a CORS preflight. Other
  // clients (curl -d, libcurl) may leave their default type.
  const bool from_browser = request.headers.count("origin") > 0 ||
                            request.headers.count("sec-fetch-site") > 0;
  if (from_browser && !request.body.empty()) {
    auto type = request.headers.find("content-type");
    if (type == request.headers.end() || !IsJsonContentType(type->second)) {
      return ErrorResponse(
          415, "unsupported_media_type",
          "a request body from a browser must be JSON, sent with "
          "'Content-Type: application/json'");
    }
  }
  return std::nullopt;
}

std::optional<ApiResponse> ApiHandlers::CheckRead(
    const ApiRequest& request) const {
  if (options_.read_token.empty()) return std::nullopt;
  return CheckBearer(request, {options_.read_token, options_.token},
                     "reading needs a token on this daemon");
}

ApiResponse ApiHandlers::GetBug(std::string_view id_text) {
  std::optional<int64_t> id = ParsePositive(id_text);
  if (!id) {
    return ErrorResponse(404, "not_found",
                         "no bug '" + std::string(id_text) +
                             "' (bug ids are positive integers)");
  }
  StatusOr<Bug> bug = store_->GetBug(*id);
  if (!bug.ok()) return StatusResponse(bug.status());
  StatusOr<std::vector<Event>> events =
      store_->ListEvents(*id, 0, options_.max_limit);
  if (!events.ok()) return StatusResponse(events.status());
  StatusOr<std::vector<Patch>> patches = store_->ListPatches(*id);
  if (!patches.ok()) return StatusResponse(patches.status());
  JobQueue queue(store_);
  StatusOr<std::vector<Job>> jobs = JobsOfBug(queue, *id, kBugPageJobs);
  if (!jobs.ok()) return StatusResponse(jobs.status());
  BugPage page{std::move(*bug), std::move(*events), std::move(*patches), {}};
  for (const Job& job : *jobs) page.jobs.push_back(BugJobOf(job));
  return JsonResponse(200, ToJson(page));
}

ApiResponse ApiHandlers::Retry(std::string_view id_text) {
  std::optional<int64_t> id = ParsePositive(id_text);
  if (!id) {
    return ErrorResponse(404, "not_found",
                         "no bug '" + std::string(id_text) +
                             "' to retry (bug ids are positive integers)");
  }
  StatusOr<Bug> bug = store_->GetBug(*id);
  if (!bug.ok()) return StatusResponse(bug.status());
  JobQueue queue(store_);
  StatusOr<std::vector<int64_t>> retried = RetryBugSteps(queue, *id);
  if (!retried.ok()) return StatusResponse(retried.status());
  if (retried->empty()) {
    return ErrorResponse(409, "conflict",
                         "bug " + std::to_string(*id) +
                             " has no parked or failed step to retry");
  }
  return JsonResponse(200, ToJson(RetryResult{*id, std::move(*retried)}));
}

ApiResponse ApiHandlers::Review(std::string_view id_text,
                                const ApiRequest& request) {
  std::optional<int64_t> id = ParsePositive(id_text);
  if (!id) {
    return ErrorResponse(404, "not_found",
                         "no bug '" + std::string(id_text) +
                             "' to review (bug ids are positive integers)");
  }
  StatusOr<ReviewRequest> review = ParseReviewRequest(request.body);
  if (!review.ok()) return StatusResponse(review.status());
  const BugState to = review->decision == ReviewRequest::Decision::kApprove
                          ? BugState::kApproved
                          : BugState::kRejected;
  Json evidence = Json::MakeObject();
  evidence["event"] = "reviewed";
  evidence["decision"] = DecisionName(review->decision);
  evidence["comment"] = review->comment.value_or("");
  StatusOr<Bug> bug = store_->TransitionBug(*id, to, "api:review", evidence);
  if (!bug.ok()) return StatusResponse(bug.status());
  if (to == BugState::kApproved && options_.push_on_approve) {
    JobQueue queue(store_);
    // On failure the reconciler queues it (triage_verbs.h).
    (void)QueuePushJob(queue, bug->id);
  }
  return JsonResponse(200, ToJson(ReviewResult{std::move(*bug)}));
}

ApiResponse ApiHandlers::Metrics() {
  StatusOr<std::string> text = RenderMetrics(store_, runner_, &http_metrics_);
  if (!text.ok()) return StatusResponse(text.status());
  ApiResponse r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = std::move(*text);
  return r;
}

}  // namespace trench::orchestrator
