// The HTTP API's own counters, for GET /metrics: requests by route,
// method and status code, and their latency by route, since the daemon
// started. A route is the pattern the request matched
// ("/api/v1/bugs/{id}"), never the raw path: paths are the client's to
// choose and unbounded; a path no route knows is "other". Methods other
// than the HTTP standard ones are "other" too, so the series are bounded.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace trench::orchestrator {

// Counts of observations in buckets with upper bounds `bounds`
// (ascending; the +Inf bucket is implicit).
struct Histogram {
  explicit Histogram(std::vector<double> upper_bounds = {})
      : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}
  void Observe(double value);

  std::vector<double> bounds;
  std::vector<int64_t> counts;  // Per bucket (not cumulative); last: +Inf.
  double sum = 0;
  int64_t count = 0;
};

// The route pattern of `path` (without the query): one of the API's
// routes (api_handlers.h), or "other".
std::string_view RouteOf(std::string_view path);
// `method` when it is a standard HTTP method, "other" otherwise.
std::string_view MethodLabel(std::string_view method);

class HttpMetrics {
 public:
  // The latency buckets, in seconds.
  static const std::vector<double>& LatencyBounds();

  // Counts one answered request. Thread-safe.
  void Record(std::string_view path, std::string_view method, int status,
              double seconds);

  struct Snapshot {
    // (route, method, status code) -> requests.
    std::map<std::tuple<std::string, std::string, int>, int64_t> requests;
    std::map<std::string, Histogram> latency;  // By route.
  };
  // A copy of the counts now. Thread-safe.
  Snapshot Read() const;

 private:
  mutable std::mutex mu_;
  Snapshot counts_;  // GUARDED_BY(mu_)
};

}  // namespace trench::orchestrator
