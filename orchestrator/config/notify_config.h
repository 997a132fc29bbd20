// The daemon config's "notify" section (daemon_config.h): where trench
// sends notifications of bugs (orchestrator/notify/notifier.h).
//
//   "notify": {
//     "webhooks": [{"url": "https://hooks.example/trench",   http(s)
//                   "secret_env": "TRENCH_HOOK_SECRET",      required: the
//                                 variable holding the HMAC-SHA256 key
//                   "events": ["finding", "proposed"]}],     optional: the
//                                 kinds sent (absent: all): "finding" (a
//                                 new bug) or a lifecycle state name (a
//                                 move to that state)
//     "email": {"smtp_url": "smtp://mail.example:587",  smtp:// or smtps://
//               "from": "trench@example.org", "to": ["dev@example.org"],
//               "username_env": "", "password_env": "",  SMTP AUTH ("":
//                                 none)
//               "starttls": "try"},      "none" | "try" | "require"
//     "max_attempts": 8,            sends of one delivery before it is dead
//     "backoff_seconds": 30,        first retry wait; doubles each retry
//                                   (at most an hour)
//     "max_age_seconds": 172800}    a delivery older than this is dead
//
// The parser checks shapes, types, unknown fields and URL schemes; that
// the named variables are set and the event kinds exist is checked when
// the daemon starts (ResolveNotifyConfig, orchestrator/notify/), naming
// the field.
#pragma once

#include <string>
#include <vector>

namespace trench::orchestrator {

struct NotifyWebhookConfig {
  std::string url;
  std::string secret_env;
  std::vector<std::string> events;  // Empty: every kind.
};

struct NotifyEmailConfig {
  std::string smtp_url;  // "" : no e-mail.
  std::string from;
  std::vector<std::string> to;
  std::string username_env;
  std::string password_env;
  std::string starttls = "try";
};

struct NotifyConfig {
  std::vector<NotifyWebhookConfig> webhooks;
  NotifyEmailConfig email;
  int max_attempts = 8;
  double backoff_seconds = 30;
  double max_age_seconds = 172800;

  bool enabled() const { return !webhooks.empty() || !email.smtp_url.empty(); }
};

}  // namespace trench::orchestrator
