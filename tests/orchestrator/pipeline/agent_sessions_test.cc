// RunAgent (orchestrator/pipeline/agent_sessions.cc) end to end: the role's
// brain from the config, an LLM backend played by the scripted loopback server,
// and the session, its transcript, tokens and cost in a real SQLite store
// file; a backend that fails makes the built-in brain do the work, and the
// session says so.
#include "orchestrator/pipeline/agent_sessions.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "orchestrator/api/metrics.h"
#include "orchestrator/daemon/logging.h"
#include "orchestrator/pipeline/agent_setup.h"
#include "orchestrator/pipeline/fallback_reason.h"
#include "tests/agents/fake_agents.h"
#include "tests/agents/scripted_llm_server.h"
#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator {
namespace {

using agents::runtime_testing::FakeToolBox;
using agents::testing::OpenAiToolCallReply;
using agents::testing::ScriptedLlmServer;
using agents::testing::ScriptedReply;

const std::string kCase(64, 'c');

Json J(std::string_view text) {
  StatusOr<Json> j = ParseJson(text);
  EXPECT_TRUE(j.ok()) << j.status().ToString() << "\n" << text;
  return j.ok() ? *j : Json();
}

std::string WithCase(std::string text) {
  text.replace(text.find("CASE"), 4, kCase);
  return text;
}

class AgentSessionsTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ASSERT_TRUE(server_.ok()) << server_.status().ToString();
    store_ = OpenStore(SystemClock::Get());
    ASSERT_NE(store_, nullptr);
    queue_ = std::make_unique<JobQueue>(store_.get());
    config_.prompts_dir = std::string(TRENCH_SOURCE_DIR) + "/prompts";
    config_.swarm["reproducer"].brain = "openai";
    config_.llm["openai"] = {.base_url = server_.base_url(),
                             .model = "test-model",
                             .max_retries = 0,
                             .input_usd_per_mtok = 2,
                             .output_usd_per_mtok = 10};
    ctx_.config = &config_;
    ctx_.store = store_.get();
    ctx_.queue = queue_.get();
    ctx_.worker = "reproducer#0";
    bug_ = *store_->CreateBug({.title = "report"}, "test", Json());
    task_ = J(R"({"runs": 3, "report_text": "the dot is wrong"})");
    task_["bug"] = bug_;
  }

  // The one session of the bug (as the store has it) and its messages.
  AgentSession OnlySession(std::vector<AgentMessage>* messages) {
    StatusOr<std::vector<AgentSession>> s = store_->ListAgentSessions(bug_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->size(), 1u);
    if (!s.ok() || s->empty()) return {};
    *messages = *store_->ListAgentMessages(s->back().id);
    return s->back();
  }
  static std::vector<std::string> Roles(const std::vector<AgentMessage>& m) {
    std::vector<std::string> roles;
    for (const AgentMessage& a : m) roles.push_back(a.role);
    return roles;
  }

  ScriptedLlmServer server_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<JobQueue> queue_;
  DaemonConfig config_;
  StepContext ctx_;
  int64_t bug_ = 0;
  Json task_;
};

