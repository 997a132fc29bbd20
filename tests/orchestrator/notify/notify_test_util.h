// Helpers of the notification tests: a notify setup for loopback
// receivers and the checks of what a receiver got.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "base/hmac.h"
#include "orchestrator/notify/notifier.h"
#include "orchestrator/notify/notify_outbox.h"
#include "orchestrator/notify/notify_setup.h"
#include "orchestrator/store/store.h"
#include "tests/agents/scripted_llm_server.h"
#include "tests/orchestrator/unused_port.h"

namespace trench::orchestrator::testing {

inline NotifyDestination Webhook(const std::string& url,
                                 const std::string& secret,
                                 std::set<std::string> kinds = {}) {
  NotifyDestination d;
  d.channel = NotifyChannel::kWebhook;
  d.key = "webhook:" + url;
  d.url = url;
  d.secret = secret;
  d.kinds = std::move(kinds);
  return d;
}

// Whether the request's X-Trench-Signature is the HMAC of its raw body.
inline bool SignatureValid(const agents::testing::RecordedRequest& r,
                           const std::string& secret) {
  return r.Header("x-trench-signature") ==
         "sha256=" + HmacSha256Hex(secret, r.body);
}

// The outbox's rows in `state` (all when empty).
inline std::vector<OutboxRow> OutboxRows(Store* store,
                                         const std::string& state = "") {
  StatusOr<std::vector<OutboxRow>> rows = ListOutbox(store, state);
  EXPECT_TRUE(rows.ok()) << rows.status().message();
  return rows.ok() ? *rows : std::vector<OutboxRow>();
}

// A notifier on the store at `path` with `setup` and `clock`.
inline std::unique_ptr<Notifier> TestNotifier(const std::string& path,
                                              NotifySetup setup, Clock* clock) {
  NotifierOptions o;
  o.setup = std::move(setup);
  o.clock = clock;
  o.send_timeout_seconds = 60;  // A bound, not a speed.
  StatusOr<std::unique_ptr<Notifier>> n = Notifier::Open(path, std::move(o));
  EXPECT_TRUE(n.ok()) << n.status().message();
  return n.ok() ? std::move(*n) : nullptr;
}

// Forks a notifier on the store at `path` (system clock, fast polls,
// backfill from event 1: whichever child comes first starts there); the
// child runs until killed.
inline pid_t StartNotifierChild(const std::string& path,
                                const NotifySetup& setup) {
  const pid_t pid = fork();
  if (pid == 0) {
    NotifierOptions o;
    o.setup = setup;
    o.backfill = true;
    o.poll_seconds = 0.02;
    o.send_timeout_seconds = 30;
    auto n = Notifier::Open(path, std::move(o));
    if (!n.ok()) _exit(2);
    (*n)->Run();
    _exit(0);
  }
  return pid;
}

// SIGKILLs and reaps a child.
inline void KillChild(pid_t pid) {
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
}

}  // namespace trench::orchestrator::testing
