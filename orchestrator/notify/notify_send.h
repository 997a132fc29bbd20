// The outcome of one attempt to send a notification, shared by the
// webhook and e-mail senders and read by the outbox (notify_outbox.h).
//   kSent     the receiver took it (HTTP 2xx; SMTP 250 after DATA).
//   kRetry    a transient failure: connection refused or reset, timeout,
//             HTTP 408, 429 or 5xx, SMTP 4xx, a stop mid-send.
//   kRefused  a permanent failure: any other HTTP status (4xx, an
//             unfollowed 3xx), SMTP 5xx, a refused login or STARTTLS, a
//             malformed URL. Recorded, never retried.
#pragma once

#include <string>

namespace trench::orchestrator {

enum class SendOutcome { kSent, kRetry, kRefused };

struct SendResult {
  SendOutcome outcome = SendOutcome::kRetry;
  std::string detail;  // "HTTP 503", curl's message, ...
};

}  // namespace trench::orchestrator
