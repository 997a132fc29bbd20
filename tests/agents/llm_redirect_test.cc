// Redirects and credentials (agents/http_client.h): the LLM backends'
// headers carry API keys, so a redirect to another origin is refused with
// an error naming both ends, never followed and never retried. Two scripted
// loopback servers are two hosts: the first answers 307 pointing at the
// second (as 127.0.0.1 and as localhost), and the second must receive
// nothing. A redirect within the origin is still followed.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "agents/http_client.h"
#include "agents/llm_client.h"
#include "tests/agents/scripted_llm_server.h"

namespace trench::agents {
namespace {

using testing::ScriptedLlmServer;
using testing::ScriptedReply;

constexpr char kKey[] = "sk-redirect-test-SECRET-123";

ScriptedReply RedirectTo(const std::string& location) {
  ScriptedReply r = ScriptedReply::WithText(307, "moved", "text/plain");
  r.Header("Location", location);
  return r;
}

class RedirectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(first_.ok());
    ASSERT_TRUE(second_.ok());
    setenv("TRENCH_TEST_REDIRECT_KEY", kKey, 1);
  }

  std::unique_ptr<LlmClient> Client(const std::string& backend, bool stream) {
    LlmConfig c{.backend = backend,
                .base_url = first_.base_url(),
                .model = "m",
                .api_key_env = "TRENCH_TEST_REDIRECT_KEY",
                .stream = stream,
                .timeout_seconds = 5,
                .max_retries = 3};
    c.sleep = [](double) {};
    auto client = MakeLlmClient(c);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(client).value() : nullptr;
  }

  static ChatRequest Request() {
    return ChatRequest{
        .messages = {Message{.role = Role::kUser, .content = "go"}},
        .max_tokens = 10};
  }

  ScriptedLlmServer first_, second_;
};

TEST_F(RedirectTest, CrossHostRedirectsAreRefusedForEveryBackend) {
  const std::string b = std::to_string(second_.port());
  for (const std::string backend : {"anthropic", "openai"}) {
    for (const bool stream : {false, true}) {
      for (const std::string host : {"127.0.0.1", "localhost"}) {
        const std::string what =
            backend + (stream ? " streamed" : "") + " to " + host;
        const size_t before = first_.requests().size();
        first_.Enqueue(
            RedirectTo("http://" + host + ":" + b + "/v1/elsewhere"));
        std::unique_ptr<LlmClient> client = Client(backend, stream);
        ASSERT_NE(client, nullptr);
        auto r = client->Chat(Request());
        ASSERT_FALSE(r.ok()) << what;
        EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << what;
        const std::string m = r.status().message();
        EXPECT_NE(m.find("refused a redirect (307) from http://127.0.0.1:" +
                         std::to_string(first_.port()) + " to http://" + host +
                         ":" + b),
                  std::string::npos)
            << what << ": " << m;
        EXPECT_EQ(m.find(kKey), std::string::npos) << m;
        // Asked once (not retried), and the key went nowhere else.
        ASSERT_EQ(first_.requests().size(), before + 1) << what;
        const std::string sent =
            backend == "anthropic"
                ? first_.requests()[before].Header("x-api-key")
                : first_.requests()[before].Header("authorization");
        EXPECT_NE(sent.find(kKey), std::string::npos) << what;
        EXPECT_TRUE(second_.requests().empty()) << what;
      }
    }
  }
}

TEST_F(RedirectTest, SameOriginRedirectIsFollowedWithItsHeaders) {
  first_.Enqueue(RedirectTo("/v1/again"));
  first_.Enqueue(ScriptedReply::WithText(200, R"({"ok": true})"));
  HttpRequest req;
  req.method = "POST";
  req.url = first_.url() + "/v1/start";
  req.headers = {{"x-api-key", kKey}};
  req.body = "{}";
  std::string streamed;
  req.on_body = [&](std::string_view chunk) {
    streamed.append(chunk);
    return true;
  };
  StatusOr<HttpResponse> r = HttpFetch(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(streamed, R"({"ok": true})");  // Not the redirect's "moved".
  std::vector<testing::RecordedRequest> got = first_.requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].method, "POST");  // 307 keeps the method and body.
  EXPECT_EQ(got[1].path, "/v1/again");
  EXPECT_EQ(got[1].body, "{}");
  EXPECT_EQ(got[1].Header("x-api-key"), kKey);
}

TEST_F(RedirectTest, RedirectLoopsAreBounded) {
  for (int i = 0; i < 7; ++i) first_.Enqueue(RedirectTo("/v1/loop"));
  HttpRequest req;
  req.url = first_.url() + "/v1/loop";
  StatusOr<HttpResponse> r = HttpFetch(req);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than 5 redirects"),
            std::string::npos)
      << r.status().message();
  EXPECT_EQ(first_.requests().size(), 6u);
}

}  // namespace
}  // namespace trench::agents
