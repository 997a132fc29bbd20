// Retry policy of the LLM backends: which replies are retried, how long to
// wait, and which Status a final failure becomes (see agents/llm_client.h).
//
// Retried: HTTP 408, 409, 429, 500-599 (529 included), transport errors
// (kIoError) and timeouts (kDeadlineExceeded). Never retried: quota errors
// (a 4xx whose error type/code says quota or billing, or whose message says
// the quota or credit balance is exhausted) and other 4xx.
// The wait before retry n (1-based) is initial_backoff * 2^(n-1), or the
// server's retry-after-ms / Retry-After (seconds or an HTTP date) when
// given; always capped at max_backoff_seconds. No jitter (deterministic).
#pragma once

#include <atomic>
#include <ctime>
#include <functional>
#include <optional>
#include <string_view>

#include "agents/http_client.h"
#include "agents/llm_client.h"
#include "base/status.h"

namespace trench::agents {

bool IsRetryableStatus(int status);
// True for a 4xx reply that says the account's quota/billing is exhausted.
bool IsQuotaError(int status, std::string_view body);

// Parses a Retry-After value: a non-negative number of seconds, or an
// HTTP date (IMF-fixdate, RFC 850 or asctime), giving the seconds from
// `now` (0 when in the past). nullopt when empty or unparseable.
std::optional<double> ParseRetryAfter(std::string_view value, std::time_t now);

// The wait before retry number `retry` (>= 1), given the reply that failed
// (nullptr after a transport error), capped at config.max_backoff_seconds.
double RetryDelaySeconds(const LlmConfig& config, int retry,
                         const HttpResponse* response, std::time_t now);

// The error for a final non-2xx reply of `what` (e.g. "openai: POST
// http://h/v1/chat/completions"), naming the status and the server's
// message: kResourceExhausted for quota and for 429/529, kIoError for
// other retried statuses, kInvalidArgument for other 4xx (and any other
// status).
Status HttpErrorStatus(std::string_view what, const HttpResponse& response,
                       int attempts);

// Calls `attempt` (one HTTP request) until it gives a 2xx reply, an error
// that is not retried, or max_retries retries are used; sleeps through
// config.sleep (or really) between attempts. Sets *attempts to the number
// of calls made. A 2xx reply is returned as is; a non-2xx one becomes
// HttpErrorStatus; an error from `attempt` is returned with the number of
// attempts added to its message.
StatusOr<HttpResponse> FetchWithRetries(
    const LlmConfig& config, std::string_view what,
    const std::function<StatusOr<HttpResponse>()>& attempt, int* attempts);

// What bounds one call besides the config: ChatRequest::cancel and
// ChatRequest::time_limit_seconds.
struct RetryBounds {
  const std::atomic<bool>* cancel = nullptr;  // Null: never cancelled.
  double time_limit_seconds = 0;              // 0: no limit.
};

// The same, bounded: `attempt` gets the timeout of its request, the
// smaller of config.timeout_seconds and what is left of the time limit.
// The cancel flag is checked before each attempt and during the waits
// between them (a real wait wakes within 50 ms; config.sleep is called
// whole): the result is then kCancelled. No attempt starts when the time
// limit is used up, nor a retry whose wait would use it up: the result is
// kDeadlineExceeded "<what>: the time limit of <n> s ran out ..." with the
// last attempt's error, or that attempt's own kDeadlineExceeded error with
// " (cut at the time limit of <n> s)" when its timeout was the limit's.
StatusOr<HttpResponse> FetchWithRetries(
    const LlmConfig& config, std::string_view what,
    const std::function<StatusOr<HttpResponse>(double timeout_seconds)>&
        attempt,
    int* attempts, const RetryBounds& bounds);

}  // namespace trench::agents
