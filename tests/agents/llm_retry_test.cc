#include "agents/llm_retry.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

namespace trench::agents {
namespace {

HttpResponse Reply(
    int status, std::string body = "",
    std::vector<std::pair<std::string, std::string>> headers = {}) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  return r;
}

TEST(LlmRetryTest, RetryableStatuses) {
  for (int s : {408, 409, 429, 500, 502, 503, 504, 529, 599}) {
    EXPECT_TRUE(IsRetryableStatus(s)) << s;
  }
  for (int s : {200, 400, 401, 403, 404, 413, 422, 600}) {
    EXPECT_FALSE(IsRetryableStatus(s)) << s;
  }
}

TEST(LlmRetryTest, QuotaErrors) {
  EXPECT_TRUE(IsQuotaError(
      429,
      R"({"error":{"message":"You exceeded your current quota, please check your plan.","type":"insufficient_quota","code":"insufficient_quota"}})"));
  EXPECT_TRUE(
      IsQuotaError(429, R"({"error":{"code":"billing_hard_limit_reached"}})"));
  EXPECT_TRUE(IsQuotaError(
      400,
      R"({"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low"}})"));
  EXPECT_FALSE(IsQuotaError(
      429,
      R"({"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}})"));
  EXPECT_FALSE(IsQuotaError(429, "not json"));
  EXPECT_FALSE(IsQuotaError(500, R"({"error":{"type":"insufficient_quota"}})"));
}

TEST(LlmRetryTest, RetryAfterSecondsAndDates) {
  const std::time_t now = 784111777;  // Sun, 06 Nov 1994 08:49:37 GMT.
  EXPECT_EQ(ParseRetryAfter("7", now), 7.0);
  EXPECT_EQ(ParseRetryAfter(" 1.5 ", now), 1.5);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:50:07 GMT", now), 30.0);
  EXPECT_EQ(ParseRetryAfter("Sunday, 06-Nov-94 08:49:47 GMT", now), 10.0);
  EXPECT_EQ(ParseRetryAfter("Sun Nov  6 08:49:57 1994", now), 20.0);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:00:00 GMT", now), 0.0);
  EXPECT_FALSE(ParseRetryAfter("", now).has_value());
  EXPECT_FALSE(ParseRetryAfter("-3", now).has_value());
  EXPECT_FALSE(ParseRetryAfter("soon", now).has_value());
  EXPECT_FALSE(ParseRetryAfter("1e999", now).has_value());
}

TEST(LlmRetryTest, DelayIsExponentialOrServerGivenAndCapped) {
  LlmConfig config;
  config.initial_backoff_seconds = 0.5;
  config.max_backoff_seconds = 3;
  EXPECT_EQ(RetryDelaySeconds(config, 1, nullptr, 0), 0.5);
  EXPECT_EQ(RetryDelaySeconds(config, 2, nullptr, 0), 1.0);
  EXPECT_EQ(RetryDelaySeconds(config, 3, nullptr, 0), 2.0);
  EXPECT_EQ(RetryDelaySeconds(config, 4, nullptr, 0), 3.0);
  EXPECT_EQ(RetryDelaySeconds(config, 1000, nullptr, 0), 3.0);
  HttpResponse r = Reply(429, "", {{"retry-after", "2"}});
  EXPECT_EQ(RetryDelaySeconds(config, 1, &r, 0), 2.0);
  r = Reply(429, "", {{"retry-after", "3600"}});
  EXPECT_EQ(RetryDelaySeconds(config, 1, &r, 0), 3.0);
  r = Reply(429, "", {{"retry-after-ms", "250"}, {"retry-after", "2"}});
  EXPECT_EQ(RetryDelaySeconds(config, 1, &r, 0), 0.25);
  r = Reply(429, "", {{"retry-after", "garbage"}});
  EXPECT_EQ(RetryDelaySeconds(config, 2, &r, 0), 1.0);
}

TEST(LlmRetryTest, ErrorStatusesNameTheProblem) {
  Status s =
      HttpErrorStatus("openai: POST u",
                      Reply(400, R"({"error":{"message":"bad field x"}})"), 1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "openai: POST u: HTTP 400: bad field x");
  s = HttpErrorStatus("w", Reply(429, "slow"), 3);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "w: HTTP 429 after 3 attempts: slow");
  s = HttpErrorStatus("w", Reply(529, ""), 2);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  s = HttpErrorStatus("w", Reply(503, "down"), 5);
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  s = HttpErrorStatus(
      "w", Reply(429, R"({"error":{"type":"insufficient_quota"}})"), 1);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("quota"), std::string::npos);
}

// Runs FetchWithRetries over a scripted list of attempt results.
struct Fake {
  std::deque<StatusOr<HttpResponse>> results;
  std::vector<double> sleeps;
  int calls = 0;
  StatusOr<HttpResponse> Run(int max_retries, int* attempts) {
    LlmConfig config;
    config.max_retries = max_retries;
    config.initial_backoff_seconds = 1;
    config.max_backoff_seconds = 10;
    config.sleep = [&](double s) { sleeps.push_back(s); };
    return FetchWithRetries(
        config, "w",
        [&]() -> StatusOr<HttpResponse> {
          ++calls;
          auto r = results.front();
          results.pop_front();
          return r;
        },
        attempts);
  }
};

TEST(LlmRetryTest, RetriesUntilSuccessWithBackoff) {
  Fake f;
  f.results = {Reply(500), IoError("reset"),
               Reply(429, "", {{"retry-after", "4"}}),
               Status(StatusCode::kDeadlineExceeded, "slow"), Reply(200, "ok")};
  int attempts = 0;
  auto r = f.Run(4, &attempts);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "ok");
  EXPECT_EQ(attempts, 5);
  EXPECT_EQ(f.sleeps, (std::vector<double>{1, 2, 4, 8}));
}

TEST(LlmRetryTest, GivesUpAfterMaxRetries) {
  Fake f;
  f.results = {Reply(503, "a"), Reply(503, "b"), Reply(503, "c")};
  int attempts = 0;
  auto r = f.Run(2, &attempts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_EQ(r.status().message(), "w: HTTP 503 after 3 attempts: c");
  EXPECT_EQ(attempts, 3);
  EXPECT_EQ(f.sleeps.size(), 2u);
}

TEST(LlmRetryTest, TimeoutsAfterRetriesStayDeadlineExceeded) {
  Fake f;
  f.results = {Status(StatusCode::kDeadlineExceeded, "t1"),
               Status(StatusCode::kDeadlineExceeded, "t2")};
  int attempts = 0;
  auto r = f.Run(1, &attempts);
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r.status().message(), "after 2 attempts: t2");
}

TEST(LlmRetryTest, NeverRetriesQuotaOrOther4xxOrBadInput) {
  for (auto result : std::vector<StatusOr<HttpResponse>>{
           Reply(429, R"({"error":{"code":"insufficient_quota"}})"),
           Reply(400, "bad"), Reply(401, "who"), Reply(404, "where"),
           InvalidArgument("malformed")}) {
    Fake f;
    f.results = {result, Reply(200)};
    int attempts = 0;
    auto r = f.Run(4, &attempts);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(attempts, 1);
    EXPECT_EQ(f.calls, 1);
    EXPECT_TRUE(f.sleeps.empty());
  }
}

}  // namespace
}  // namespace trench::agents
