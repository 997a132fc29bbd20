#include "agents/llm_openai.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "agents/llm_client.h"
#include "tests/agents/scripted_llm_server.h"

namespace trench::agents {
namespace {

using testing::ScriptedLlmServer;
using testing::ScriptedReply;

constexpr char kKey[] = "sk-test-SECRET-0123456789";

Json Parse(std::string_view text) {
  auto j = ParseJson(text);
  EXPECT_TRUE(j.ok()) << j.status().ToString() << " in " << text;
  return j.ok() ? *j : Json();
}

class OpenAiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok()) << server_.status().ToString();
    setenv("TRENCH_TEST_OPENAI_KEY", kKey, 1);
  }
  std::unique_ptr<LlmClient> Client(int max_retries = 3) {
    LlmConfig c;
    c.backend = "openai";
    c.base_url = server_.base_url();
    c.model = "test-model";
    c.api_key_env = "TRENCH_TEST_OPENAI_KEY";
    c.max_retries = max_retries;
    c.timeout_seconds = 5;
    c.sleep = [this](double s) { sleeps_.push_back(s); };
    auto client = MakeLlmClient(c);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(client).value() : nullptr;
  }
  static ChatRequest Request() {
    ChatRequest r;
    r.system = "You triage bugs.";
    r.messages.push_back(
        Message{.role = Role::kUser, .content = "Look at bug 3"});
    r.tools.push_back(ToolSpec{
        "read_case", "Reads a case",
        Parse(R"({"type":"object","properties":{"id":{"type":"integer"}}})")});
    return r;
  }
  static ScriptedReply Answer(std::string_view message_json,
                              std::string_view finish = "\"stop\"") {
    return ScriptedReply::WithText(
        200, R"({"choices":[{"index":0,"message":)" +
                 std::string(message_json) + R"(,"finish_reason":)" +
                 std::string(finish) +
                 R"(}],"usage":{"prompt_tokens":11,"completion_tokens":5}})");
  }

  ScriptedLlmServer server_;
  std::vector<double> sleeps_;
};

TEST_F(OpenAiTest, MultiTurnToolCallingSession) {
  server_.Enqueue(Answer(
      R"({"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function","function":{"name":"read_case","arguments":"{\"id\": 3}"}}]})",
      R"("tool_calls")"));
  server_.Enqueue(
      Answer(R"({"role":"assistant","content":"Bug 3 is a dup."})"));
  auto client = Client();
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->backend(), "openai");
  ChatRequest req = Request();
  auto r1 = client->Chat(req);
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ(r1->stop_reason, "tool_calls");
  EXPECT_EQ(r1->attempts, 1);
  EXPECT_EQ(r1->usage.input_tokens, 11);
  EXPECT_EQ(r1->usage.output_tokens, 5);
  ASSERT_EQ(r1->message.tool_calls.size(), 1u);
  const ToolCall& call = r1->message.tool_calls[0];
  EXPECT_EQ(call.id, "call_abc");
  EXPECT_EQ(call.name, "read_case");
  EXPECT_EQ(call.arguments, Parse(R"({"id":3})"));
  EXPECT_EQ(call.arguments_error, "");

  req.messages.push_back(r1->message);
  req.messages.push_back(Message{.role = Role::kTool,
                                 .content = "case 3: mismatch",
                                 .tool_call_id = "call_abc",
                                 .tool_name = "read_case"});
  auto r2 = client->Chat(req);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->message.content, "Bug 3 is a dup.");
  EXPECT_EQ(r2->stop_reason, "stop");
  EXPECT_TRUE(r2->message.tool_calls.empty());

  auto reqs = server_.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].path, "/v1/chat/completions");
  EXPECT_EQ(reqs[0].Header("authorization"), std::string("Bearer ") + kKey);
  EXPECT_EQ(reqs[0].Header("content-type"), "application/json");
  Json first = Parse(reqs[0].body);
  EXPECT_EQ(first["model"], Json("test-model"));
  EXPECT_EQ(first["messages"], Parse(R"([
      {"role":"system","content":"You triage bugs."},
      {"role":"user","content":"Look at bug 3"}])"));
  EXPECT_EQ(first["tools"], Parse(R"([{"type":"function","function":{
      "name":"read_case","description":"Reads a case","parameters":
      {"type":"object","properties":{"id":{"type":"integer"}}}}}])"));
  EXPECT_EQ(first.Find("stream"), nullptr);
  Json second = Parse(reqs[1].body);
  ASSERT_EQ(second["messages"].size(), 4u);
  EXPECT_EQ(second["messages"].array()[2], Parse(R"(
      {"role":"assistant","content":"","tool_calls":[{"id":"call_abc",
       "type":"function","function":{"name":"read_case",
       "arguments":"{\"id\": 3}"}}]})"));
  EXPECT_EQ(second["messages"].array()[3], Parse(R"(
      {"role":"tool","tool_call_id":"call_abc","content":"case 3: mismatch"})"));
}

TEST_F(OpenAiTest, FailedToolResultIsMarked) {
  ChatRequest req = Request();
  req.messages.push_back(Message{.role = Role::kTool,
                                 .content = "no such case",
                                 .tool_call_id = "c1",
                                 .is_error = true});
  Json body = BuildOpenAiRequest(LlmConfig{.model = "m"}, req);
  EXPECT_EQ(body["messages"].array().back().Find("content")->string_value(),
            "ERROR: no such case");
}

TEST_F(OpenAiTest, QuirksArgumentsObjectMissingIdsStopWithToolCalls) {
  // llama.cpp / Ollama style: arguments as an object, no ids, "stop".
  server_.Enqueue(Answer(
      R"({"role":"assistant","content":"","tool_calls":[
          {"function":{"name":"read_case","arguments":{"id":1}}},
          {"type":"function","function":{"name":"read_case","arguments":"{\"id\":2}"}}]})"));
  server_.Enqueue(Answer(
      R"({"role":"assistant","tool_calls":[{"function":{"name":"read_case"}}]})"));
  auto client = Client();
  auto r = client->Chat(Request());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stop_reason, "tool_calls");
  ASSERT_EQ(r->message.tool_calls.size(), 2u);
  EXPECT_EQ(r->message.tool_calls[0].id, "call_0");
  EXPECT_EQ(r->message.tool_calls[0].arguments, Parse(R"({"id":1})"));
  EXPECT_EQ(r->message.tool_calls[0].raw_arguments, R"({"id":1})");
  EXPECT_EQ(r->message.tool_calls[1].id, "call_1");
  EXPECT_EQ(r->message.tool_calls[1].arguments, Parse(R"({"id":2})"));
  // Made-up ids stay unique across turns; absent arguments are {}.
  auto r2 = client->Chat(Request());
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  ASSERT_EQ(r2->message.tool_calls.size(), 1u);
  EXPECT_EQ(r2->message.tool_calls[0].id, "call_2");
  EXPECT_EQ(r2->message.tool_calls[0].arguments, Json::MakeObject());
  EXPECT_EQ(r2->message.tool_calls[0].arguments_error, "");
}

