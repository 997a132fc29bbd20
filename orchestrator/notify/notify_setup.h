// What the notifier sends where: the config's "notify" section
// (config/notify_config.h) resolved at start-up into destinations, with
// the secrets read from the environment.
//
// An event's kind is "finding" for a bug's creation (a finding or a
// report) and the lifecycle state name of the move's target otherwise
// ("reproduced", "proposed", ...). A webhook gets the kinds its "events"
// list names (all when absent); e-mail gets "finding" (a new bug) and
// "proposed" (a proposed patch).
//
// Errors of ResolveNotifyConfig: kInvalidArgument naming the field and
// the problem: "notify.webhooks[0].secret_env: TRENCH_HOOK_SECRET is not
// set", an unknown kind (listing the valid ones), a webhook URL given
// twice, an address that is not one.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "orchestrator/config/notify_config.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

enum class NotifyChannel { kWebhook, kEmail };
// "webhook", "email": the outbox's channel column and the metrics' label.
std::string_view NotifyChannelName(NotifyChannel channel);
inline constexpr NotifyChannel kNotifyChannels[] = {NotifyChannel::kWebhook,
                                                    NotifyChannel::kEmail};

struct NotifyDestination {
  // The outbox's destination column: "webhook:<url>" or "email". One
  // delivery per (event, key), ever.
  std::string key;
  NotifyChannel channel = NotifyChannel::kWebhook;
  // Webhook.
  std::string url;
  std::string secret;
  std::set<std::string> kinds;  // Empty: every kind.
  // E-mail.
  NotifyEmailConfig email;
  std::string username, password;  // "" : no SMTP AUTH.

  bool Wants(const std::string& kind) const;
};

struct NotifySetup {
  std::vector<NotifyDestination> destinations;
  int max_attempts = 8;
  double backoff_seconds = 30;
  double max_age_seconds = 172800;

  const NotifyDestination* Find(const std::string& key) const;
};

// "finding" for a creation event, "" for a note (no state change: never
// sent), else BugStateName(event.to).
std::string NotifyEventKind(const Event& event);

// Reads a variable: the value, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
// The process environment (getenv).
std::optional<std::string> ProcessEnv(const std::string& name);

StatusOr<NotifySetup> ResolveNotifyConfig(const NotifyConfig& config,
                                          const EnvLookup& env = ProcessEnv);

}  // namespace trench::orchestrator
