// The fuzz step of a landed commit (orchestrator/pipeline/steps_commit.cc) run
// for real: the campaign aimed at the passes the commit changed is the
// stress-test author's, here an LLM brain played by the scripted loopback
// server that writes its own HLO, which the sandboxed tools run on the
// project's own build; the unfocused campaign is hlo-fuzz's. The store is
// a real SQLite file, the mirror a real git repository.
#include <gtest/gtest.h>

#include "tests/agents/scripted_llm_server.h"
#include "tests/orchestrator/pipeline/step_test_fixture.h"
#include "tests/orchestrator/read_all.h"

namespace trench::orchestrator {
namespace {

using agents::testing::OpenAiToolCallReply;
using agents::testing::ScriptedLlmServer;
using agents::testing::ScriptedReply;

constexpr char kModule[] = R"(HloModule twice

ENTRY e {
  p = f32[8,130] parameter(0)
  a = f32[8,130] add(p, p)
  b = f32[8,130] add(p, p)
  ROOT r = f32[8,130] multiply(a, b)
}
)";

class FuzzStepTest : public testing::StepTest {
 protected:
  void SetUp() override {
    StepTest::SetUp();
    ASSERT_TRUE(server_.ok()) << server_.status().ToString();
    // The target's history: a base, then a commit that changes cse.
    base_ = Commit({{"compiler/passes/cse.cc", "// v1\n"}, {"README", "x\n"}},
                   "base", "");
    changed_ = Commit({{"compiler/passes/cse.cc", "// v2\n"}}, "cse: v2");
    docs_ = Commit({{"README", "y\n"}}, "docs");
    config_.fuzz_budget_seconds = 2;
    config_.fuzz_jobs = 1;
    config_.swarm["stress_test_author"].brain = "openai";
    config_.llm["openai"] = {.base_url = server_.base_url(),
                             .model = "test-model",
                             .max_retries = 0};
    ctx_.worker = "stress_test_author#0";
  }

  Job FuzzJob(const std::string& commit) {
    Json payload = Json::MakeObject();
    payload["commit"] = commit;
    return MakeJob("fuzz", std::move(payload));
  }

  ScriptedLlmServer server_;
  std::string base_, changed_, docs_;
};

// The author is told the commit and its changed pass; the module it writes
// runs through the real tools on the build; what it claims is filed only
// when it names a stored case; the unfocused campaign runs next to it.
TEST_F(FuzzStepTest, TheAuthorWritesProgramsForTheChangedPasses) {
  Json write = Json::MakeObject();
  write["hlo"] = kModule;
  write["seed"] = 3;
  server_.Enqueue(ScriptedReply::WithJson(
      200, OpenAiToolCallReply("write_case", write.Dump())));
  // A claim naming no stored case (an invented id, a path) is not filed:
  // the path is refused at finish (the model is told and drops it), the
  // invented id by the step.
  const std::string invented = R"({"case": ")" + std::string(64, 'f') +
                               R"(", "status": "mismatch",
                                     "signature": {"sig": "s1"}})";
  server_.Enqueue(ScriptedReply::WithJson(
      200, OpenAiToolCallReply("finish",
                               R"({"outcome": "done", "summary": "cse holds",
                             "findings": [)" +
                                   invented + R"(,
                     {"case": "../../etc", "status": "mismatch",
                      "signature": {"sig": "s2"}}]})")));
  server_.Enqueue(ScriptedReply::WithJson(
      200, OpenAiToolCallReply("finish",
                               R"({"outcome": "done", "summary": "cse holds",
                                   "findings": [)" +
                                   invented + "]}")));

  StatusOr<Json> out = RunFuzzStep(ctx_, FuzzJob(changed_));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->Find("focus")->Find("passes")->string_value(), "cse");
  ASSERT_NE(out->Find("author"), nullptr) << out->Dump();
  EXPECT_EQ(*out->Find("author")->Find("brain"), Json("openai"));
  EXPECT_TRUE(out->Find("filed")->array().empty()) << out->Dump();
  EXPECT_GT(out->Find("programs")->int64_value(), 0) << out->Dump();
  EXPECT_TRUE(store_->ListBugs(std::nullopt, 0, 10)->empty());

  // The model saw the commit and the pass in its task.
  const std::vector<agents::testing::RecordedRequest> requests =
      server_.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_NE(requests[2].body.find("finish refused: field 'findings[1].case' "
                                  "must be a case id"),
            std::string::npos)
      << requests[2].body;
  EXPECT_NE(requests[0].body.find(changed_), std::string::npos);
  EXPECT_NE(requests[0].body.find("\\\"cse\\\""), std::string::npos)
      << requests[0].body;

  // One session of no bug, its write_case answered by a real run.
  StatusOr<std::vector<AgentSession>> sessions =
      store_->ListAgentSessions(std::nullopt);
  ASSERT_TRUE(sessions.ok());
  ASSERT_EQ(sessions->size(), 1u);
  const AgentSession& s = (*sessions)[0];
  EXPECT_EQ(s.role, "stress_test_author");
  EXPECT_EQ(s.backend, "openai");
  EXPECT_FALSE(s.bug_id.has_value());
  EXPECT_EQ(s.status, "done");
  StatusOr<std::vector<AgentMessage>> messages =
      store_->ListAgentMessages(s.id);
  ASSERT_TRUE(messages.ok());
  bool ran = false;
  for (const AgentMessage& m : *messages) {
    if (m.role != "tool") continue;
    ran = m.content.find("\\\"status\\\":\\\"pass\\\"") != std::string::npos;
    EXPECT_TRUE(ran) << m.content;
    break;
  }
  EXPECT_TRUE(ran);
}

