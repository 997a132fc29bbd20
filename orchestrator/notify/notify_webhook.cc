// Webhook bodies, signatures and the POST (notify_webhook.h).
#include "orchestrator/notify/notify_webhook.h"

#include "agents/http_client.h"
#include "base/hmac.h"
#include "orchestrator/store/records_json.h"

namespace trench::orchestrator {

std::string WebhookBody(const std::string& delivery_id, const Event& event,
                        const Bug& bug) {
  Json body = Json::MakeObject();
  body["delivery"] = delivery_id;
  body["kind"] = NotifyEventKind(event);
  body["event"] = EventToJson(event);
  Json b = Json::MakeObject();
  b["id"] = bug.id;
  b["title"] = bug.title;
  b["state"] = BugStateName(bug.state);
  b["signature"] = bug.signature;
  body["bug"] = std::move(b);
  body["link"] = "/bugs/" + std::to_string(bug.id);
  return body.Dump();
}

std::string WebhookSignature(const std::string& secret,
                             const std::string& body) {
  return "sha256=" + HmacSha256Hex(secret, body);
}

SendResult SendWebhook(const NotifyDestination& destination,
                       const std::string& delivery_id, const std::string& kind,
                       const std::string& body, double timeout_seconds,
                       const std::atomic<bool>* cancel) {
  agents::HttpRequest r;
  r.method = "POST";
  r.url = destination.url;
  r.body = body;
  r.timeout_seconds = timeout_seconds;
  r.connect_timeout_seconds = std::min(timeout_seconds, 10.0);
  r.cancel = cancel;
  r.headers = {
      {"Content-Type", "application/json"},
      {"User-Agent", "trench-notify"},
      {"X-Trench-Event", kind},
      {"X-Trench-Delivery", delivery_id},
      {"X-Trench-Signature", WebhookSignature(destination.secret, body)}};
  StatusOr<agents::HttpResponse> got = agents::HttpFetch(r);
  if (!got.ok()) {
    const StatusCode c = got.status().code();
    const bool permanent = c == StatusCode::kInvalidArgument ||
                           c == StatusCode::kFailedPrecondition;
    return {permanent ? SendOutcome::kRefused : SendOutcome::kRetry,
            got.status().message()};
  }
  const int s = got->status;
  const std::string detail = "HTTP " + std::to_string(s);
  if (s >= 200 && s < 300) return {SendOutcome::kSent, detail};
  if (s == 408 || s == 429 || (s >= 500 && s < 600)) {
    return {SendOutcome::kRetry, detail};
  }
  return {SendOutcome::kRefused, detail};
}

}  // namespace trench::orchestrator
