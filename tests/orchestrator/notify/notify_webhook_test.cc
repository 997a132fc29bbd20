// Webhooks end to end against a loopback receiver: the body, the headers
// and the HMAC signature; retries with backoff on transient failures;
// permanent failures recorded and not retried; dead after max_attempts;
// the metrics.
#include "orchestrator/notify/notify_webhook.h"

#include <gtest/gtest.h>

#include "orchestrator/api/metrics.h"
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

constexpr char kSecret[] = "s3cret-key";

class NotifyWebhookTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ASSERT_TRUE(server_.ok()) << server_.status().message();
    store_ = OpenStore(&clock_);
    ASSERT_NE(store_, nullptr);
  }
  std::unique_ptr<Notifier> MakeNotifier(NotifySetup setup) {
    return testing::TestNotifier(path_, std::move(setup), &clock_);
  }
  NotifySetup OneHook(std::set<std::string> kinds = {}) {
    NotifySetup s;
    s.destinations.push_back(Webhook(server_.url() + "/hook", kSecret, kinds));
    s.max_attempts = 3;
    s.backoff_seconds = 10;
    return s;
  }

  ScriptedLlmServer server_;
  std::unique_ptr<Store> store_;
};

TEST_F(NotifyWebhookTest, SendsSignedBodiesOfFindingsAndTransitions) {
  // Events before the notifier first ran are not sent (no backfill).
  ASSERT_TRUE(store_->CreateBug({.title = "old"}, "t", Json()).ok());
  auto notifier = MakeNotifier(OneHook());
  ASSERT_EQ(*notifier->RunOnce(), 0);

  for (int i = 0; i < 2; ++i) server_.Enqueue(ScriptedReply::WithText(204, ""));
  auto id = store_->CreateBug(
      {.signature = "sig-1", .title = "wrong \"sum\"\nof <b>"}, "fuzzer",
      Json::MakeObject());
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(
      store_->TransitionBug(*id, BugState::kReproduced, "reproducer", Json())
          .ok());
  EXPECT_EQ(*notifier->RunOnce(), 2);
  std::vector<RecordedRequest> got = server_.requests();
  ASSERT_EQ(got.size(), 2u);
  auto events = store_->ListEvents(*id, 0, 10);
  ASSERT_TRUE(events.ok());
  for (int i = 0; i < 2; ++i) {
    const RecordedRequest& r = got[i];
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.path, "/hook");
    EXPECT_EQ(r.Header("content-type"), "application/json");
    EXPECT_TRUE(SignatureValid(r, kSecret)) << r.Header("x-trench-signature");
    EXPECT_FALSE(SignatureValid(r, "another secret"));
    auto body = r.JsonBody();
    ASSERT_TRUE(body.ok());
    const Event& e = (*events)[i];
    const std::string delivery =
        DeliveryId(e.id, "webhook:" + server_.url() + "/hook");
    EXPECT_EQ(r.Header("x-trench-delivery"), delivery);
    EXPECT_EQ((*body)["delivery"].string_value(), delivery);
    EXPECT_EQ(r.Header("x-trench-event"), i == 0 ? "finding" : "reproduced");
    EXPECT_EQ((*body)["kind"].string_value(), r.Header("x-trench-event"));
    EXPECT_EQ((*body)["event"]["id"].int64_value(), e.id);
    EXPECT_EQ((*body)["event"]["kind"].string_value(), "bug");
    EXPECT_EQ((*body)["bug"]["id"].int64_value(), *id);
    EXPECT_EQ((*body)["bug"]["title"].string_value(), "wrong \"sum\"\nof <b>");
    EXPECT_EQ((*body)["bug"]["signature"].string_value(), "sig-1");
    EXPECT_EQ((*body)["link"].string_value(), "/bugs/" + std::to_string(*id));
  }
  EXPECT_EQ(OutboxRows(store_.get(), "sent").size(), 2u);
  EXPECT_TRUE(OutboxRows(store_.get(), "pending").empty());
  // Nothing new: nothing sent again.
  EXPECT_EQ(*notifier->RunOnce(), 0);
  EXPECT_EQ(server_.requests().size(), 2u);
}

TEST_F(NotifyWebhookTest, FiltersByEventKind) {
  auto notifier = MakeNotifier(OneHook({"reproduced"}));
  ASSERT_EQ(*notifier->RunOnce(), 0);
  server_.Enqueue(ScriptedReply::WithText(200, "ok"));
  auto id = store_->CreateBug({.title = "t"}, "t", Json());
  ASSERT_TRUE(
      store_->TransitionBug(*id, BugState::kReproduced, "r", Json()).ok());
  EXPECT_EQ(*notifier->RunOnce(), 1);
  ASSERT_EQ(server_.requests().size(), 1u);
  EXPECT_EQ(server_.requests()[0].Header("x-trench-event"), "reproduced");
}