// A commit that changes no pass and no emitter: no author, one unfocused
// campaign with the whole budget.
TEST_F(FuzzStepTest, ACommitThatChangesNoPassGetsTheUnfocusedCampaign) {
  StatusOr<Json> out = RunFuzzStep(ctx_, FuzzJob(docs_));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->Find("author"), nullptr) << out->Dump();
  EXPECT_EQ(out->Find("focus")->Find("passes")->string_value(), "");
  EXPECT_GT(out->Find("programs")->int64_value(), 0) << out->Dump();
  EXPECT_TRUE(store_->ListAgentSessions(std::nullopt)->empty());
  EXPECT_EQ(server_.requests().size(), 0u);
}

// fuzz.shards = 2: the campaign is two runs at once, each with its own
// findings dir and `--shard k/2`, and the step counts both shards'
// programs (the merged summary).
TEST_F(FuzzStepTest, ACampaignInShardsRunsEveryShardAndMergesThem) {
  config_.fuzz_shards = 2;
  const int64_t runs_before = runner_.total_runs();
  const Job job = FuzzJob(docs_);
  StatusOr<Json> out = RunFuzzStep(ctx_, job);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_GE(runner_.total_runs() - runs_before, 2);
  const std::string scratch =
      paths_->work + "/" + std::to_string(job.id) + "-fuzz";
  int64_t programs = 0;
  for (const char* shard : {"/out-0", "/out-1"}) {
    StatusOr<Json> summary =
        ParseJson(testing::ReadAll(scratch + shard + "/summary.json"));
    ASSERT_TRUE(summary.ok()) << shard << ": " << summary.status().message();
    ASSERT_NE(summary->Find("programs"), nullptr);
    EXPECT_GT(summary->Find("programs")->int64_value(), 0) << shard;
    programs += summary->Find("programs")->int64_value();
  }
  EXPECT_EQ(out->Find("programs")->int64_value(), programs) << out->Dump();
}

// A broken LLM set-up falls back to the built-in author (the fuzzer with
// focus on the pass), recorded in the session.
TEST_F(FuzzStepTest, ABrokenBackendFallsBackToTheFuzzerWithFocus) {
  server_.Enqueue(ScriptedReply::WithText(400, R"({"error": {"message":
      "invalid model", "type": "invalid_request_error"}})"));
  StatusOr<Json> out = RunFuzzStep(ctx_, FuzzJob(changed_));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Json* author = out->Find("author");
  ASSERT_NE(author, nullptr) << out->Dump();
  ASSERT_NE(author->Find("rounds"), nullptr) << author->Dump();
  const Json& round = author->Find("rounds")->array().at(0);
  EXPECT_EQ(*round.Find("focus"), Json("passes"));
  EXPECT_EQ(round.Find("names")->Dump(), R"(["cse"])");
  EXPECT_GT(round.Find("programs")->int64_value(), 0) << author->Dump();
  StatusOr<std::vector<AgentSession>> sessions =
      store_->ListAgentSessions(std::nullopt);
  ASSERT_EQ(sessions->size(), 1u);
  EXPECT_EQ((*sessions)[0].status.rfind("fell back to builtin", 0), 0u)
      << (*sessions)[0].status;
}

}  // namespace
}  // namespace trench::orchestrator
