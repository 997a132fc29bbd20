#include "orchestrator/api/http_metrics.h"

#include <algorithm>

namespace trench::orchestrator {
namespace {

// The API's routes (api_handlers.h: a route added there is added here,
// or its requests count as "other"); "{id}" matches one non-empty path
// segment, "{id}.patch" one that is more than its ".patch" suffix. The jobs
// routes are those of `trench jobs`.
constexpr std::string_view kRoutes[] = {
    "/healthz",
    "/metrics",
    "/api/v1/reports",
    "/api/v1/bugs",
    "/api/v1/bugs/{id}",
    "/api/v1/bugs/{id}/retry",
    "/api/v1/patches/{id}/review",
    "/api/v1/events",
    "/api/v1/events/stream",
    "/api/v1/bugs/{id}/triage",
    "/api/v1/jobs",
    "/api/v1/jobs/{id}",
    "/api/v1/jobs/{id}/retry",
    // The web dashboard's data (web_data.h).
    "/api/v1/overview",
    "/api/v1/signatures",
    "/api/v1/bugs/{id}/view",
    "/api/v1/bugs/{id}/graph.svg",
    "/api/v1/bugs/{id}/case.tar.gz",
    "/api/v1/bugs/{id}/minimized.tar.gz",
    "/api/v1/patches/{id}.patch",
    "/",  // The dashboard's pages and assets (web_assets.h).
    "/bugs",
    "/bugs/{id}",
    "/static/{id}",
};

constexpr std::string_view kMethods[] = {"GET",     "HEAD",    "POST",
                                         "PUT",     "DELETE",  "PATCH",
                                         "OPTIONS", "CONNECT", "TRACE"};

bool Matches(std::string_view pattern, std::string_view path) {
  while (!pattern.empty() || !path.empty()) {
    if (pattern.empty() || path.empty()) return false;
    // Both start with '/': compare one segment.
    if (pattern[0] != '/' || path[0] != '/') return false;
    pattern.remove_prefix(1);
    path.remove_prefix(1);
    const size_t pe = std::min(pattern.find('/'), pattern.size());
    const size_t qe = std::min(path.find('/'), path.size());
    const std::string_view ps = pattern.substr(0, pe), qs = path.substr(0, qe);
    if (ps.starts_with("{id}")) {
      const std::string_view suffix = ps.substr(4);
      if (qs.size() <= suffix.size() || !qs.ends_with(suffix)) return false;
    } else if (ps != qs) {
      return false;
    }
    pattern.remove_prefix(pe);
    path.remove_prefix(qe);
  }
  return true;
}

}  // namespace

void Histogram::Observe(double value) {
  const size_t i =
      std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin();
  ++counts[i];
  sum += value;
  ++count;
}

std::string_view RouteOf(std::string_view path) {
  for (std::string_view route : kRoutes) {
    if (Matches(route, path)) return route;
  }
  return "other";
}

std::string_view MethodLabel(std::string_view method) {
  for (std::string_view m : kMethods) {
    if (m == method) return m;
  }
  return "other";
}

const std::vector<double>& HttpMetrics::LatencyBounds() {
  static const std::vector<double> bounds = {
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  return bounds;
}

void HttpMetrics::Record(std::string_view path, std::string_view method,
                         int status, double seconds) {
  const std::string route(RouteOf(path));
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_.requests[{route, std::string(MethodLabel(method)), status}];
  auto it = counts_.latency.find(route);
  if (it == counts_.latency.end()) {
    it = counts_.latency.emplace(route, Histogram(LatencyBounds())).first;
  }
  it->second.Observe(seconds);
}

HttpMetrics::Snapshot HttpMetrics::Read() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

}  // namespace trench::orchestrator