TEST_F(NotifyWebhookTest, RetriesTransientFailuresWithBackoffAndTheSameId) {
  auto notifier = MakeNotifier(OneHook());
  ASSERT_EQ(*notifier->RunOnce(), 0);
  server_.Enqueue(ScriptedReply::WithText(503, "busy"));
  server_.Enqueue(ScriptedReply::WithText(429, "slow down"));
  server_.Enqueue(ScriptedReply::WithText(200, "ok"));
  ASSERT_TRUE(store_->CreateBug({.title = "t"}, "t", Json()).ok());
  EXPECT_EQ(*notifier->RunOnce(), 1);  // 503: pending, due in 10 s.
  auto rows = OutboxRows(store_.get());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].state, "pending");
  EXPECT_EQ(rows[0].attempts, 1);
  EXPECT_EQ(rows[0].last_error, "HTTP 503");
  EXPECT_EQ(rows[0].next_attempt_ms, clock_.NowMillis() + 10'000);
  EXPECT_EQ(*notifier->RunOnce(), 0);  // Not due yet.
  clock_.Advance(10'000);
  EXPECT_EQ(*notifier->RunOnce(), 1);  // 429: pending, backoff doubled.
  rows = OutboxRows(store_.get());
  EXPECT_EQ(rows[0].next_attempt_ms, clock_.NowMillis() + 20'000);
  clock_.Advance(20'000);
  EXPECT_EQ(*notifier->RunOnce(), 1);
  EXPECT_EQ(OutboxRows(store_.get())[0].state, "sent");
  std::vector<RecordedRequest> got = server_.requests();
  ASSERT_EQ(got.size(), 3u);
  for (const RecordedRequest& r : got) {
    EXPECT_EQ(r.Header("x-trench-delivery"),
              got[0].Header("x-trench-delivery"));
    EXPECT_EQ(r.body, got[0].body);
    EXPECT_TRUE(SignatureValid(r, kSecret));
  }
}

TEST_F(NotifyWebhookTest, PermanentFailuresAreRecordedNotRetried) {
  auto notifier = MakeNotifier(OneHook());
  ASSERT_EQ(*notifier->RunOnce(), 0);
  server_.Enqueue(ScriptedReply::WithText(400, "bad"));
  server_.Enqueue(ScriptedReply::WithText(408, "timeout"));
  server_.Enqueue(ScriptedReply::WithText(200, "ok"));
  ASSERT_TRUE(store_->CreateBug({.title = "a"}, "t", Json()).ok());
  ASSERT_TRUE(store_->CreateBug({.title = "b"}, "t", Json()).ok());
  EXPECT_EQ(*notifier->RunOnce(), 2);  // 400: failed; 408: retry.
  auto rows = OutboxRows(store_.get());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].state, "failed");
  EXPECT_EQ(rows[0].last_error, "HTTP 400");
  EXPECT_EQ(rows[1].state, "pending");
  clock_.Advance(3'600'000);
  EXPECT_EQ(*notifier->RunOnce(), 1);  // Only the 408 again.
  rows = OutboxRows(store_.get());
  EXPECT_EQ(rows[0].state, "failed");
  EXPECT_EQ(rows[0].attempts, 1);
  EXPECT_EQ(rows[1].state, "sent");
}

TEST_F(NotifyWebhookTest, DeadAfterMaxAttemptsAndVisibleInMetrics) {
  // A port nobody listens on: connection refused, a transient failure.
  const int port = testing::UnusedPort();
  ASSERT_GT(port, 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/hook";
  NotifySetup setup;
  setup.destinations.push_back(Webhook(url, kSecret));
  setup.max_attempts = 3;
  setup.backoff_seconds = 1;
  auto notifier = MakeNotifier(setup);
  ASSERT_EQ(*notifier->RunOnce(), 0);
  ASSERT_TRUE(store_->CreateBug({.title = "t"}, "t", Json()).ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(*notifier->RunOnce(), 1);
    clock_.Advance(10'000);
  }
  auto rows = OutboxRows(store_.get());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].state, "dead");
  EXPECT_EQ(rows[0].attempts, 3);
  EXPECT_NE(rows[0].last_error.find("gave up after 3 attempts"),
            std::string::npos)
      << rows[0].last_error;
  EXPECT_EQ(*notifier->RunOnce(), 0);
  auto text = RenderMetrics(store_.get(), nullptr);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("trench_notify_deliveries_total{channel=\"webhook\","
                       "outcome=\"dead\"} 1\n"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("trench_notify_deliveries_total{channel=\"email\","
                       "outcome=\"sent\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text->find("trench_notify_pending{channel=\"webhook\"} 0\n"),
            std::string::npos);
}

TEST_F(NotifyWebhookTest, EachRowIsTriedOnceARoundEvenWithoutBackoff) {
  const int port = testing::UnusedPort();
  ASSERT_GT(port, 0);
  NotifySetup setup;
  setup.destinations.push_back(
      Webhook("http://127.0.0.1:" + std::to_string(port) + "/hook", kSecret));
  setup.max_attempts = 5;
  setup.backoff_seconds = 0;
  auto notifier = MakeNotifier(setup);
  ASSERT_EQ(*notifier->RunOnce(), 0);
  ASSERT_TRUE(store_->CreateBug({.title = "t"}, "t", Json()).ok());
  EXPECT_EQ(*notifier->RunOnce(), 1);
  auto rows = OutboxRows(store_.get());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].attempts, 1);
  EXPECT_EQ(rows[0].state, "pending");
}

TEST_F(NotifyWebhookTest, PendingDeliveriesShowInMetrics) {
  auto notifier = MakeNotifier(OneHook());
  ASSERT_EQ(*notifier->RunOnce(), 0);
  server_.Enqueue(ScriptedReply::WithText(500, "down"));
  server_.Enqueue(ScriptedReply::WithText(200, "ok"));
  ASSERT_TRUE(store_->CreateBug({.title = "t"}, "t", Json()).ok());
  EXPECT_EQ(*notifier->RunOnce(), 1);
  auto text = RenderMetrics(store_.get(), nullptr);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("trench_notify_pending{channel=\"webhook\"} 1\n"),
            std::string::npos)
      << *text;
  clock_.Advance(60'000);
  EXPECT_EQ(*notifier->RunOnce(), 1);
  text = RenderMetrics(store_.get(), nullptr);
  EXPECT_NE(text->find("trench_notify_deliveries_total{channel=\"webhook\","
                       "outcome=\"sent\"} 1\n"),
            std::string::npos);
}

}  // namespace
}  // namespace trench::orchestrator
