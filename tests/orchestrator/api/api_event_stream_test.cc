// GET /api/v1/events/stream: server-sent events over a real socket. A
// client sees each event as it is written (woken by the store's event
// bell, no polling), resumes after since= or Last-Event-ID, gets
// heartbeats when idle; streams are capped, a closed client frees its
// slot, a client that stops reading is dropped at the write timeout, and
// the server's Stop ends every stream.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/orchestrator/api/api_test_util.h"

namespace trench::orchestrator::testing {
namespace {

// The request line and headers of a stream request.
std::string StreamRequest(const std::string& target,
                          const std::string& extra = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: test\r\n" + extra + "\r\n";
}

// The "data:" JSON of the next SSE event on `client` whose "event:" line
// is `kind`, after checking its "id:" line is `id` (when given).
Json NextEvent(HttpClient& client, const std::string& kind,
               std::optional<int64_t> id = std::nullopt) {
  std::optional<std::string> head = client.ReadUntil("event: " + kind + "\n");
  EXPECT_TRUE(head) << "no '" << kind << "' event came";
  if (!head) return Json();
  if (id) {
    EXPECT_NE(head->find("id: " + std::to_string(*id) + "\n"),
              std::string::npos)
        << *head;
  }
  std::optional<std::string> data = client.ReadUntil("\n\n");
  EXPECT_TRUE(data);
  if (!data || !data->starts_with("data: ")) return Json();
  StatusOr<Json> j = ParseJson(data->substr(6, data->size() - 8));
  EXPECT_TRUE(j.ok()) << *data;
  return j.ok() ? *j : Json();
}

class ApiEventStreamTest : public ApiTest {
 protected:
  // Only the event bell wakes a stream here: no fallback polling, no
  // heartbeats within a test's time.
  HttpServerOptions ServerOptions() override {
    HttpServerOptions options = ApiTest::ServerOptions();
    options.poll_interval = std::chrono::hours(1);
    options.heartbeat_interval = std::chrono::hours(1);
    return options;
  }
  int64_t NewBug(const std::string& title) {
    auto id = check_->CreateBug(
        {"sig-" + title, title, std::nullopt, Json::MakeObject()}, "test",
        Json());
    EXPECT_TRUE(id.ok());
    return id.ok() ? *id : -1;
  }
  int64_t LastEvent() {
    auto last = check_->LastEventId();
    EXPECT_TRUE(last.ok());
    return last.ok() ? *last : -1;
  }
  // Whether a new stream on `target` is taken (200) within 10 s: tries
  // again while the server still refuses (503, its cap).
  bool StreamOpensSoon(const std::string& target) {
    for (int i = 0; i < 200; ++i) {
      HttpClient again(server_->port());
      if (!again.SendRaw(StreamRequest(target))) return false;
      std::optional<std::string> head = again.ReadUntil("\r\n\r\n");
      if (!head) return false;
      if (head->starts_with("HTTP/1.1 200")) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  // Opens a stream and reads its head and preamble; the head's text.
  std::string Open(HttpClient& client, const std::string& target,
                   const std::string& extra = "") {
    EXPECT_TRUE(client.connected());
    EXPECT_TRUE(client.SendRaw(StreamRequest(target, extra)));
    std::optional<std::string> head = client.ReadUntil("\r\n\r\n");
    EXPECT_TRUE(head);
    std::optional<std::string> preamble = client.ReadUntil("\n\n");
    EXPECT_TRUE(preamble &&
                preamble->starts_with("retry: 3000\n: events after "))
        << preamble.value_or("(none)");
    return head.value_or("") + preamble.value_or("");
  }
};

TEST_F(ApiEventStreamTest, SendsEachEventAsItIsWritten) {
  const int64_t bug = NewBug("first");
  HttpClient client(server_->port());
  const std::string head = Open(client, "/api/v1/events/stream");
  EXPECT_TRUE(head.starts_with("HTTP/1.1 200 OK\r\n")) << head;
  EXPECT_NE(head.find("Content-Type: text/event-stream"), std::string::npos);
  EXPECT_NE(head.find("Cache-Control: no-cache"), std::string::npos);
  EXPECT_EQ(head.find("Content-Length"), std::string::npos) << head;
  // Without since=, the stream starts after the newest event: the bug's
  // creation is not sent again.
  EXPECT_NE(head.find(": events after " + std::to_string(LastEvent())),
            std::string::npos)
      << head;
  ASSERT_TRUE(
      check_->TransitionBug(bug, BugState::kReproduced, "test", Json()).ok());
  Json e = NextEvent(client, "bug", LastEvent());
  EXPECT_EQ(e.Find("bug_id")->int64_value(), bug);
  EXPECT_EQ(e.Find("from")->string_value(), "new");
  EXPECT_EQ(e.Find("to")->string_value(), "reproduced");
  // A commit event too, in the same stream.
  ASSERT_TRUE(check_
                  ->RecordCommitEvent(std::string(40, 'a'),
                                      CommitEventKind::kCommitLanded, "test",
                                      Json::MakeObject())
                  .ok());
  e = NextEvent(client, "commit", LastEvent());
  EXPECT_EQ(e.Find("event")->string_value(), "commit_landed");
  const int64_t second = NewBug("second");
  e = NextEvent(client, "bug", LastEvent());
  EXPECT_EQ(e.Find("bug_id")->int64_value(), second);
}

TEST_F(ApiEventStreamTest, ResumesAfterSinceOrLastEventId) {
  NewBug("a");
  const int64_t after = LastEvent();
  const int64_t b = NewBug("b");
  const int64_t c = NewBug("c");
  for (const auto& [target, extra] :
       std::vector<std::pair<std::string, std::string>>{
           {"/api/v1/events/stream?since=" + std::to_string(after), ""},
           {"/api/v1/events/stream",
            "Last-Event-ID: " + std::to_string(after) + "\r\n"}}) {
    SCOPED_TRACE(target + " " + extra);
    HttpClient client(server_->port());
    Open(client, target, extra);
    EXPECT_EQ(NextEvent(client, "bug").Find("bug_id")->int64_value(), b);
    EXPECT_EQ(NextEvent(client, "bug").Find("bug_id")->int64_value(), c);
  }
}

TEST_F(ApiEventStreamTest, OnlyTheBugAsked) {
  const int64_t one = NewBug("one");
  const int64_t two = NewBug("two");
  HttpClient client(server_->port());
  Open(client, "/api/v1/events/stream?bug=" + std::to_string(two));
  ASSERT_TRUE(
      check_->TransitionBug(one, BugState::kReproduced, "test", Json()).ok());
  ASSERT_TRUE(
      check_->TransitionBug(two, BugState::kReproduced, "test", Json()).ok());
  Json e = NextEvent(client, "bug", LastEvent());
  EXPECT_EQ(e.Find("bug_id")->int64_value(), two);
}

TEST_F(ApiEventStreamTest, RefusesBadStarts) {
  EXPECT_EQ(Call("GET", "/api/v1/events/stream?since=x").status, 400);
  EXPECT_EQ(Call("GET", "/api/v1/events/stream?bug=0").status, 400);
  EXPECT_EQ(Call("GET", "/api/v1/events/stream?bug=1&commit=ab").status, 400);
  HttpClient client(server_->port());
  HttpReply r = client.Request("GET", "/api/v1/events/stream", "", "",
                               "Last-Event-ID: 12abc\r\n");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.error_message().find("Last-Event-ID"), std::string::npos);
  EXPECT_EQ(Call("POST", "/api/v1/events/stream", "{}", kToken).status, 405);
  ExpectHealthy();
}

TEST_F(ApiEventStreamTest, StopEndsEveryStream) {
  HttpClient client(server_->port());
  Open(client, "/api/v1/events/stream");
  server_->Stop();
  // The stream ends: the connection closes (EOF), long before the test's
  // socket timeout.
  EXPECT_FALSE(client.ReadUntil("never sent"));
}

class ApiEventStreamHeartbeatTest : public ApiEventStreamTest {
 protected:
  HttpServerOptions ServerOptions() override {
    HttpServerOptions options = ApiEventStreamTest::ServerOptions();
    options.poll_interval = std::chrono::milliseconds(50);
    options.heartbeat_interval = std::chrono::milliseconds(100);
    return options;
  }
};

TEST_F(ApiEventStreamHeartbeatTest, SendsHeartbeatsWhenIdle) {
  HttpClient client(server_->port());
  Open(client, "/api/v1/events/stream");
  EXPECT_TRUE(client.ReadUntil(": ping\n\n"));
  EXPECT_TRUE(client.ReadUntil(": ping\n\n"));
}

class ApiEventStreamTimeoutTest : public ApiEventStreamTest {
 protected:
  HttpServerOptions ServerOptions() override {
    HttpServerOptions options = ApiEventStreamTest::ServerOptions();
    options.read_timeout = std::chrono::milliseconds(200);
    options.write_timeout = std::chrono::milliseconds(200);
    return options;
  }
};

TEST_F(ApiEventStreamTimeoutTest, AQuietStreamOutlivesTheReadAndWriteTimeouts) {
  HttpClient client(server_->port());
  Open(client, "/api/v1/events/stream");
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  const int64_t bug = NewBug("after a quiet while");
  EXPECT_EQ(NextEvent(client, "bug").Find("bug_id")->int64_value(), bug);
}

class ApiEventStreamCapTest : public ApiEventStreamTest {
 protected:
  ApiOptions Options() override {
    ApiOptions options = ApiEventStreamTest::Options();
    options.max_streams = 2;
    return options;
  }
};

TEST_F(ApiEventStreamCapTest, RefusesPastTheCapAndAClosedClientFreesItsSlot) {
  auto first = std::make_unique<HttpClient>(server_->port());
  HttpClient second(server_->port());
  Open(*first, "/api/v1/events/stream");
  Open(second, "/api/v1/events/stream");
  HttpReply refused = Call("GET", "/api/v1/events/stream");
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_EQ(refused.headers["retry-after"], "5");
  // The first client goes: the server notices the close (it watches the
  // connection) and its slot is free again.
  first.reset();
  EXPECT_TRUE(StreamOpensSoon("/api/v1/events/stream"));
  // The open one still gets events.
  const int64_t late = NewBug("late");
  EXPECT_EQ(NextEvent(second, "bug").Find("bug_id")->int64_value(), late);
}

class ApiEventStreamStalledTest : public ApiEventStreamTest {
 protected:
  ApiOptions Options() override {
    ApiOptions options = ApiEventStreamTest::Options();
    options.max_streams = 1;
    return options;
  }
  HttpServerOptions ServerOptions() override {
    HttpServerOptions options = ApiEventStreamTest::ServerOptions();
    options.write_timeout = std::chrono::milliseconds(300);
    return options;
  }
};

TEST_F(ApiEventStreamStalledTest,
       AClientThatStopsReadingIsDroppedAtTheWriteTimeout) {
  // A client with a small window reads the head, then nothing more, while
  // ~16 MB of events go by: more than the kernel buffers on both sides.
  auto stalled = std::make_unique<HttpClient>(server_->port(), 4096);
  Open(*stalled, "/api/v1/events/stream");
  const std::string big(8 << 10, 'x');
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(check_
                    ->CreateBug({"sig-" + std::to_string(i), "t", std::nullopt,
                                 Json::MakeObject()},
                                "test", Json::Object{{"pad", Json(big)}})
                    .ok());
  }
  // Meanwhile the server answers others, and once the stalled stream's
  // write times out, its one slot is free for a new stream.
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
  EXPECT_TRUE(StreamOpensSoon("/api/v1/events/stream?since=" +
                              std::to_string(LastEvent())));
  // The stalled client finds its stream cut short: reading on, it reaches
  // the end of the connection before the last event.
  std::string got;
  char chunk[1 << 16];
  while (true) {
    ssize_t n = ::recv(stalled->fd(), chunk, sizeof(chunk), 0);
    if (n <= 0) break;
    got.append(chunk, static_cast<size_t>(n));
  }
  EXPECT_EQ(got.find("\"id\":" + std::to_string(LastEvent()) + ","),
            std::string::npos);
}

}  // namespace
}  // namespace trench::orchestrator::testing
