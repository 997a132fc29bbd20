// The budgets bound each request, not only the turns between them, over
// the real OpenAI client and the scripted loopback server: a hung server is
// cut at the remaining wall budget (a fake clock), max_tokens shrinks with
// the token budget, a server that reports no usage is counted at estimates
// and the transcript says so; a stop request interrupts the session.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "agents/llm_brain.h"
#include "agents/runtime.h"
#include "tests/agents/fake_agents.h"
#include "tests/agents/scripted_llm_server.h"

namespace trench::agents {
namespace {

using runtime_testing::Call;
using runtime_testing::FakeLlm;
using runtime_testing::FakeToolBox;
using runtime_testing::RecordingSink;
using runtime_testing::Reply;
using testing::OpenAiToolCallReply;
using testing::RecordedRequest;
using testing::ScriptedLlmServer;
using testing::ScriptedReply;

SessionSetup ReproSetup() {
  SessionSetup s;
  s.system_prompt = "You are the reproducer.";
  s.user_message = "Reproduce bug 7.";
  return s;
}

std::unique_ptr<LlmClient> OpenAi(const ScriptedLlmServer& server,
                                  double timeout_seconds = 30) {
  LlmConfig config;
  config.backend = "openai";
  config.base_url = server.base_url();
  config.model = "test-model";
  config.max_retries = 0;
  config.timeout_seconds = timeout_seconds;
  StatusOr<std::unique_ptr<LlmClient>> c = MakeLlmClient(config);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(*c) : nullptr;
}

Json WriteCase(int seed) {
  return OpenAiToolCallReply(
      "write_case", R"({"hlo": "x", "seed": )" + std::to_string(seed) + "}");
}

class SinkWithEstimates : public RecordingSink {
 public:
  void OnTokensEstimated() override { ++estimated; }
  int estimated = 0;
};

// 8 s of wall budget; once the server has the first request, the fake
// clock says 7.5 s went by: the second request may take 0.5 s, and the
// hung server is cut there (the client's timeout is 30 s).
TEST(RuntimeBudgetTest, HungServerIsCutAtTheRemainingWallBudget) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  server.Enqueue(ScriptedReply::WithJson(200, WriteCase(1)));
  server.Enqueue(ScriptedReply::Hang());
  std::unique_ptr<LlmClient> client = OpenAi(server, 30);
  ASSERT_NE(client, nullptr);
  FakeToolBox tools("reproducer");
  Budgets b;
  b.max_wall_seconds = 8;
  Clock clock = [&] { return server.requests().empty() ? 0.0 : 7.5; };
  StatusOr<SessionOutcome> o =
      RunSession(*client, tools, ReproSetup(), b, nullptr, clock);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->stop, StopReason::kBudget) << o->detail;
  EXPECT_EQ(o->turns, 2);
  EXPECT_TRUE(
      o->detail.starts_with("wall time: the request was cut at the "
                            "8s budget"))
      << o->detail;
  EXPECT_NE(o->detail.find("time limit of 0.5 s"), std::string::npos)
      << o->detail;
  EXPECT_EQ(server.requests().size(), 2u);
}

// The max_tokens each request carries is what the token budget leaves.
TEST(RuntimeBudgetTest, MaxTokensComesFromTheRemainingTokenBudget) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  for (int i = 1; i <= 4; ++i) {
    server.Enqueue(ScriptedReply::WithJson(200, WriteCase(i)));
  }
  // Then the empty queue's 500 ends the session.
  std::unique_ptr<LlmClient> client = OpenAi(server);
  ASSERT_NE(client, nullptr);
  FakeToolBox tools("reproducer");
  Budgets b;
  b.max_tokens = 4000;  // Binds before max_output_tokens (4096).
  StatusOr<SessionOutcome> o =
      RunSession(*client, tools, ReproSetup(), b, nullptr);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->stop, StopReason::kBackendError) << o->detail;
  std::vector<RecordedRequest> requests = server.requests();
  ASSERT_EQ(requests.size(), 5u);
  int64_t last = b.max_tokens;
  for (const RecordedRequest& r : requests) {
    StatusOr<Json> body = r.JsonBody();
    ASSERT_TRUE(body.ok());
    const Json* max = body->Find("max_tokens");
    ASSERT_NE(max, nullptr) << r.body;
    const int64_t now = max->int64_value();
    EXPECT_GT(now, 0);
    EXPECT_LT(now, last) << "max_tokens must shrink as tokens are used";
    last = now;
  }
}

// A budget that cannot cover even the next request's input stops the
// session before sending it.
TEST(RuntimeBudgetTest, NoRequestWhenTheBudgetCannotCoverItsInput) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  std::unique_ptr<LlmClient> client = OpenAi(server);
  ASSERT_NE(client, nullptr);
  FakeToolBox tools("reproducer");
  Budgets b;
  b.max_tokens = 50;  // The tools' schemas alone are more.
  StatusOr<SessionOutcome> o =
      RunSession(*client, tools, ReproSetup(), b, nullptr);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->stop, StopReason::kBudget);
  EXPECT_EQ(o->turns, 0);
  EXPECT_NE(o->detail.find("leave no room for a reply"), std::string::npos)
      << o->detail;
  EXPECT_TRUE(server.requests().empty());
}

