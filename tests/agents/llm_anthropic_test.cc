#include "agents/llm_anthropic.h"

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

constexpr char kKey[] = "sk-ant-test-SECRET-987";

Json Parse(std::string_view text) {
  auto j = ParseJson(text);
  EXPECT_TRUE(j.ok()) << j.status().ToString() << " in " << text;
  return j.ok() ? *j : Json();
}

class AnthropicTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok());
    setenv("TRENCH_TEST_ANTHROPIC_KEY", kKey, 1);
  }
  std::unique_ptr<LlmClient> Client(bool stream = false, int max_retries = 3) {
    LlmConfig c{.backend = "anthropic",
                .base_url = server_.base_url(),
                .model = "claude-test",
                .api_key_env = "TRENCH_TEST_ANTHROPIC_KEY",
                .stream = stream,
                .timeout_seconds = 5,
                .max_retries = max_retries};
    c.sleep = [this](double s) { sleeps_.push_back(s); };
    auto client = MakeLlmClient(c);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(client).value();
  }
  static ChatRequest Request() {
    ChatRequest r;
    r.system = "You minimize.";
    r.max_tokens = 100;
    r.messages.push_back(
        Message{.role = Role::kUser, .content = "Shrink case 9"});
    r.tools.push_back(
        ToolSpec{"reduce", "Runs hlo-reduce", Parse(R"({"type":"object"})")});
    return r;
  }
  ScriptedLlmServer server_;
  std::vector<double> sleeps_;
};

TEST_F(AnthropicTest, MultiTurnToolUseSession) {
  server_.Enqueue(
      ScriptedReply::WithText(200, R"({"id":"msg_1","type":"message",
      "role":"assistant","content":[{"type":"text","text":"Reducing."},
      {"type":"tool_use","id":"toolu_1","name":"reduce","input":{"case":9}},
      {"type":"tool_use","id":"toolu_2","name":"reduce","input":{"case":10}}],
      "stop_reason":"tool_use","usage":{"input_tokens":30,"output_tokens":12,
      "cache_read_input_tokens":5}})"));
  server_.Enqueue(ScriptedReply::WithText(200, R"({"type":"message",
      "content":[{"type":"text","text":"Done: 12 ops."}],"stop_reason":"end_turn",
      "usage":{"input_tokens":50,"output_tokens":4}})"));
  auto client = Client();
  EXPECT_EQ(client->backend(), "anthropic");
  ChatRequest req = Request();
  auto r1 = client->Chat(req);
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ(r1->stop_reason, "tool_calls");
  EXPECT_EQ(r1->message.content, "Reducing.");
  EXPECT_EQ(r1->usage.input_tokens, 35);
  EXPECT_EQ(r1->usage.output_tokens, 12);
  ASSERT_EQ(r1->message.tool_calls.size(), 2u);
  EXPECT_EQ(r1->message.tool_calls[0].id, "toolu_1");
  EXPECT_EQ(r1->message.tool_calls[0].arguments, Parse(R"({"case":9})"));

  req.messages.push_back(r1->message);
  req.messages.push_back(Message{
      .role = Role::kTool, .content = "12 ops", .tool_call_id = "toolu_1"});
  req.messages.push_back(Message{.role = Role::kTool,
                                 .content = "no case 10",
                                 .tool_call_id = "toolu_2",
                                 .is_error = true});
  auto r2 = client->Chat(req);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->message.content, "Done: 12 ops.");
  EXPECT_EQ(r2->stop_reason, "stop");

  auto reqs = server_.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].path, "/v1/messages");
  EXPECT_EQ(reqs[0].Header("x-api-key"), kKey);
  EXPECT_EQ(reqs[0].Header("anthropic-version"), "2023-06-01");
  EXPECT_FALSE(reqs[0].HasHeader("authorization"));
  Json first = Parse(reqs[0].body);
  EXPECT_EQ(first["system"], Json("You minimize."));
  EXPECT_EQ(first["max_tokens"], Json(100));
  EXPECT_EQ(first["tools"], Parse(R"([{"name":"reduce",
      "description":"Runs hlo-reduce","input_schema":{"type":"object"}}])"));
  EXPECT_EQ(first["messages"], Parse(R"([{"role":"user",
      "content":[{"type":"text","text":"Shrink case 9"}]}])"));
  Json second = Parse(reqs[1].body);
  EXPECT_EQ(second["messages"], Parse(R"([
      {"role":"user","content":[{"type":"text","text":"Shrink case 9"}]},
      {"role":"assistant","content":[{"type":"text","text":"Reducing."},
        {"type":"tool_use","id":"toolu_1","name":"reduce","input":{"case":9}},
        {"type":"tool_use","id":"toolu_2","name":"reduce","input":{"case":10}}]},
      {"role":"user","content":[
        {"type":"tool_result","tool_use_id":"toolu_1","content":"12 ops"},
        {"type":"tool_result","tool_use_id":"toolu_2","content":"no case 10",
         "is_error":true}]}])"));
}

