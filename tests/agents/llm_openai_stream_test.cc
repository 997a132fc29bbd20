// The openai backend with stream=true: SSE chunks split anywhere.
#include "agents/llm_openai_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agents/llm_client.h"
#include "tests/agents/scripted_llm_server.h"

namespace trench::agents {
namespace {

using testing::ScriptedLlmServer;
using testing::ScriptedReply;

Json Parse(std::string_view text) {
  auto j = ParseJson(text);
  EXPECT_TRUE(j.ok()) << j.status().ToString() << " in " << text;
  return j.ok() ? *j : Json();
}

// "data: <json>\n\n" for each chunk, joined and then cut every `step` bytes.
std::vector<std::string> Cut(const std::vector<std::string>& datas,
                             size_t step) {
  std::string all;
  for (const std::string& d : datas) all += "data: " + d + "\r\n\r\n";
  std::vector<std::string> out;
  for (size_t i = 0; i < all.size(); i += step)
    out.push_back(all.substr(i, step));
  return out;
}

std::string Delta(std::string_view delta, std::string_view finish = "null") {
  return R"({"object":"chat.completion.chunk","choices":[{"index":0,"delta":)" +
         std::string(delta) + R"(,"finish_reason":)" + std::string(finish) +
         "}]}";
}

class OpenAiStreamTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.ok()); }
  std::unique_ptr<LlmClient> Client() {
    LlmConfig c{.backend = "openai",
                .base_url = server_.base_url(),
                .model = "m",
                .stream = true,
                .timeout_seconds = 5,
                .max_retries = 2};
    c.sleep = [this](double s) { sleeps_.push_back(s); };
    auto client = MakeLlmClient(c);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(client).value();
  }
  ChatRequest Request() {
    return ChatRequest{
        .messages = {Message{.role = Role::kUser, .content = "go"}}};
  }
  ScriptedLlmServer server_;
  std::vector<double> sleeps_;
};

TEST_F(OpenAiStreamTest, ToolCallsSplitOverManyChunks) {
  const std::vector<std::string> datas = {
      Delta(R"({"role":"assistant","content":"Let me "})"),
      Delta(R"({"content":"look."})"),
      Delta(
          R"({"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_case","arguments":""}}]})"),
      Delta(
          R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"id\""}}]})"),
      Delta(R"({"tool_calls":[{"index":0,"function":{"arguments":": 4}"}}]})"),
      Delta(
          R"({"tool_calls":[{"index":1,"id":"call_b","function":{"name":"list_bugs","arguments":"{}"}}]})"),
      Delta("{}", R"("tool_calls")"),
      R"({"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":9}})",
      "[DONE]"};
  for (size_t step : {1, 7, 64}) {
    server_.Enqueue(ScriptedReply::WithChunks(Cut(datas, step)));
    auto r = Client()->Chat(Request());
    ASSERT_TRUE(r.ok()) << step << ": " << r.status().ToString();
    EXPECT_EQ(r->message.content, "Let me look.");
    EXPECT_EQ(r->stop_reason, "tool_calls");
    EXPECT_EQ(r->usage.input_tokens, 20);
    EXPECT_EQ(r->usage.output_tokens, 9);
    ASSERT_EQ(r->message.tool_calls.size(), 2u);
    EXPECT_EQ(r->message.tool_calls[0].id, "call_a");
    EXPECT_EQ(r->message.tool_calls[0].name, "read_case");
    EXPECT_EQ(r->message.tool_calls[0].arguments, Parse(R"({"id":4})"));
    EXPECT_EQ(r->message.tool_calls[1].id, "call_b");
    EXPECT_EQ(r->message.tool_calls[1].name, "list_bugs");
  }
  auto reqs = server_.requests();
  ASSERT_FALSE(reqs.empty());
  Json body = Parse(reqs[0].body);
  EXPECT_EQ(body["stream"], Json(true));
  EXPECT_EQ(body["stream_options"], Parse(R"({"include_usage":true})"));
  EXPECT_EQ(reqs[0].Header("accept"), "text/event-stream");
}