TEST_F(AgentSessionsTest, AnLlmSessionIsStoredWithItsTokensAndCost) {
  server_.Enqueue(ScriptedReply::WithJson(
      200, OpenAiToolCallReply("run_case",
                               WithCase(R"({"case": "CASE", "runs": 3})"))));
  server_.Enqueue(ScriptedReply::WithJson(
      200, OpenAiToolCallReply("finish", WithCase(R"({"outcome": "done",
          "summary": "fails", "case": "CASE", "runs": 3, "failures": 3,
          "rate": 1.0, "status": "mismatch", "signature": {}})"))));
  FakeToolBox tools("reproducer");
  tools.answers["run_case"] = J(R"({"runs": 3, "failures": 3})");
  StatusOr<Json> claim = RunAgent(ctx_, "reproducer", bug_, task_, tools);
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  ASSERT_NE(claim->Find("brain"), nullptr) << claim->Dump();
  EXPECT_EQ(*claim->Find("brain"), Json("openai"));
  EXPECT_EQ(claim->Find("fallback"), nullptr);
  EXPECT_EQ(tools.calls, (std::vector<std::string>{"run_case", "finish"}));

  std::vector<AgentMessage> messages;
  const AgentSession s = OnlySession(&messages);
  EXPECT_EQ(s.role, "reproducer");
  EXPECT_EQ(s.backend, "openai");
  EXPECT_EQ(s.status, "done");
  EXPECT_TRUE(s.ended_ms.has_value());
  EXPECT_EQ(s.input_tokens, 100);
  EXPECT_EQ(s.output_tokens, 14);
  EXPECT_NEAR(s.cost_usd, (100 * 2 + 14 * 10) / 1e6, 1e-12);
  EXPECT_EQ(Roles(messages),
            (std::vector<std::string>{"task", "system", "user", "assistant",
                                      "tool", "assistant", "tool", "claim"}));
  // The report is quoted in the user message, never in the system prompt.
  EXPECT_EQ(messages[1].content.find("the dot is wrong"), std::string::npos);
  EXPECT_NE(messages[2].content.find("the dot is wrong"), std::string::npos);
  EXPECT_EQ(messages[3].input_tokens, 50);
  EXPECT_EQ(messages[3].output_tokens, 7);
  EXPECT_NE(messages[4].content.find("\"failures\\\":3"), std::string::npos)
      << messages[4].content;
  EXPECT_EQ(store_->TotalAgentTokens().value(), 114);
  StatusOr<AgentSpend> spend = store_->AgentSpendOfBug(bug_);
  ASSERT_TRUE(spend.ok());
  EXPECT_EQ(spend->tokens, 114);
  EXPECT_NEAR(spend->cost_usd, s.cost_usd, 1e-15);
}

// The cost of the bug's earlier sessions counts: the next session stops at
// the per-bug budget before its first request (whose input alone would
// cost more than the $0.00016 left) and the built-in brain finishes it.
TEST_F(AgentSessionsTest, TheCostBudgetPerBugSpansSessions) {
  const int64_t earlier =
      *store_->StartAgentSession(bug_, "minimizer", "openai");
  ASSERT_TRUE(
      store_->AddAgentMessage(earlier, "assistant", "{}", 100, 14, 0.00034)
          .ok());
  config_.budget_bug_cost_usd = 0.0005;  // $0.00017 a turn.
  server_.Enqueue(ScriptedReply::WithJson(
      200, OpenAiToolCallReply("run_case",
                               WithCase(R"({"case": "CASE", "runs": 3})"))));
  FakeToolBox tools("reproducer");
  StatusOr<Json> claim = RunAgent(ctx_, "reproducer", bug_, task_, tools);
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  ASSERT_NE(claim->Find("fallback"), nullptr) << claim->Dump();
  EXPECT_NE(claim->Find("fallback")->Dump().find("cost per bug"),
            std::string::npos)
      << claim->Dump();
  EXPECT_EQ(server_.requests().size(), 0u);
  StatusOr<std::vector<AgentSession>> s = store_->ListAgentSessions(bug_);
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ(s->back().status.rfind("fell back to builtin: ", 0), 0u)
      << s->back().status;
  EXPECT_NEAR(s->back().cost_usd, 0, 1e-12);
  EXPECT_NEAR(store_->AgentSpendOfBug(bug_)->cost_usd, 0.00034, 1e-12);
  EXPECT_EQ(store_->AddAgentMessage(earlier, "x", "", 0, 0, -1).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(AgentSessionsTest, AFailingBackendFallsBackToTheBuiltinBrain) {
  server_.Enqueue(ScriptedReply::WithJson(
      500, J(R"({"error": {"message": "overloaded", "type":
                 "server_error"}})")));
  FakeToolBox tools("reproducer");
  StatusOr<Json> claim = RunAgent(ctx_, "reproducer", bug_, task_, tools);
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  // The built-in reproducer's claim (the report has no HLO), marked.
  ASSERT_NE(claim->Find("fallback"), nullptr) << claim->Dump();
  EXPECT_EQ(*claim->Find("fallback")->Find("from"), Json("openai"));
  EXPECT_NE(claim->Find("outcome"), nullptr) << claim->Dump();

  std::vector<AgentMessage> messages;
  const AgentSession s = OnlySession(&messages);
  EXPECT_EQ(s.backend, "openai");  // The configured brain...
  EXPECT_EQ(s.status.rfind("fell back to builtin: ", 0), 0u) << s.status;
  EXPECT_NE(s.status.find("backend_error"), std::string::npos) << s.status;
  EXPECT_EQ(s.cost_usd, 0);  // No tokens were used.
  // ... whose transcript ends at the failed request, then the claim.
  EXPECT_EQ(Roles(messages),
            (std::vector<std::string>{"task", "system", "user", "claim"}));
  EXPECT_NE(messages.back().content.find("fallback"), std::string::npos);
}

TEST_F(AgentSessionsTest, ABrokenLlmSetUpIsRecordedAsAFallback) {
  config_.llm["openai"].api_key_env = "TRENCH_TEST_NO_SUCH_VARIABLE";
  FakeToolBox tools("reproducer");
  StatusOr<Json> claim = RunAgent(ctx_, "reproducer", bug_, task_, tools);
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  EXPECT_TRUE(server_.requests().empty());
  std::vector<AgentMessage> messages;
  const AgentSession s = OnlySession(&messages);
  EXPECT_EQ(s.backend, "openai");
  EXPECT_EQ(s.status.rfind("fell back to builtin: ", 0), 0u) << s.status;
  EXPECT_NE(s.status.find("TRENCH_TEST_NO_SUCH_VARIABLE"), std::string::npos);
  EXPECT_EQ(Roles(messages),
            (std::vector<std::string>{"task", "fallback", "claim"}));
  EXPECT_NE(messages[1].content.find("TRENCH_TEST_NO_SUCH_VARIABLE"),
            std::string::npos)
      << messages[1].content;
}

// A 404, a 5xx and a broken set-up each fall back: a warning naming role,
// backend and reason, the class on the session, and labelled series on
// /metrics (read from the store).
TEST_F(AgentSessionsTest, FallbacksAreWarnedStoredAndCounted) {
  std::ostringstream log;
  ASSERT_TRUE(SetUpLogging("json", "info", &log).ok());
  server_.Enqueue(ScriptedReply::WithJson(
      404, J(R"({"error": {"message": "no such route"}})")));
  FakeToolBox tools("reproducer");
  ASSERT_TRUE(RunAgent(ctx_, "reproducer", bug_, task_, tools).ok());
  server_.Enqueue(ScriptedReply::WithJson(
      503, J(R"({"error": {"message": "overloaded"}})")));
  ASSERT_TRUE(RunAgent(ctx_, "reproducer", bug_, task_, tools).ok());
  config_.llm["openai"].api_key_env = "TRENCH_TEST_NO_SUCH_VARIABLE";
  ASSERT_TRUE(RunAgent(ctx_, "reproducer", bug_, task_, tools).ok());
  ASSERT_TRUE(SetUpLogging("human", "warn").ok());

  StatusOr<std::vector<AgentSession>> s = store_->ListAgentSessions(bug_);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0].fallback_reason, "not_found") << (*s)[0].status;
  EXPECT_EQ((*s)[1].fallback_reason, "server_error") << (*s)[1].status;
  EXPECT_EQ((*s)[2].fallback_reason, "set_up") << (*s)[2].status;

  std::vector<Json> warnings;
  std::istringstream lines(log.str());
  for (std::string line; std::getline(lines, line);) {
    StatusOr<Json> j = ParseJson(line);
    ASSERT_TRUE(j.ok()) << line;
    EXPECT_NE(j->Find("msg")->string_value(), "agent done") << line;
    if (*j->Find("level") == Json("warn")) warnings.push_back(*j);
  }
  ASSERT_EQ(warnings.size(), 3u) << log.str();
  const char* reasons[] = {"not_found", "server_error", "set_up"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(*warnings[i].Find("role"), Json("reproducer"));
    EXPECT_EQ(*warnings[i].Find("backend"), Json("openai"));
    EXPECT_EQ(*warnings[i].Find("reason"), Json(reasons[i]));
    EXPECT_EQ(*warnings[i].Find("bug"), Json(bug_));
  }

  StatusOr<std::string> metrics = RenderMetrics(store_.get(), nullptr);
  ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
  for (const char* line : {
           "trench_agent_fallbacks_total{role=\"reproducer\",backend="
           "\"openai\",reason=\"not_found\"} 1\n",
           "trench_agent_fallbacks_total{role=\"reproducer\",backend="
           "\"openai\",reason=\"server_error\"} 1\n",
           "trench_agent_fallbacks_total{role=\"reproducer\",backend="
           "\"openai\",reason=\"set_up\"} 1\n",
           "trench_agent_sessions_total{role=\"reproducer\",backend="
           "\"openai\",status=\"fell_back\"} 3\n",
           "trench_llm_errors_total{role=\"reproducer\",backend=\"openai\","
           "reason=\"not_found\"} 1\n",
           "trench_llm_requests_total{role=\"reproducer\",backend="
           "\"openai\"} 2\n",
           "trench_agent_cost_usd_total{role=\"reproducer\",backend="
           "\"openai\"} 0\n",
       }) {
    EXPECT_NE(metrics->find(line), std::string::npos) << line << *metrics;
  }
}

TEST(FallbackReasonTest, ClassesFromStopAndStatusCode) {
  auto name = [](std::string_view r) {
    return std::string(FallbackReasonName(ClassifyFallback(r)));
  };
  EXPECT_EQ(name("budget: tokens"), "budget");
  EXPECT_EQ(name("loop: read_case repeated"), "loop");
  EXPECT_EQ(name("backend_error: DEADLINE_EXCEEDED: openai: timed out"),
            "timeout");
  EXPECT_EQ(name("backend_error: RESOURCE_EXHAUSTED: openai: HTTP 429 "
                 "(quota exhausted): x"),
            "quota");
  EXPECT_EQ(name("backend_error: RESOURCE_EXHAUSTED: openai: HTTP 429 "
                 "after 5 attempts: slow down"),
            "rate_limit");
  EXPECT_EQ(name("backend_error: IO_ERROR: openai: connection refused"),
            "transport");
  EXPECT_EQ(name("backend_error: INVALID_ARGUMENT: openai: HTTP 401: no"),
            "http_4xx");
  EXPECT_EQ(name("backend_error: INVALID_ARGUMENT: openai reply is not JSON"),
            "malformed_reply");
  EXPECT_EQ(name("something new"), "other");
}

// The start-up check: a prompts_dir without a role's file, or an unset
// key variable, names the role and the file / variable.
TEST_F(AgentSessionsTest, StartUpCheckNamesTheRoleAndTheFileOrVariable) {
  EXPECT_TRUE(CheckAgentSetUp(config_).ok());
  config_.prompts_dir = "";  // The built-in prompts.
  EXPECT_TRUE(CheckAgentSetUp(config_).ok());
  // A directory of its own: other test processes may share the machine.
  std::string dir = ::testing::TempDir() + "trench-prompts-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  { std::ofstream(dir + "/patch_drafter.md") << "x\n<!-- user message -->\n"; }
  config_.prompts_dir = dir;
  Status s = CheckAgentSetUp(config_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("swarm.reproducer"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find(dir + "/reproducer.md"), std::string::npos)
      << s.message();
  std::filesystem::remove_all(dir);
  config_.prompts_dir = "";
  config_.llm["openai"].api_key_env = "TRENCH_TEST_NO_SUCH_VARIABLE";
  s = CheckAgentSetUp(config_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("swarm.reproducer"), std::string::npos);
  EXPECT_NE(s.message().find("TRENCH_TEST_NO_SUCH_VARIABLE"),
            std::string::npos);
}

// SIGTERM while the backend hangs: the in-flight request is cancelled,
// the session is "interrupted" (not a fallback: the built-in brain does not
// run) and RunAgent says kCancelled, so that the daemon gives the job back
// to the queue instead of failing it.
TEST_F(AgentSessionsTest, AStopInterruptsTheSessionWithoutFallback) {
  config_.llm["openai"].timeout_seconds = 120;
  server_.Enqueue(ScriptedReply::Hang());
  std::atomic<bool> stopping{false};
  ctx_.stopping = &stopping;
  std::thread stopper([&] {
    server_.WaitForRequests(1);
    stopping = true;
  });
  FakeToolBox tools("reproducer");
  StatusOr<Json> claim = RunAgent(ctx_, "reproducer", bug_, task_, tools);
  stopper.join();
  ASSERT_FALSE(claim.ok()) << claim->Dump();
  EXPECT_EQ(claim.status().code(), StatusCode::kCancelled)
      << claim.status().ToString();
  EXPECT_TRUE(tools.calls.empty());  // No built-in brain at work.
  std::vector<AgentMessage> messages;
  const AgentSession s = OnlySession(&messages);
  EXPECT_EQ(s.status, "interrupted");
  EXPECT_TRUE(s.ended_ms.has_value());
  for (const AgentMessage& m : messages) EXPECT_NE(m.role, "claim");
}

// A server that reports no usage (Ollama): the tokens are estimates, and
// the session's status says so.
TEST_F(AgentSessionsTest, EstimatedTokensAreMarkedInTheSession) {
  Json reply = OpenAiToolCallReply("finish", WithCase(R"({"outcome": "done",
      "summary": "fails", "case": "CASE", "runs": 3, "failures": 3,
      "rate": 1.0, "status": "mismatch", "signature": {}})"));
  std::erase_if(reply.mutable_object(),
                [](const auto& kv) { return kv.first == "usage"; });
  server_.Enqueue(ScriptedReply::WithJson(200, reply));
  FakeToolBox tools("reproducer");
  StatusOr<Json> claim = RunAgent(ctx_, "reproducer", bug_, task_, tools);
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  std::vector<AgentMessage> messages;
  const AgentSession s = OnlySession(&messages);
  EXPECT_EQ(s.status, "done (tokens estimated: the server reported no usage)");
  EXPECT_GT(s.input_tokens, 0);
  EXPECT_GT(s.output_tokens, 0);
  EXPECT_GT(s.cost_usd, 0);
}

}  // namespace
}  // namespace trench::orchestrator