TEST_F(AnthropicTest, OverloadedThenRateLimitedThenSuccess) {
  server_.Enqueue(ScriptedReply::WithText(
      529,
      R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"));
  server_.Enqueue(
      ScriptedReply::WithText(
          429,
          R"({"type":"error","error":{"type":"rate_limit_error","message":"slow"}})")
          .Header("retry-after", "5"));
  server_.Enqueue(ScriptedReply::WithText(
      200,
      R"({"type":"message","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"})"));
  auto r = Client()->Chat(Request());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(sleeps_, (std::vector<double>{1, 5}));
}

TEST_F(AnthropicTest, OverloadedUntilRetriesRunOut) {
  for (int i = 0; i < 2; ++i) {
    server_.Enqueue(ScriptedReply::WithText(
        529,
        R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"));
  }
  auto r = Client(false, /*max_retries=*/1)->Chat(Request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("HTTP 529 after 2 attempts: Overloaded"),
            std::string::npos)
      << r.status().message();
}

TEST_F(AnthropicTest, InvalidRequestNotRetriedKeyRedacted) {
  server_.Enqueue(ScriptedReply::WithText(
      400,
      std::string(
          R"({"type":"error","error":{"type":"invalid_request_error","message":"bad key )") +
          kKey + R"( and messages.1: tool_use ids must be unique"}})"));
  auto r = Client()->Chat(Request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("tool_use ids must be unique"),
            std::string::npos);
  EXPECT_EQ(r.status().message().find(kKey), std::string::npos);
  EXPECT_EQ(server_.requests().size(), 1u);
}

TEST_F(AnthropicTest, MalformedRepliesAndArguments) {
  server_.Enqueue(ScriptedReply::WithText(200, "<html>proxy error</html>"));
  server_.Enqueue(ScriptedReply::WithText(200, R"({"type":"message"})"));
  server_.Enqueue(ScriptedReply::WithText(
      200, R"({"content":[{"type":"tool_use","id":"t","input":{}}]})"));
  server_.Enqueue(ScriptedReply::WithText(
      200,
      R"({"content":[{"type":"tool_use","name":"reduce","input":"{bad"}],"stop_reason":"tool_use"})"));
  auto client = Client();
  for (std::string expect : {"not JSON", "no content array", "has no name"}) {
    auto r = client->Chat(Request());
    ASSERT_FALSE(r.ok()) << expect;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(expect), std::string::npos)
        << r.status().message();
  }
  auto r = client->Chat(Request());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->message.tool_calls.size(), 1u);
  EXPECT_EQ(r->message.tool_calls[0].id, "call_0");
  EXPECT_EQ(r->message.tool_calls[0].raw_arguments, "{bad");
  EXPECT_FALSE(r->message.tool_calls[0].arguments_error.empty());
}

TEST_F(AnthropicTest, StreamingToolUseSplitOverChunks) {
  const std::string stream =
      "event: message_start\ndata: "
      "{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":40,"
      "\"output_tokens\":1}}}\n\n"
      "event: ping\ndata: {\"type\":\"ping\"}\n\n"
      "event: content_block_start\ndata: "
      "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{"
      "\"type\":\"text\",\"text\":\"\"}}\n\n"
      "event: content_block_delta\ndata: "
      "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
      "\"text_delta\",\"text\":\"On it\"}}\n\n"
      "event: content_block_stop\ndata: "
      "{\"type\":\"content_block_stop\",\"index\":0}\n\n"
      "event: content_block_start\ndata: "
      "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{"
      "\"type\":\"tool_use\",\"id\":\"toolu_9\",\"name\":\"reduce\",\"input\":{"
      "}}}\n\n"
      "event: content_block_delta\ndata: "
      "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
      "\"input_json_delta\",\"partial_json\":\"{\\\"case\\\"\"}}\n\n"
      "event: content_block_delta\ndata: "
      "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
      "\"input_json_delta\",\"partial_json\":\": 9}\"}}\n\n"
      "event: message_delta\ndata: "
      "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},"
      "\"usage\":{\"output_tokens\":17}}\n\n"
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  std::vector<std::string> chunks;
  for (size_t i = 0; i < stream.size(); i += 9)
    chunks.push_back(stream.substr(i, 9));
  server_.Enqueue(ScriptedReply::WithChunks(
      {"event: error\ndata: "
       "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
       "\"message\":\"Overloaded\"}}\n\n"}));
  server_.Enqueue(ScriptedReply::WithChunks(chunks));
  auto r = Client(/*stream=*/true)->Chat(Request());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->attempts, 2);  // The error event was retried.
  EXPECT_EQ(r->message.content, "On it");
  EXPECT_EQ(r->stop_reason, "tool_calls");
  EXPECT_EQ(r->usage.input_tokens, 40);
  EXPECT_EQ(r->usage.output_tokens, 17);
  ASSERT_EQ(r->message.tool_calls.size(), 1u);
  EXPECT_EQ(r->message.tool_calls[0].id, "toolu_9");
  EXPECT_EQ(r->message.tool_calls[0].arguments, Parse(R"({"case":9})"));
  EXPECT_EQ(Parse(server_.requests()[0].body)["stream"], Json(true));
}

TEST_F(AnthropicTest, TimeoutIsDeadlineExceeded) {
  server_.Enqueue(ScriptedReply::Hang());
  LlmConfig c{.backend = "anthropic",
              .base_url = server_.base_url(),
              .model = "m",
              .timeout_seconds = 0.2,
              .max_retries = 0};
  auto client = MakeLlmClient(c);
  ASSERT_TRUE(client.ok());
  auto r = (*client)->Chat(Request());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace trench::agents
