#include "orchestrator/pipeline/fallback_reason.h"

#include <cctype>
#include <string>

#include "base/status.h"

namespace trench::orchestrator {
namespace {

struct Entry {
  FallbackReason reason;
  std::string_view name;
  bool backend_error;
};

constexpr Entry kEntries[] = {
#define TRENCH_FALLBACK_REASON(e, name, backend_error, meaning) \
  {FallbackReason::e, name, backend_error != 0},
#include "orchestrator/pipeline/fallback_reasons.def"
};

constexpr FallbackReason kAll[] = {
#define TRENCH_FALLBACK_REASON(e, name, backend_error, meaning) \
  FallbackReason::e,
#include "orchestrator/pipeline/fallback_reasons.def"
};

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The first HTTP status named in `text` ("...: HTTP 503 after 5 attempts"),
// or 0.
int HttpStatusIn(std::string_view text) {
  constexpr std::string_view kHttp = "HTTP ";
  for (size_t pos = text.find(kHttp); pos != std::string_view::npos;
       pos = text.find(kHttp, pos + 1)) {
    std::string_view digits = text.substr(pos + kHttp.size(), 4);
    if (digits.size() >= 3 && std::isdigit(digits[0]) &&
        std::isdigit(digits[1]) && std::isdigit(digits[2]) &&
        (digits.size() == 3 || !std::isdigit(digits[3]))) {
      return (digits[0] - '0') * 100 + (digits[1] - '0') * 10 +
             (digits[2] - '0');
    }
  }
  return 0;
}

// A backend error: "<CODE>: <message>" (Status::ToString).
FallbackReason ClassifyBackendError(std::string_view error) {
  auto code_is = [&](StatusCode code) {
    return StartsWith(error, std::string(StatusCodeName(code)) + ":");
  };
  const int http = HttpStatusIn(error);
  if (code_is(StatusCode::kResourceExhausted)) {
    return error.find("quota") != std::string_view::npos
               ? FallbackReason::kQuota
               : FallbackReason::kRateLimit;
  }
  if (code_is(StatusCode::kDeadlineExceeded)) return FallbackReason::kTimeout;
  if (code_is(StatusCode::kIoError)) {
    return http >= 500 ? FallbackReason::kServerError
                       : FallbackReason::kTransport;
  }
  if (code_is(StatusCode::kInvalidArgument)) {
    if (http == 404) return FallbackReason::kNotFound;
    if (http >= 400 && http < 500) return FallbackReason::kHttp4xx;
    return FallbackReason::kMalformedReply;
  }
  if (code_is(StatusCode::kFailedPrecondition)) {
    return FallbackReason::kTransport;  // e.g. a refused redirect.
  }
  return FallbackReason::kOther;
}

}  // namespace

std::span<const FallbackReason> AllFallbackReasons() { return kAll; }

std::string_view FallbackReasonName(FallbackReason reason) {
  for (const Entry& e : kEntries) {
    if (e.reason == reason) return e.name;
  }
  return "other";
}

bool IsBackendError(FallbackReason reason) {
  for (const Entry& e : kEntries) {
    if (e.reason == reason) return e.backend_error;
  }
  return false;
}

FallbackReason ClassifyFallback(std::string_view brain_reason) {
  if (StartsWith(brain_reason, "budget")) return FallbackReason::kBudget;
  if (StartsWith(brain_reason, "loop")) return FallbackReason::kLoop;
  constexpr std::string_view kBackend = "backend_error: ";
  if (StartsWith(brain_reason, kBackend)) {
    return ClassifyBackendError(brain_reason.substr(kBackend.size()));
  }
  return FallbackReason::kOther;
}

}  // namespace trench::orchestrator