// Ollama-like replies without usage: the tokens are estimated (~4 bytes a
// token), the budget holds, and the transcript says "estimated".
TEST(RuntimeBudgetTest, ServerWithoutUsageIsCountedAtEstimates) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  for (int i = 1; i <= 20; ++i) {
    Json reply = WriteCase(i);
    std::erase_if(reply.mutable_object(),
                  [](const auto& kv) { return kv.first == "usage"; });
    server.Enqueue(ScriptedReply::WithJson(200, reply));
  }
  std::unique_ptr<LlmClient> client = OpenAi(server);
  ASSERT_NE(client, nullptr);
  FakeToolBox tools("reproducer");
  SinkWithEstimates sink;
  Budgets b;
  b.max_tokens = 12000;
  StatusOr<SessionOutcome> o =
      RunSession(*client, tools, ReproSetup(), b, &sink);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->stop, StopReason::kBudget) << o->detail;
  EXPECT_TRUE(o->tokens_estimated);
  EXPECT_GT(o->usage.input_tokens, 0);
  EXPECT_GT(o->usage.output_tokens, 0);
  EXPECT_LE(o->usage.input_tokens + o->usage.output_tokens, b.max_tokens);
  EXPECT_LT(o->turns, 20);
  EXPECT_EQ(sink.estimated, 1);
  int assistant = 0;
  for (const auto& e : sink.entries) {
    if (e.role != "assistant") continue;
    ++assistant;
    EXPECT_GT(e.in, 0);
    EXPECT_NE(e.content.find("\"usage\":\"estimated"), std::string::npos)
        << e.content;
  }
  EXPECT_EQ(assistant, o->turns);
}

// A server that reports usage is taken at its word: no estimate.
TEST(RuntimeBudgetTest, ReportedUsageIsNotEstimated) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  server.Enqueue(ScriptedReply::WithJson(
      200, OpenAiToolCallReply("finish", R"({"case": null, "reason": "no"})")));
  std::unique_ptr<LlmClient> client = OpenAi(server);
  ASSERT_NE(client, nullptr);
  FakeToolBox tools("reproducer");
  SinkWithEstimates sink;
  StatusOr<SessionOutcome> o =
      RunSession(*client, tools, ReproSetup(), Budgets(), &sink);
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->tokens_estimated);
  EXPECT_EQ(o->usage.input_tokens, 50);
  EXPECT_EQ(o->usage.output_tokens, 7);
  EXPECT_EQ(sink.estimated, 0);
}

TEST(RuntimeBudgetTest, EstimateIsFourBytesPerToken) {
  EXPECT_EQ(EstimateTokens(0), 0);
  EXPECT_EQ(EstimateTokens(1), 1);
  EXPECT_EQ(EstimateTokens(4), 1);
  EXPECT_EQ(EstimateTokens(5), 2);
  EXPECT_EQ(EstimateTokens(4000), 1000);
}

// A stop request while the server hangs: the session ends "interrupted",
// and the LLM brain does not fall back to the built-in one.
TEST(RuntimeBudgetTest, StopInterruptsTheSessionWithoutFallback) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  server.Enqueue(ScriptedReply::Hang());
  std::shared_ptr<LlmClient> client = OpenAi(server, 120);
  ASSERT_NE(client, nullptr);
  std::atomic<bool> stop{false};
  RecordingSink sink;
  LlmBrainOptions options;
  options.role = "reproducer";
  options.prompts_dir = std::string(TRENCH_SOURCE_DIR) + "/prompts";
  options.cancel = &stop;
  options.transcripts = [&](const Json&) {
    return std::unique_ptr<TranscriptSink>(
        new runtime_testing::ForwardingSink(&sink));
  };
  StatusOr<std::unique_ptr<LlmBrain>> brain =
      MakeLlmBrain(options, std::move(client));
  ASSERT_TRUE(brain.ok()) << brain.status().ToString();
  std::thread stopper([&] {
    server.WaitForRequests(1);
    stop = true;
  });
  FakeToolBox tools("reproducer");
  Json task = Json::MakeObject();
  task["bug"] = 7;
  task["runs"] = 3;
  StatusOr<Json> claim = (*brain)->Run(task, tools);
  stopper.join();
  ASSERT_FALSE(claim.ok()) << claim->Dump();
  EXPECT_EQ(claim.status().code(), StatusCode::kCancelled)
      << claim.status().ToString();
  EXPECT_EQ(sink.ends, std::vector<std::string>{"interrupted"});
  EXPECT_EQ((*brain)->last_run().outcome.stop, StopReason::kInterrupted);
  EXPECT_FALSE((*brain)->last_run().fell_back);
  EXPECT_TRUE(tools.calls.empty());  // The built-in brain did not run.
}

// Stopped before a turn: no request at all.
TEST(RuntimeBudgetTest, StopBeforeTheFirstTurnSendsNothing) {
  FakeLlm llm;
  FakeToolBox tools("reproducer");
  std::atomic<bool> stop{true};
  SessionSetup s = ReproSetup();
  s.cancel = &stop;
  StatusOr<SessionOutcome> o = RunSession(llm, tools, s, Budgets(), nullptr);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->stop, StopReason::kInterrupted);
  EXPECT_EQ(o->turns, 0);
  EXPECT_TRUE(llm.requests.empty());
  EXPECT_EQ(StopReasonName(StopReason::kInterrupted), "interrupted");
}

}  // namespace
}  // namespace trench::agents
