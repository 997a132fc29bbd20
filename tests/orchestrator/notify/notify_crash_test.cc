// The outbox under SIGKILL: a notifier in a child process is killed at
// random moments, again and again, while events are being written; then a
// last one finishes the work. At the loopback receivers every expected
// (event, destination) arrived, no pair got two delivery ids, each
// delivery id carries one event (a resend is byte for byte the same), and
// the outbox ends with no pending row.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "orchestrator/notify/notifier.h"
#include "tests/orchestrator/notify/notify_test_util.h"
#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator {
namespace {

using agents::testing::RecordedRequest;
using agents::testing::ScriptedLlmServer;
using agents::testing::ScriptedReply;
using testing::OutboxRows;
using testing::SignatureValid;
using testing::StoreTest;
using testing::Webhook;

constexpr char kSecretA[] = "secret-a";
constexpr char kSecretB[] = "secret-b";

class NotifyCrashTest : public StoreTest {
 protected:
  pid_t StartChild(const NotifySetup& setup) {
    return testing::StartNotifierChild(path_, setup);
  }
  static void Kill(pid_t pid) { testing::KillChild(pid); }
};

TEST_F(NotifyCrashTest, SigkillAtRandomMomentsLosesNoneAndDuplicatesNone) {
  ScriptedLlmServer a, b;
  ASSERT_TRUE(a.ok() && b.ok());
  // a's first request is never answered: its sender is killed mid-send,
  // and the delivery must come again with the same id.
  a.Enqueue(ScriptedReply::Hang());
  for (int i = 0; i < 5000; ++i) {
    a.Enqueue(ScriptedReply::WithText(200, "ok"));
    b.Enqueue(ScriptedReply::WithText(204, ""));
  }
  NotifySetup setup;
  const std::string url_a = a.url() + "/a", url_b = b.url() + "/b";
  setup.destinations.push_back(Webhook(url_a, kSecretA));
  setup.destinations.push_back(Webhook(url_b, kSecretB, {"finding"}));
  setup.backoff_seconds = 0.01;
  setup.max_attempts = 1000;

  StoreOptions so;
  auto opened = Store::Open(path_, so);
  ASSERT_TRUE(opened.ok());
  Store* store = opened->get();
  std::vector<int64_t> bugs;
  auto write_events = [&](int n) {
    for (int i = 0; i < n; ++i) {
      if (bugs.empty() || i % 2 == 0) {
        auto id = store->CreateBug({.title = "bug"}, "fuzzer", Json());
        ASSERT_TRUE(id.ok());
        bugs.push_back(*id);
      } else {
        // The oldest bug still new moves on.
        for (int64_t id : bugs) {
          if (store->GetBug(id)->state == BugState::kNew) {
            ASSERT_TRUE(
                store->TransitionBug(id, BugState::kReproduced, "r", Json())
                    .ok());
            break;
          }
        }
      }
    }
  };

  // The hung send, killed.
  write_events(1);
  pid_t pid = StartChild(setup);
  a.WaitForRequests(1);
  Kill(pid);

  std::mt19937 rng(20);  // Reproducible moments.
  for (int round = 0; round < 40; ++round) {
    pid = StartChild(setup);
    std::uniform_int_distribution<int> events(0, 3), wait_us(0, 40'000);
    write_events(events(rng));
    std::this_thread::sleep_for(std::chrono::microseconds(wait_us(rng)));
    Kill(pid);
  }

  // Every (event, destination) the config asks for.
  auto all = store->ListEvents(std::nullopt, 0, 100000);
  ASSERT_TRUE(all.ok());
  std::set<std::pair<int64_t, std::string>> expected;
  for (const Event& e : *all) {
    expected.insert({e.id, "a"});
    if (!e.from) expected.insert({e.id, "b"});
  }
  // A last notifier finishes the work.
  pid = StartChild(setup);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::minutes(3);
  while (std::chrono::steady_clock::now() < deadline) {
    if (OutboxRows(store).size() == expected.size() &&
        OutboxRows(store, "pending").empty()) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  Kill(pid);

  std::map<std::string, std::set<std::string>> bodies_of;  // delivery -> bodies
  std::map<std::string, std::set<int64_t>> events_of;      // delivery -> events
  std::map<std::pair<int64_t, std::string>, std::set<std::string>> ids_of;
  size_t repeats = 0;
  auto collect = [&](const std::vector<RecordedRequest>& got,
                     const std::string& dest, const char* secret) {
    std::set<std::string> seen;
    for (const RecordedRequest& r : got) {
      EXPECT_TRUE(SignatureValid(r, secret));
      auto body = r.JsonBody();
      ASSERT_TRUE(body.ok()) << r.body;
      const std::string delivery = r.Header("x-trench-delivery");
      const int64_t event = (*body)["event"]["id"].int64_value();
      EXPECT_EQ((*body)["delivery"].string_value(), delivery);
      bodies_of[delivery].insert(r.body);
      events_of[delivery].insert(event);
      ids_of[{event, dest}].insert(delivery);
      if (!seen.insert(delivery).second) ++repeats;
    }
  };
  collect(a.requests(), "a", kSecretA);
  collect(b.requests(), "b", kSecretB);

  std::set<std::pair<int64_t, std::string>> received;
  for (const auto& [pair, ids] : ids_of) {
    received.insert(pair);
    EXPECT_EQ(ids.size(), 1u) << "event " << pair.first << " to " << pair.second
                              << " got " << ids.size() << " delivery ids";
  }
  EXPECT_EQ(received, expected);
  for (const auto& [delivery, events] : events_of) {
    EXPECT_EQ(events.size(), 1u) << delivery;
    EXPECT_EQ(bodies_of[delivery].size(), 1u) << delivery;
  }
  EXPECT_GE(repeats, 1u);  // At least the hung one was sent again.
  EXPECT_EQ(OutboxRows(store).size(), expected.size());
  EXPECT_TRUE(OutboxRows(store, "pending").empty());
  for (const OutboxRow& r : OutboxRows(store)) EXPECT_EQ(r.state, "sent");
  std::cout << expected.size() << " deliveries of " << all->size()
            << " events, " << repeats << " sent again after a kill\n";
}

}  // namespace
}  // namespace trench::orchestrator