TEST_F(OpenAiStreamTest, ParallelCallsAllWithIndexZeroAndStop) {
  // vLLM/llama.cpp quirk: every call carries index 0; ids or names tell
  // them apart; the finish_reason says "stop"; no [DONE].
  const std::vector<std::string> datas = {
      Delta(
          R"({"tool_calls":[{"index":0,"id":"x1","function":{"name":"a","arguments":"{\"n\":"}}]})"),
      Delta(R"({"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]})"),
      Delta(
          R"({"tool_calls":[{"index":0,"id":"x2","function":{"name":"b","arguments":"{}"}}]})"),
      Delta(
          R"({"tool_calls":[{"index":0,"function":{"name":"c","arguments":{"k":"v"}}}]})"),
      Delta("{}", R"("stop")")};
  server_.Enqueue(ScriptedReply::WithChunks(Cut(datas, 5)));
  auto r = Client()->Chat(Request());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stop_reason, "tool_calls");
  ASSERT_EQ(r->message.tool_calls.size(), 3u);
  EXPECT_EQ(r->message.tool_calls[0].id, "x1");
  EXPECT_EQ(r->message.tool_calls[0].arguments, Parse(R"({"n":1})"));
  EXPECT_EQ(r->message.tool_calls[1].id, "x2");
  EXPECT_EQ(r->message.tool_calls[1].name, "b");
  EXPECT_EQ(r->message.tool_calls[2].id, "call_0");  // Made up.
  EXPECT_EQ(r->message.tool_calls[2].name, "c");
  EXPECT_EQ(r->message.tool_calls[2].arguments, Parse(R"({"k":"v"})"));
}

TEST_F(OpenAiStreamTest, MalformedStreamedArgumentsAreNotAnError) {
  server_.Enqueue(ScriptedReply::WithSseData({Parse(Delta(
      R"({"tool_calls":[{"index":0,"id":"q","function":{"name":"a","arguments":"{oops"}}]})",
      R"("tool_calls")"))}));
  auto r = Client()->Chat(Request());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->message.tool_calls.size(), 1u);
  EXPECT_EQ(r->message.tool_calls[0].raw_arguments, "{oops");
  EXPECT_FALSE(r->message.tool_calls[0].arguments_error.empty());
}

TEST_F(OpenAiStreamTest, TruncatedStreamAndStreamErrorAreRetried) {
  server_.Enqueue(ScriptedReply::WithChunks(
      {"data: " + Delta(R"({"content":"par"})") + "\n\n"}));
  server_.Enqueue(ScriptedReply::WithSseData(
      {Parse(R"({"error":{"message":"overloaded"}})")}));
  server_.Enqueue(ScriptedReply::WithSseData(
      {Parse(Delta(R"({"content":"whole"})", R"("stop")"))}));
  auto r = Client()->Chat(Request());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->message.content, "whole");
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(sleeps_.size(), 2u);
}

TEST_F(OpenAiStreamTest, HttpErrorsWhileStreaming) {
  server_.Enqueue(
      ScriptedReply::WithText(429, R"({"error":{"message":"wait"}})")
          .Header("retry-after", "2"));
  server_.Enqueue(
      ScriptedReply::WithText(400, R"({"error":{"message":"bad tools"}})"));
  auto r = Client()->Chat(Request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("HTTP 400 after 2 attempts: bad tools"),
            std::string::npos)
      << r.status().message();
  EXPECT_EQ(sleeps_, std::vector<double>{2});
}

TEST_F(OpenAiStreamTest, MalformedChunkIsInvalidArgumentNotRetried) {
  server_.Enqueue(ScriptedReply::WithChunks({"data: {\"choices\": [\n\n"}));
  auto r = Client()->Chat(Request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("event 1 is not JSON"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(server_.requests().size(), 1u);
}

TEST(OpenAiStreamAccumulatorTest, CallWithoutNameIsInvalid) {
  CallIdSource ids;
  OpenAiStreamAccumulator acc(&ids);
  ASSERT_TRUE(
      acc
          .OnEvent(SseEvent{
              "",
              Delta(
                  R"({"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]})",
                  R"("tool_calls")"),
              ""})
          .ok());
  auto r = acc.Finish();
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("no function name"), std::string::npos);
}

}  // namespace
}  // namespace trench::agents
