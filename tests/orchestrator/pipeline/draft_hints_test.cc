// A reviewer's redraft hint on its way to the patch drafter: ApplyTriage
// stores it on the bug (details.draft_hints), DrafterTask (the draft
// step's task) carries it, and both brains get it in the session's first
// message: the built-in drafter (which records that it saw and used it)
// and an LLM drafter played by the scripted loopback server (the hint is
// in the user message the server receives).
#include <gtest/gtest.h>

#include "orchestrator/pipeline/agent_sessions.h"
#include "orchestrator/pipeline/pipeline.h"
#include "orchestrator/pipeline/triage_verbs.h"
#include "tests/agents/fake_agents.h"
#include "tests/agents/scripted_llm_server.h"
#include "tests/orchestrator/store/main_line_bug.h"
#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator {
namespace {

using agents::runtime_testing::FakeToolBox;
using agents::testing::OpenAiToolCallReply;
using agents::testing::ScriptedLlmServer;
using agents::testing::ScriptedReply;

constexpr char kHint[] = "HINT-xyzzy: the fast path is fine, try revert_commit";

class DraftHintsTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ASSERT_TRUE(server_.ok()) << server_.status().ToString();
    store_ = OpenStore(SystemClock::Get());
    ASSERT_NE(store_, nullptr);
    queue_ = std::make_unique<JobQueue>(store_.get());
    config_.prompts_dir = std::string(TRENCH_SOURCE_DIR) + "/prompts";
    config_.llm["openai"] = {.base_url = server_.base_url(),
                             .model = "test-model",
                             .max_retries = 0};
    ctx_.config = &config_;
    ctx_.store = store_.get();
    ctx_.queue = queue_.get();
    ctx_.worker = "patch_drafter#0";
    // A proposed bug, redrafted with the hint.
    bug_ = testing::MainLineBug(store_.get(), "s", BugState::kProposed,
                                std::string(40, 'c'));
    TriageAction redraft{.verb = TriageVerb::kRedraft, .hint = kHint};
    StatusOr<Bug> bug = ApplyTriage(store_.get(), bug_, redraft, "test", false);
    ASSERT_TRUE(bug.ok()) << bug.status().ToString();
    EXPECT_EQ(bug->state, BugState::kCulpritFound);
  }

  // The draft step's task for the bug as stored.
  Json Task() {
    StatusOr<Json> task =
        DrafterTask(ctx_, *store_->GetBug(bug_), std::string(40, 'h'),
                    std::string(40, 'f'), dir_);
    EXPECT_TRUE(task.ok()) << task.status().ToString();
    return task.ok() ? *task : Json();
  }

  // The session's messages (the newest session of the bug).
  std::vector<AgentMessage> Messages() {
    StatusOr<std::vector<AgentSession>> s = store_->ListAgentSessions(bug_);
    EXPECT_TRUE(s.ok() && !s->empty());
    if (!s.ok() || s->empty()) return {};
    return *store_->ListAgentMessages(s->back().id);
  }

  ScriptedLlmServer server_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<JobQueue> queue_;
  DaemonConfig config_;
  StepContext ctx_;
  int64_t bug_ = 0;
};

TEST_F(DraftHintsTest, TheTaskCarriesEveryHint) {
  Json task = Task();
  const Json* hints = task.Find("hints");
  ASSERT_TRUE(hints && hints->is_array()) << task.Dump();
  ASSERT_EQ(hints->size(), 1u);
  EXPECT_EQ(hints->array()[0], Json(kHint));
  EXPECT_EQ(task.Find("culprit")->Find("sha")->string_value(),
            std::string(40, 'c'));
  // A second round's rejection comment joins, oldest first.
  ASSERT_TRUE(
      store_->TransitionBug(bug_, BugState::kPatchDrafted, "t", Json()).ok());
  ASSERT_TRUE(
      store_->TransitionBug(bug_, BugState::kPatchVerified, "t", Json()).ok());
  ASSERT_TRUE(
      store_->TransitionBug(bug_, BugState::kProposed, "t", Json()).ok());
  TriageAction reject{.verb = TriageVerb::kReject, .comment = "still slow"};
  ASSERT_TRUE(ApplyTriage(store_.get(), bug_, reject, "test", false).ok());
  task = Task();
  ASSERT_EQ(task.Find("hints")->size(), 2u);
  EXPECT_EQ(task.Find("hints")->array()[1], Json("still slow"));
}

TEST_F(DraftHintsTest, TheBuiltinDrafterGetsAndUsesTheHint) {
  config_.swarm["patch_drafter"].brain = "builtin";
  FakeToolBox tools("patch_drafter");
  tools.failures["culprit_diff"] = "no such commit";
  StatusOr<Json> claim = RunAgent(ctx_, "patch_drafter", bug_, Task(), tools);
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  const Json* seen = claim->Find("hints");
  ASSERT_NE(seen, nullptr) << claim->Dump();
  EXPECT_EQ(seen->Find("seen")->array()[0], Json(kHint));
  EXPECT_EQ(seen->Find("applied")->array()[0], Json("first: revert_commit"));
  std::vector<AgentMessage> m = Messages();
  ASSERT_FALSE(m.empty());
  EXPECT_EQ(m[0].role, "task");
  EXPECT_NE(m[0].content.find(kHint), std::string::npos) << m[0].content;
}

TEST_F(DraftHintsTest, TheLlmDrafterGetsTheHintInItsFirstUserMessage) {
  config_.swarm["patch_drafter"].brain = "openai";
  server_.Enqueue(ScriptedReply::WithJson(
      200, OpenAiToolCallReply("finish",
                               R"({"outcome": "gave_up", "summary": "no idea",
                             "candidates": [], "reason": "none"})")));
  FakeToolBox tools("patch_drafter");
  tools.failures["culprit_diff"] = "no such commit";
  StatusOr<Json> claim = RunAgent(ctx_, "patch_drafter", bug_, Task(), tools);
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  // What the model was sent: the hint is in the first user message.
  ASSERT_GE(server_.requests().size(), 1u);
  StatusOr<Json> request = server_.requests()[0].JsonBody();
  ASSERT_TRUE(request.ok());
  const Json* messages = request->Find("messages");
  ASSERT_TRUE(messages && messages->is_array());
  std::string first_user;
  for (const Json& msg : messages->array()) {
    if (msg.Find("role")->string_value() == "user") {
      first_user = msg.Find("content")->string_value();
      break;
    }
  }
  EXPECT_NE(first_user.find(kHint), std::string::npos) << first_user;
  // And the stored transcript: the task, then the user message.
  std::vector<AgentMessage> m = Messages();
  ASSERT_GE(m.size(), 3u);
  EXPECT_EQ(m[0].role, "task");
  EXPECT_NE(m[0].content.find(kHint), std::string::npos);
  bool user_has_hint = false;
  for (const AgentMessage& a : m) {
    if (a.role == "user") {
      user_has_hint = a.content.find(kHint) != std::string::npos;
      break;
    }
  }
  EXPECT_TRUE(user_has_hint);
}

}  // namespace
}  // namespace trench::orchestrator
