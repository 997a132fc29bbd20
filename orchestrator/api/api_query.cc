#include "orchestrator/api/api_query.h"

#include <algorithm>
#include <charconv>

namespace trench::orchestrator {
namespace {

constexpr size_t kMaxIdempotencyKey = 255;

}  // namespace

ApiResponse MethodNotAllowed(const ApiRequest& request,
                             std::string_view allowed) {
  ApiResponse r =
      ErrorResponse(405, "method_not_allowed",
                    request.method + " is not allowed on " + request.path +
                        " (allowed: " + std::string(allowed) + ")");
  r.headers.emplace_back("Allow", std::string(allowed));
  return r;
}

std::optional<int64_t> ParsePositive(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v <= 0) {
    return std::nullopt;
  }
  return v;
}

StatusOr<int64_t> QueryInt(const ApiRequest& request, const std::string& key,
                           int64_t fallback, int64_t min_value) {
  auto it = request.query.find(key);
  if (it == request.query.end()) return fallback;
  int64_t v = 0;
  const std::string& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min_value) {
    return InvalidArgument("query parameter '" + key +
                           "' must be an integer >= " +
                           std::to_string(min_value) + ", got '" + s + "'");
  }
  return v;
}

StatusOr<int> QueryLimit(const ApiRequest& request, const ApiOptions& options) {
  ASSIGN_OR_RETURN(int64_t limit,
                   QueryInt(request, "limit", options.default_limit, 1));
  return static_cast<int>(std::min<int64_t>(limit, options.max_limit));
}

StatusOr<std::string> IdempotencyKeyOf(const ApiRequest& request) {
  auto it = request.headers.find("idempotency-key");
  if (it == request.headers.end()) return std::string();
  const std::string& k = it->second;
  bool printable = !k.empty() && k.size() <= kMaxIdempotencyKey;
  for (char c : k) printable &= c > ' ' && c < 0x7f;
  if (!printable) {
    return InvalidArgument(
        "header Idempotency-Key must be 1 to " +
        std::to_string(kMaxIdempotencyKey) +
        " printable ASCII characters without spaces (e.g. a UUID)");
  }
  return k;
}

}  // namespace trench::orchestrator