TEST_F(OpenAiTest, MalformedArgumentsAreNotAnError) {
  server_.Enqueue(Answer(
      R"({"role":"assistant","content":null,"tool_calls":[
          {"id":"c1","function":{"name":"read_case","arguments":"{\"id\": 3"}},
          {"id":"c2","function":{"name":"read_case","arguments":"[1]"}}]})",
      R"("tool_calls")"));
  auto r = Client()->Chat(Request());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->message.tool_calls.size(), 2u);
  const ToolCall& bad = r->message.tool_calls[0];
  EXPECT_EQ(bad.raw_arguments, "{\"id\": 3");
  EXPECT_EQ(bad.arguments, Json::MakeObject());
  EXPECT_NE(bad.arguments_error.find("not valid JSON"), std::string::npos)
      << bad.arguments_error;
  EXPECT_NE(r->message.tool_calls[1].arguments_error.find("JSON object"),
            std::string::npos);
  // Sent back verbatim, so the model sees what it wrote.
  Json body = BuildOpenAiRequest(LlmConfig{.model = "m"},
                                 ChatRequest{.messages = {r->message}});
  Json sent = body["messages"].array()[0];
  EXPECT_EQ(sent["tool_calls"].mutable_array()[0]["function"]["arguments"],
            Json("{\"id\": 3"));
}

TEST_F(OpenAiTest, MalformedRepliesAreInvalidArgument) {
  struct Case {
    std::string body;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"{\"choices\": [", "not JSON"},
      {"[]", "not an object"},
      {R"({"choices":[]})", "no choices"},
      {R"({"choices":[{"index":0}]})", "no message"},
      {R"({"choices":[{"message":{"role":"assistant"}}]})",
       "neither content nor tool_calls"},
      {R"({"choices":[{"message":{"tool_calls":[{"id":"x","function":{"arguments":"{}"}}]}}]})",
       "tool call 0 has no function name"},
      {R"({"choices":[{"message":{"tool_calls":{}}}]})", "not an array"},
      {R"({"error":{"message":"model crashed"}})", "model crashed"},
  };
  for (const Case& c : cases)
    server_.Enqueue(ScriptedReply::WithText(200, c.body));
  auto client = Client();
  for (const Case& c : cases) {
    auto r = client->Chat(Request());
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.body;
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos)
        << r.status().message();
  }
  EXPECT_EQ(server_.requests().size(), cases.size());  // None retried.
}

