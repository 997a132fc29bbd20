#include "agents/llm_retry.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "agents/llm_common.h"
#include "base/lines.h"

namespace trench::agents {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(uint8_t(c)));
  return out;
}

bool Contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

std::optional<double> ParseSeconds(std::string_view v) {
  if (v.empty() || v.size() > 32) return std::nullopt;
  for (char c : v) {
    if (!std::isdigit(uint8_t(c)) && c != '.') return std::nullopt;
  }
  const std::string s(v);
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(d)) return std::nullopt;
  return d;
}

std::optional<std::time_t> ParseHttpDate(std::string_view v) {
  const std::string s(v);
  for (const char* format :
       {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT",
        "%a %b %d %H:%M:%S %Y"}) {
    std::tm tm{};
    const char* end = strptime(s.c_str(), format, &tm);
    if (end != nullptr && *end == '\0') return timegm(&tm);
  }
  return std::nullopt;
}

bool IsCancelled(const RetryBounds& bounds) {
  return bounds.cancel != nullptr && bounds.cancel->load();
}

// Waits `seconds` (through config.sleep when set); a real wait wakes early
// when the call is cancelled.
void Sleep(const LlmConfig& config, double seconds, const RetryBounds& bounds) {
  if (config.sleep) {
    config.sleep(seconds);
    return;
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::max(0.0, seconds)));
  while (!IsCancelled(bounds)) {
    const Clock::time_point now = Clock::now();
    if (now >= end) return;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(end - now, std::chrono::milliseconds(50)));
  }
}

std::string Secs(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", s);
  return buf;
}

}  // namespace

bool IsRetryableStatus(int status) {
  return status == 408 || status == 409 || status == 429 ||
         (status >= 500 && status <= 599);
}

bool IsQuotaError(int status, std::string_view body) {
  if (status < 400 || status > 499) return false;
  const std::string kind = Lower(ErrorBodyKind(body));
  if (Contains(kind, "quota") || Contains(kind, "billing")) return true;
  const std::string message = Lower(ErrorBodyMessage(body));
  return Contains(message, "exceeded your current quota") ||
         Contains(message, "insufficient_quota") ||
         Contains(message, "credit balance");
}

std::optional<double> ParseRetryAfter(std::string_view value, std::time_t now) {
  value = TrimWhitespace(value);
  if (value.empty()) return std::nullopt;
  if (auto seconds = ParseSeconds(value)) return seconds;
  if (auto date = ParseHttpDate(value)) {
    return std::max(0.0, std::difftime(*date, now));
  }
  return std::nullopt;
}

double RetryDelaySeconds(const LlmConfig& config, int retry,
                         const HttpResponse* response, std::time_t now) {
  std::optional<double> delay;
  if (response != nullptr) {
    if (auto ms =
            ParseSeconds(TrimWhitespace(response->Header("retry-after-ms")))) {
      delay = *ms / 1000;
    } else {
      delay = ParseRetryAfter(response->Header("retry-after"), now);
    }
  }
  if (!delay) {
    delay =
        config.initial_backoff_seconds * std::pow(2.0, std::min(retry - 1, 60));
  }
  return std::clamp(*delay, 0.0, std::max(0.0, config.max_backoff_seconds));
}

Status HttpErrorStatus(std::string_view what, const HttpResponse& response,
                       int attempts) {
  std::string message =
      std::string(what) + ": HTTP " + std::to_string(response.status);
  const bool quota = IsQuotaError(response.status, response.body);
  if (quota) message += " (quota exhausted)";
  if (attempts > 1)
    message += " after " + std::to_string(attempts) + " attempts";
  message += ": " + ErrorBodyMessage(response.body);
  if (quota || response.status == 429 || response.status == 529) {
    return ResourceExhausted(std::move(message));
  }
  if (IsRetryableStatus(response.status)) return IoError(std::move(message));
  return InvalidArgument(std::move(message));
}

StatusOr<HttpResponse> FetchWithRetries(
    const LlmConfig& config, std::string_view what,
    const std::function<StatusOr<HttpResponse>()>& attempt, int* attempts) {
  return FetchWithRetries(
      config, what, [&](double) { return attempt(); }, attempts, RetryBounds{});
}

StatusOr<HttpResponse> FetchWithRetries(
    const LlmConfig& config, std::string_view what,
    const std::function<StatusOr<HttpResponse>(double timeout_seconds)>&
        attempt,
    int* attempts, const RetryBounds& bounds) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const bool limited = bounds.time_limit_seconds > 0;
  auto left = [&] {
    return bounds.time_limit_seconds -
           std::chrono::duration<double>(Clock::now() - start).count();
  };
  const std::string limit_text =
      "the time limit of " + Secs(bounds.time_limit_seconds) + " s";
  *attempts = 0;
  const int max_retries = std::max(0, config.max_retries);
  while (true) {
    if (IsCancelled(bounds)) {
      return Cancelled(std::string(what) + ": cancelled");
    }
    double timeout = config.timeout_seconds;
    bool cut = false;
    if (limited) {
      const double rest = left();
      if (rest <= 0) {
        return Status(StatusCode::kDeadlineExceeded,
                      std::string(what) + ": " + limit_text + " ran out");
      }
      cut = rest < timeout;
      timeout = std::min(timeout, rest);
    }
    ++*attempts;
    StatusOr<HttpResponse> result = attempt(timeout);
    bool retry = false;
    if (result.ok()) {
      const int status = result->status;
      if (status >= 200 && status <= 299) return result;
      retry = IsRetryableStatus(status) && !IsQuotaError(status, result->body);
    } else {
      const StatusCode code = result.status().code();
      if (code == StatusCode::kCancelled) return result.status();
      if (code == StatusCode::kDeadlineExceeded && cut) {
        return Status(
            StatusCode::kDeadlineExceeded,
            result.status().message() + " (cut at " + limit_text + ")");
      }
      retry =
          code == StatusCode::kIoError || code == StatusCode::kDeadlineExceeded;
    }
    auto final_error = [&]() -> Status {
      if (result.ok()) return HttpErrorStatus(what, *result, *attempts);
      if (*attempts == 1) return result.status();
      return result.status().WithContext("after " + std::to_string(*attempts) +
                                         " attempts");
    };
    if (!retry || *attempts > max_retries) return final_error();
    const double delay =
        RetryDelaySeconds(config, *attempts, result.ok() ? &*result : nullptr,
                          std::time(nullptr));
    if (limited && delay >= left()) {
      const Status last = final_error();
      return Status(StatusCode::kDeadlineExceeded,
                    std::string(what) + ": " + limit_text +
                        " leaves no time for a retry in " + Secs(delay) +
                        " s; the last attempt: " + last.message());
    }
    Sleep(config, delay, bounds);
  }
}

}  // namespace trench::agents
