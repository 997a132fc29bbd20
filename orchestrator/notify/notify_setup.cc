// The notify section resolved into destinations (notify_setup.h).
#include "orchestrator/notify/notify_setup.h"

#include <cstdlib>

#include "orchestrator/store/lifecycle.h"

namespace trench::orchestrator {
namespace {

constexpr char kFinding[] = "finding";

std::string ValidKinds() {
  return std::string(kFinding) + ", " + BugStateNames();
}

// A bare address: local@domain, no spaces, brackets, quotes or controls
// (it goes into headers and SMTP commands as is).
bool IsPlainAddress(const std::string& a) {
  const size_t at = a.find('@');
  if (at == std::string::npos || at == 0 || at + 1 == a.size() ||
      a.find('@', at + 1) != std::string::npos) {
    return false;
  }
  for (unsigned char c : a) {
    if (c <= ' ' || c >= 0x7f || c == '<' || c == '>' || c == '"' || c == ',' ||
        c == '(' || c == ')' || c == ';' || c == '\\') {
      return false;
    }
  }
  return true;
}

StatusOr<std::string> Secret(const EnvLookup& env, const std::string& field,
                             const std::string& name) {
  std::optional<std::string> v = env(name);
  if (!v || v->empty()) {
    return InvalidArgument(field + ": " + name + " is not set");
  }
  return *v;
}

}  // namespace

std::string_view NotifyChannelName(NotifyChannel channel) {
  return channel == NotifyChannel::kWebhook ? "webhook" : "email";
}

bool NotifyDestination::Wants(const std::string& kind) const {
  if (channel == NotifyChannel::kEmail) {
    return kind == kFinding || kind == BugStateName(BugState::kProposed);
  }
  return kinds.empty() || kinds.count(kind) > 0;
}

const NotifyDestination* NotifySetup::Find(const std::string& key) const {
  for (const NotifyDestination& d : destinations) {
    if (d.key == key) return &d;
  }
  return nullptr;
}

std::string NotifyEventKind(const Event& event) {
  if (!event.from) return kFinding;
  if (*event.from == event.to) return "";  // A note: no state change.
  return std::string(BugStateName(event.to));
}

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

StatusOr<NotifySetup> ResolveNotifyConfig(const NotifyConfig& config,
                                          const EnvLookup& env) {
  NotifySetup s;
  s.max_attempts = config.max_attempts;
  s.backoff_seconds = config.backoff_seconds;
  s.max_age_seconds = config.max_age_seconds;
  for (size_t i = 0; i < config.webhooks.size(); ++i) {
    const NotifyWebhookConfig& w = config.webhooks[i];
    const std::string field = "notify.webhooks[" + std::to_string(i) + "]";
    NotifyDestination d;
    d.channel = NotifyChannel::kWebhook;
    d.key = "webhook:" + w.url;
    d.url = w.url;
    if (s.Find(d.key) != nullptr) {
      return InvalidArgument(field + ".url: " + w.url +
                             " is given twice (one webhook per URL)");
    }
    ASSIGN_OR_RETURN(d.secret,
                     Secret(env, field + ".secret_env", w.secret_env));
    for (const std::string& kind : w.events) {
      if (kind != kFinding && !ParseBugState(kind).ok()) {
        return InvalidArgument(field + ".events: \"" + kind +
                               "\" is not an event kind (" + ValidKinds() +
                               ")");
      }
      d.kinds.insert(kind);
    }
    s.destinations.push_back(std::move(d));
  }
  const NotifyEmailConfig& e = config.email;
  if (!e.smtp_url.empty()) {
    NotifyDestination d;
    d.channel = NotifyChannel::kEmail;
    d.key = "email";
    d.email = e;
    if (!IsPlainAddress(e.from)) {
      return InvalidArgument("notify.email.from: \"" + e.from +
                             "\" is not a plain address (name@domain)");
    }
    for (const std::string& to : e.to) {
      if (!IsPlainAddress(to)) {
        return InvalidArgument("notify.email.to: \"" + to +
                               "\" is not a plain address (name@domain)");
      }
    }
    if (!e.username_env.empty()) {
      ASSIGN_OR_RETURN(
          d.username, Secret(env, "notify.email.username_env", e.username_env));
    }
    if (!e.password_env.empty()) {
      ASSIGN_OR_RETURN(
          d.password, Secret(env, "notify.email.password_env", e.password_env));
    }
    s.destinations.push_back(std::move(d));
  }
  return s;
}

}  // namespace trench::orchestrator