TEST_F(OpenAiTest, RateLimitHonoursRetryAfter) {
  server_.Enqueue(
      ScriptedReply::WithText(
          429,
          R"({"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}})")
          .Header("Retry-After", "3"));
  server_.Enqueue(Answer(R"({"role":"assistant","content":"ok"})"));
  auto r = Client()->Chat(Request());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->message.content, "ok");
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(sleeps_, std::vector<double>{3});
  EXPECT_EQ(server_.requests().size(), 2u);
}

TEST_F(OpenAiTest, ServerErrorThenSuccess) {
  server_.Enqueue(
      ScriptedReply::WithText(500, R"({"error":{"message":"oops"}})"));
  server_.Enqueue(ScriptedReply::WithText(502, "bad gateway", "text/html"));
  server_.Enqueue(Answer(R"({"role":"assistant","content":"fine"})"));
  auto r = Client()->Chat(Request());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(sleeps_, (std::vector<double>{1, 2}));  // Exponential backoff.
}

TEST_F(OpenAiTest, RetriesUsedUp) {
  for (int i = 0; i < 3; ++i) {
    server_.Enqueue(
        ScriptedReply::WithText(429, R"({"error":{"message":"busy"}})"));
  }
  auto r = Client(/*max_retries=*/2)->Chat(Request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("HTTP 429 after 3 attempts: busy"),
            std::string::npos)
      << r.status().message();
}

TEST_F(OpenAiTest, QuotaErrorIsNotRetried) {
  server_.Enqueue(ScriptedReply::WithText(
      429,
      R"({"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}})"));
  auto r = Client()->Chat(Request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("quota"), std::string::npos);
  EXPECT_EQ(server_.requests().size(), 1u);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(OpenAiTest, InvalidRequestIsNotRetriedAndCarriesServerMessage) {
  server_.Enqueue(ScriptedReply::WithText(
      400,
      R"({"error":{"message":"'messages' must not be empty","type":"invalid_request_error"}})"));
  auto r = Client()->Chat(Request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "openai: POST " + server_.base_url() +
                "/chat/completions: HTTP 400: 'messages' must not be empty");
  EXPECT_EQ(server_.requests().size(), 1u);
}

TEST_F(OpenAiTest, TimeoutAfterRetries) {
  server_.Enqueue(ScriptedReply::Hang());
  server_.Enqueue(ScriptedReply::Hang());
  LlmConfig c{.backend = "openai",
              .base_url = server_.base_url(),
              .model = "m",
              .timeout_seconds = 0.2,
              .max_retries = 1};
  c.sleep = [this](double s) { sleeps_.push_back(s); };
  auto client = MakeLlmClient(c);
  ASSERT_TRUE(client.ok());
  auto r = (*client)->Chat(Request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("timed out after 0.2 s"),
            std::string::npos)
      << r.status().message();
  EXPECT_EQ(sleeps_.size(), 1u);
  EXPECT_FALSE(server_.requests()[0].HasHeader("authorization"));  // No key.
}

TEST_F(OpenAiTest, ApiKeyNeverInErrors) {
  // A server that echoes the key, as OpenAI does for a wrong key.
  server_.Enqueue(ScriptedReply::WithText(
      401, std::string(R"({"error":{"message":"Incorrect API key provided: )") +
               kKey + R"(","type":"invalid_request_error"}})"));
  auto r = Client()->Chat(Request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message().find(kKey), std::string::npos);
  EXPECT_NE(r.status().message().find("[redacted]"), std::string::npos);
  EXPECT_EQ(server_.requests()[0].body.find(kKey), std::string::npos);
}

TEST(MakeLlmClientTest, ConfigErrors) {
  LlmConfig c{.backend = "gemini", .base_url = "http://x", .model = "m"};
  EXPECT_EQ(MakeLlmClient(c).status().code(), StatusCode::kInvalidArgument);
  c.backend = "openai";
  c.model = "";
  EXPECT_EQ(MakeLlmClient(c).status().code(), StatusCode::kInvalidArgument);
  c.model = "m";
  c.base_url = "";
  EXPECT_EQ(MakeLlmClient(c).status().code(), StatusCode::kInvalidArgument);
  c.base_url = "http://x";
  c.api_key_env = "TRENCH_TEST_SURELY_UNSET_VARIABLE";
  unsetenv(c.api_key_env.c_str());
  auto r = MakeLlmClient(c);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find(c.api_key_env), std::string::npos);
}

}  // namespace
}  // namespace trench::agents
