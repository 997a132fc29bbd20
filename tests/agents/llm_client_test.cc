// The URL each backend POSTs to (ChatUrl, the join the clients use), the
// refusal of an anthropic base_url without the API version, and cancelling
// a call that a hung server never answers.
#include "agents/llm_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/agents/scripted_llm_server.h"

namespace trench::agents {
namespace {

using testing::ScriptedLlmServer;
using testing::ScriptedReply;

LlmConfig Config(std::string backend, std::string base_url) {
  LlmConfig c;
  c.backend = std::move(backend);
  c.base_url = std::move(base_url);
  c.model = "test-model";
  return c;
}

TEST(LlmClientTest, ChatUrlJoinsBaseUrlAndEndpointWithOneSlash) {
  EXPECT_EQ(ChatUrl(Config("openai", "http://127.0.0.1:8080/v1")),
            "http://127.0.0.1:8080/v1/chat/completions");
  EXPECT_EQ(ChatUrl(Config("openai", "http://127.0.0.1:8080/v1/")),
            "http://127.0.0.1:8080/v1/chat/completions");
  EXPECT_EQ(ChatUrl(Config("anthropic", "https://api.anthropic.com/v1")),
            "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(ChatPath("openai"), "chat/completions");
  EXPECT_EQ(ChatPath("anthropic"), "messages");
  EXPECT_EQ(ChatPath("other"), "");
}

// The shipped default used to be "https://api.anthropic.com": every
// request went to /messages and got a 404.
TEST(LlmClientTest, AnthropicBaseUrlWithoutVersionIsRefused) {
  for (const std::string base :
       {"https://api.anthropic.com", "https://api.anthropic.com/",
        "https://proxy.example/anthropic"}) {
    StatusOr<std::unique_ptr<LlmClient>> c =
        MakeLlmClient(Config("anthropic", base));
    ASSERT_FALSE(c.ok()) << base;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(c.status().message().find("must end at the API version"),
              std::string::npos)
        << c.status().message();
    EXPECT_NE(c.status().message().find("/v1'"), std::string::npos)
        << c.status().message();
  }
  for (const std::string base :
       {"https://api.anthropic.com/v1", "https://api.anthropic.com/v1/",
        "https://proxy.example/anthropic/v2beta"}) {
    EXPECT_TRUE(MakeLlmClient(Config("anthropic", base)).ok()) << base;
  }
}

// Requests go where ChatUrl says, for both backends.
TEST(LlmClientTest, ClientsPostToChatUrl) {
  for (const std::string backend : {"openai", "anthropic"}) {
    ScriptedLlmServer server;
    ASSERT_TRUE(server.ok());
    server.Enqueue(ScriptedReply::WithText(404, R"({"error": "nope"})"));
    LlmConfig config = Config(backend, server.base_url());
    config.max_retries = 0;
    StatusOr<std::unique_ptr<LlmClient>> client = MakeLlmClient(config);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    ChatRequest request;
    request.messages.push_back({Role::kUser, "hi"});
    EXPECT_FALSE((*client)->Chat(request).ok());
    ASSERT_EQ(server.requests().size(), 1u);
    EXPECT_EQ(server.url() + server.requests()[0].path, ChatUrl(config));
  }
}

// A hung server: the flag, set once the server has the request, ends the
// call with kCancelled long before the client's 120 s timeout.
TEST(LlmClientTest, CancelStopsAHungRequest) {
  for (const bool stream : {false, true}) {
    ScriptedLlmServer server;
    ASSERT_TRUE(server.ok());
    server.Enqueue(ScriptedReply::Hang());
    LlmConfig config = Config("openai", server.base_url());
    config.stream = stream;
    config.timeout_seconds = 120;
    config.max_retries = 3;
    StatusOr<std::unique_ptr<LlmClient>> client = MakeLlmClient(config);
    ASSERT_TRUE(client.ok());
    std::atomic<bool> cancel{false};
    std::thread stopper([&] {
      server.WaitForRequests(1);
      cancel = true;
    });
    ChatRequest request;
    request.messages.push_back({Role::kUser, "hi"});
    request.cancel = &cancel;
    StatusOr<ChatResponse> r = (*client)->Chat(request);
    stopper.join();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kCancelled)
        << r.status().ToString();
    EXPECT_EQ(server.requests().size(), 1u);  // No retry after a cancel.
  }
}

// The wait before a retry (here 1000 s asked by Retry-After, capped at the
// default 60 s) wakes on the flag: kCancelled, not a second attempt.
TEST(LlmClientTest, CancelWakesTheWaitBetweenRetries) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  server.Enqueue(ScriptedReply::WithText(503, R"({"error": "busy"})")
                     .Header("Retry-After", "1000"));
  server.Enqueue(ScriptedReply::WithText(503, R"({"error": "busy"})"));
  LlmConfig config = Config("openai", server.base_url());
  config.max_retries = 1;
  config.initial_backoff_seconds = 1000;
  StatusOr<std::unique_ptr<LlmClient>> client = MakeLlmClient(config);
  ASSERT_TRUE(client.ok());
  std::atomic<bool> cancel{false};
  std::thread stopper([&] {
    server.WaitForRequests(1);
    cancel = true;
  });
  ChatRequest request;
  request.messages.push_back({Role::kUser, "hi"});
  request.cancel = &cancel;
  StatusOr<ChatResponse> r = (*client)->Chat(request);
  stopper.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status().ToString();
  EXPECT_EQ(server.requests().size(), 1u);
}

// A hung server is cut at the call's time limit, not at timeout_seconds;
// a retry that cannot fit in what is left is not made.
TEST(LlmClientTest, TimeLimitCutsTheRequestAndItsRetries) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  server.Enqueue(ScriptedReply::Hang());
  LlmConfig config = Config("openai", server.base_url());
  config.timeout_seconds = 60;
  config.max_retries = 3;
  StatusOr<std::unique_ptr<LlmClient>> client = MakeLlmClient(config);
  ASSERT_TRUE(client.ok());
  ChatRequest request;
  request.messages.push_back({Role::kUser, "hi"});
  request.time_limit_seconds = 0.3;
  StatusOr<ChatResponse> r = (*client)->Chat(request);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("cut at the time limit of 0.3 s"),
            std::string::npos)
      << r.status().message();
  EXPECT_EQ(server.requests().size(), 1u);

  // 503 with a 10 s backoff against a 5 s limit: one attempt only.
  ScriptedLlmServer busy;
  ASSERT_TRUE(busy.ok());
  busy.Enqueue(ScriptedReply::WithText(503, R"({"error": "busy"})"));
  LlmConfig c2 = Config("openai", busy.base_url());
  c2.max_retries = 3;
  c2.initial_backoff_seconds = 10;
  std::vector<double> slept;
  c2.sleep = [&](double s) { slept.push_back(s); };
  client = MakeLlmClient(c2);
  ASSERT_TRUE(client.ok());
  request.time_limit_seconds = 5;
  r = (*client)->Chat(request);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("leaves no time for a retry"),
            std::string::npos)
      << r.status().message();
  EXPECT_TRUE(slept.empty());
  EXPECT_EQ(busy.requests().size(), 1u);
}

}  // namespace
}  // namespace trench::agents
