// Helpers of the notification tests: a notify setup for loopback
// receivers and the checks of what a receiver got.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "base/hmac.h"
#include "orchestrator/notify/notify_outbox.h"
#include "orchestrator/notify/notify_setup.h"
#include "orchestrator/store/store.h"
#include "tests/agents/scripted_llm_server.h"

namespace trench::orchestrator::testing {

// A loopback port that was free a moment ago: bound to 0, read, closed.
// Nobody listens on it (until someone else takes it: retry on a clash).
inline int UnusedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

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
  auto st = store->db()->Prepare(
      "SELECT id, event_id, destination, channel, kind, delivery_id, "
      "payload, state, attempts, next_attempt_ms, last_error, created_ms "
      "FROM notify_outbox WHERE ?1 = '' OR state = ?1 ORDER BY id");
  EXPECT_TRUE(st.ok());
  std::vector<OutboxRow> rows;
  if (!st.ok()) return rows;
  st->BindText(1, state);
  while (true) {
    auto row = st->Step();
    EXPECT_TRUE(row.ok());
    if (!row.ok() || !*row) break;
    OutboxRow r;
    r.id = st->ColumnInt64(0);
    r.event_id = st->ColumnInt64(1);
    r.destination = st->ColumnText(2);
    r.channel = st->ColumnText(3);
    r.kind = st->ColumnText(4);
    r.delivery_id = st->ColumnText(5);
    r.payload = st->ColumnText(6);
    r.state = st->ColumnText(7);
    r.attempts = static_cast<int>(st->ColumnInt64(8));
    r.next_attempt_ms = st->ColumnInt64(9);
    r.last_error = st->ColumnText(10);
    r.created_ms = st->ColumnInt64(11);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace trench::orchestrator::testing
