// Idempotency-Key on POST /api/v1/reports over a real socket: a client
// that retries after a reset connection gets its first bug back instead
// of a second one, also when the two requests race; a key reused for
// another report is 409; malformed keys are 400; a key is forgotten after
// its retention.
#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "tests/orchestrator/api/api_test_util.h"

namespace trench::orchestrator::testing {
namespace {

class ApiIdempotencyTest : public ApiTest {
 protected:
  HttpReply Post(const std::string& body, const std::string& key) {
    HttpClient client(server_->port());
    EXPECT_TRUE(client.connected());
    return client.Request(
        "POST", "/api/v1/reports", body, kToken,
        key.empty() ? "" : "Idempotency-Key: " + key + "\r\n");
  }
  int64_t Bugs() { return static_cast<int64_t>(Snapshot().bugs.size()); }
};

TEST_F(ApiIdempotencyTest, ARetryWithTheSameKeyGetsTheFirstBug) {
  Json body = Json::MakeObject();
  body["text"] = "crash in fusion";
  body["hlo"] = kHlo;
  const std::string report = body.Dump();
  HttpReply first = Post(report, "retry-7f3c");
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(first.headers.count("idempotent-replayed"), 0u);
  const StoreSnapshot after_first = Snapshot();
  // The same report, spelled with other whitespace and member order.
  HttpReply again = Post(R"({ "hlo": )" + Json(std::string(kHlo)).Dump() +
                             R"(, "text": "crash in fusion" })",
                         "retry-7f3c");
  ASSERT_EQ(again.status, 201) << again.body;
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(again.headers["location"], first.headers["location"]);
  EXPECT_EQ(again.headers["idempotent-replayed"], "true");
  EXPECT_EQ(Snapshot(), after_first);  // Nothing written.
  // Another report under the same key: refused, nothing written.
  HttpReply other = Post(R"({"text": "something else"})", "retry-7f3c");
  EXPECT_EQ(other.status, 409) << other.body;
  EXPECT_NE(other.error_message().find(
                "Idempotency-Key 'retry-7f3c' was already used for a "
                "different report (bug " +
                std::to_string(*first.json().Find("id")->GetInt64()) + ")"),
            std::string::npos)
      << other.body;
  EXPECT_EQ(Snapshot(), after_first);
  // Without a key, or with another one: a new bug each time.
  EXPECT_EQ(Post(R"({"text": "crash in fusion"})", "").status, 201);
  EXPECT_EQ(Post(R"({"text": "crash in fusion"})", "").status, 201);
  EXPECT_EQ(Post(R"({"text": "crash in fusion"})", "other-key").status, 201);
  EXPECT_EQ(Bugs(), 4);
}

TEST_F(ApiIdempotencyTest, MalformedKeysAreRefused) {
  const StoreSnapshot before = Snapshot();
  for (const std::string& key :
       {std::string(256, 'k'), std::string("two words"),
        std::string("tab\there"), std::string("caf\xc3\xa9")}) {
    HttpReply r = Post(R"({"text": "x"})", key);
    EXPECT_EQ(r.status, 400) << key << ": " << r.body;
    EXPECT_NE(r.error_message().find("header Idempotency-Key must be 1 to "
                                     "255 printable ASCII characters"),
              std::string::npos)
        << r.body;
  }
  EXPECT_EQ(Snapshot(), before);
  EXPECT_EQ(Post(R"({"text": "x"})", std::string(255, 'k')).status, 201);
}

// Eight clients race with one key (a client that timed out and retried
// while its first request was still running): exactly one bug.
TEST_F(ApiIdempotencyTest, ConcurrentRequestsWithOneKeyMakeOneBug) {
  constexpr int kClients = 8;
  std::vector<HttpReply> replies(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      replies[i] = Post(R"({"text": "racing report"})", "race-1");
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<std::string> bodies;
  int replayed = 0;
  for (HttpReply& r : replies) {
    EXPECT_EQ(r.status, 201) << r.body;
    bodies.insert(r.body);
    replayed += r.headers["idempotent-replayed"] == "true";
  }
  EXPECT_EQ(bodies.size(), 1u);
  EXPECT_EQ(replayed, kClients - 1);
  EXPECT_EQ(Bugs(), 1);
}

TEST_F(ApiIdempotencyTest, AKeyIsForgottenAfterItsRetention) {
  HttpReply first = Post(R"({"text": "old report"})", "k-1");
  ASSERT_EQ(first.status, 201);
  clock_.Advance(24 * 3600 * 1000 + 1);  // The default retention: a day.
  HttpReply later = Post(R"({"text": "old report"})", "k-1");
  ASSERT_EQ(later.status, 201);
  EXPECT_NE(later.body, first.body);  // A new bug.
  EXPECT_EQ(later.headers.count("idempotent-replayed"), 0u);
  EXPECT_EQ(Bugs(), 2);
}

}  // namespace
}  // namespace trench::orchestrator::testing
