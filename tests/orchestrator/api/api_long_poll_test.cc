// GET /api/v1/events?wait=: the long poll over a real socket. A waiting
// client is answered when another thread writes an event (the store's
// event bell), or empty when its wait is over; waiters are bounded; the
// server's Stop answers them at once.
#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "tests/orchestrator/api/api_test_util.h"

namespace trench::orchestrator::testing {
namespace {

class ApiLongPollTest : public ApiTest {
 protected:
  // No fallback polling within a test's time: only the event bell (or the
  // end of the wait) answers a waiter.
  HttpServerOptions ServerOptions() override {
    HttpServerOptions options = ApiTest::ServerOptions();
    options.poll_interval = std::chrono::hours(1);
    return options;
  }
  int64_t NewBug(const std::string& title) {
    auto id = check_->CreateBug(
        {"sig-" + title, title, std::nullopt, Json::MakeObject()}, "test",
        Json());
    EXPECT_TRUE(id.ok());
    return id.ok() ? *id : -1;
  }
  // The newest event id.
  int64_t LastEvent() {
    HttpReply r = Call("GET", "/api/v1/events?limit=1000");
    return r.json().Find("next")->int64_value();
  }
};

TEST_F(ApiLongPollTest, AWaitingClientGetsTheEventWrittenMeanwhile) {
  const int64_t bug = NewBug("first");
  const int64_t since = LastEvent();
  // The client waits (30 s at most); it is answered with the event another
  // thread writes once the request is in.
  std::promise<HttpReply> reply;
  std::thread client([&] {
    reply.set_value(Call(
        "GET", "/api/v1/events?since=" + std::to_string(since) + "&wait=30"));
  });
  // Writes until the client has its answer: a write before the request
  // reached the server is simply an event after `since` too.
  std::future<HttpReply> answer = reply.get_future();
  int writes = 0;
  while (answer.wait_for(std::chrono::milliseconds(200)) !=
         std::future_status::ready) {
    ASSERT_LT(++writes, 100) << "the client was never answered";
    if (writes == 1) {
      ASSERT_TRUE(check_
                      ->TransitionBug(bug, BugState::kReproduced, "test",
                                      Json::MakeObject())
                      .ok());
    }
  }
  client.join();
  HttpReply r = answer.get();
  ASSERT_EQ(r.status, 200) << r.body;
  const Json body = r.json();
  const Json* events = body.Find("events");
  ASSERT_NE(events, nullptr) << r.body;
  ASSERT_EQ(events->size(), 1u) << r.body;
  EXPECT_EQ(events->array()[0].Find("to")->string_value(), "reproduced");
  EXPECT_GT(r.json().Find("next")->int64_value(), since);
}

TEST_F(ApiLongPollTest, WakesOnTheBellNotOnlyOnThePolling) {
  // The bell wakes the waiter (there is no polling here); the generous
  // bound only tells that from the 30 s wait running out.
  const int64_t since = LastEvent();
  std::promise<HttpReply> reply;
  std::thread client([&] {
    reply.set_value(Call(
        "GET", "/api/v1/events?since=" + std::to_string(since) + "&wait=30"));
  });
  std::future<HttpReply> answer = reply.get_future();
  // Give the request time to become a waiter, then write once.
  EXPECT_EQ(answer.wait_for(std::chrono::milliseconds(500)),
            std::future_status::timeout);
  NewBug("second");
  EXPECT_EQ(answer.wait_for(std::chrono::seconds(20)),
            std::future_status::ready);
  client.join();
  HttpReply r = answer.get();
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json().Find("events")->size(), 1u) << r.body;
}

TEST_F(ApiLongPollTest, AnswersEmptyWhenTheWaitIsOver) {
  NewBug("first");
  const int64_t since = LastEvent();
  HttpReply r =
      Call("GET", "/api/v1/events?since=" + std::to_string(since) + "&wait=1");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json().Find("events")->size(), 0u) << r.body;
  EXPECT_EQ(r.json().Find("next")->int64_value(), since);
  // Events already there: answered at once, as without wait=.
  r = Call("GET", "/api/v1/events?since=0&wait=30");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json().Find("events")->size(), 1u) << r.body;
  // The connection stays usable after a long poll.
  HttpClient client(server_->port());
  r = client.Request(
      "GET", "/api/v1/events?since=" + std::to_string(since) + "&wait=1");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(client.Request("GET", "/healthz").status, 200);
}

TEST_F(ApiLongPollTest, ChecksWait) {
  for (const std::string w : {"-1", "x", "1.5", ""}) {
    HttpReply r = Call("GET", "/api/v1/events?wait=" + w);
    EXPECT_EQ(r.status, 400) << w;
    EXPECT_NE(r.error_message().find("query parameter 'wait'"),
              std::string::npos)
        << r.body;
  }
}

class ApiLongPollCapTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    // Handlers with room for one waiter only.
    ApiOptions options;
    options.token = kToken;
    options.max_waiters = 1;
    capped_ = std::make_unique<ApiHandlers>(store_.get(), options);
    auto server = HttpServer::Start(
        ioc_, ServerOptions(),
        [h = capped_.get()](const ApiRequest& r) { return h->Handle(r); });
    ASSERT_TRUE(server.ok());
    capped_server_ = std::move(server).value();
  }
  void TearDown() override {
    if (capped_server_) capped_server_->Stop();
    ApiTest::TearDown();
    capped_server_.reset();
    capped_.reset();
  }
  std::unique_ptr<ApiHandlers> capped_;
  std::unique_ptr<HttpServer> capped_server_;
};

TEST_F(ApiLongPollCapTest, RefusesWaitersPastTheCapAndStopAnswersThem) {
  std::promise<HttpReply> reply;
  std::thread waiter([&] {
    // Refused while the main thread's short wait holds the one place.
    HttpReply r;
    for (int i = 0; i < 3000; ++i) {
      HttpClient c(capped_server_->port());
      r = c.Request("GET", "/api/v1/events?wait=30");
      if (r.status != 503) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    reply.set_value(r);
  });
  std::future<HttpReply> answer = reply.get_future();
  // Another waiter is refused once that one waits (a short wait=1 that
  // got the place first just ends empty).
  HttpReply second;
  for (int i = 0; i < 100; ++i) {
    HttpClient c(capped_server_->port());
    second = c.Request("GET", "/api/v1/events?wait=1");
    if (second.status == 503) break;
    // Room for the other thread to take the place.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(second.status, 503) << second.body;
  EXPECT_EQ(second.headers["retry-after"], "1");
  EXPECT_NE(second.error_message().find("already waiting"), std::string::npos);
  // Stopping the server answers the waiter now (empty), not in 30 s.
  capped_server_->Stop();
  EXPECT_EQ(answer.wait_for(std::chrono::seconds(20)),
            std::future_status::ready);
  waiter.join();
  HttpReply r = answer.get();
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json().Find("events")->size(), 0u) << r.body;
}

}  // namespace
}  // namespace trench::orchestrator::testing
