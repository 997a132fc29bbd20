// Webhook notifications: the JSON body of one event, and its POST.
//
// Body (compact JSON, built once when the delivery is queued, so that a
// resend carries the same bytes and signature):
//   {"delivery": "<delivery id>", "kind": "finding" | "<state>",
//    "event": <the event as GET /api/v1/events shows it>,
//    "bug": {"id", "title", "state", "signature"},   as at queueing time
//    "link": "/bugs/<id>"}                           the dashboard's path
// Headers: Content-Type: application/json, User-Agent: trench-notify,
//   X-Trench-Event: <kind>, X-Trench-Delivery: <delivery id> (the same on
//   every resend: receivers drop repeats by it),
//   X-Trench-Signature: sha256=<hex HMAC-SHA256 of the raw body under the
//   webhook's secret> (base/hmac.h).
#pragma once

#include <atomic>
#include <string>

#include "base/json.h"
#include "orchestrator/notify/notify_send.h"
#include "orchestrator/notify/notify_setup.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

std::string WebhookBody(const std::string& delivery_id, const Event& event,
                        const Bug& bug);

// "sha256=<hex>" of `body` under `secret`.
std::string WebhookSignature(const std::string& secret,
                             const std::string& body);

// POSTs `body` to the destination. `cancel` (may be null) aborts the
// request (a kRetry). Classified as notify_send.h says.
SendResult SendWebhook(const NotifyDestination& destination,
                       const std::string& delivery_id, const std::string& kind,
                       const std::string& body, double timeout_seconds,
                       const std::atomic<bool>* cancel);

}  // namespace trench::orchestrator
