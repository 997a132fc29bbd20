// Hostile claims at the bug steps (orchestrator/pipeline/steps_bug.cc): the
// reproducer's and the minimizer's brains are LLMs, played by the scripted
// loopback server, that name a case by a path, by a path to a case planted
// where a path would reach, or by an id no case has. Each claim is refused
// with a message naming the problem, nothing outside the store is read,
// and the bug moves on with what the orchestrator checked itself (never
// stuck, never failed as a step). Real SQLite store, real git mirror, the
// tools in the sandbox on the project's own build.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "agents/claims.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/random_inputs.h"
#include "orchestrator/pipeline/step_util.h"
#include "tests/agents/scripted_llm_server.h"
#include "tests/orchestrator/pipeline/step_test_fixture.h"
#include "triage/case/case_bundle.h"

namespace trench::orchestrator {
namespace {

namespace fs = std::filesystem;
using agents::testing::OpenAiToolCallReply;
using agents::testing::ScriptedLlmServer;
using agents::testing::ScriptedReply;

constexpr char kModule[] = R"(HloModule sum

ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] add(p, p)
}
)";

class StepClaimsTest : public testing::StepTest {
 protected:
  void SetUp() override {
    StepTest::SetUp();
    ASSERT_TRUE(server_.ok()) << server_.status().ToString();
    commit_ = Commit({{"README", "x\n"}});
    for (const char* role : {"reproducer", "minimizer"}) {
      config_.swarm[role].brain = "openai";
    }
    config_.llm["openai"] = {.base_url = server_.base_url(),
                             .model = "test-model",
                             .max_retries = 0};
    config_.reproduce_runs = 1;
    config_.reduce_seconds = 5;
    // A well-formed case planted outside the store, where "../planted"
    // from the cases directory would reach.
    planted_ = WriteCaseAt(paths_->var + "/planted", 0);
  }

  // A case of kModule with inputs from `seed` written at `dir`; returns
  // its content address.
  std::string WriteCaseAt(const std::string& dir, uint64_t seed) {
    StatusOr<std::unique_ptr<HloModule>> m =
        hlo_diff::ParseCaseModule(kModule, "test");
    EXPECT_TRUE(m.ok());
    StatusOr<hlo_diff::Case> c =
        hlo_diff::MakeCase(kModule, hlo_diff::ArgumentLeaves(RandomArguments(
                                        *(*m)->entry_computation(), seed)));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_TRUE(hlo_diff::WriteCase(dir, *c).ok());
    return hlo_diff::CaseSha256(*c);
  }

  // The model's one answer: finish with `claim`.
  void ModelFinishes(const std::string& claim) {
    server_.Enqueue(
        ScriptedReply::WithJson(200, OpenAiToolCallReply("finish", claim)));
  }

  // The model's answer to a refused finish: it gives up.
  void ModelGivesUp() {
    server_.Enqueue(ScriptedReply::WithJson(
        200, OpenAiToolCallReply(
                 "finish", R"({"outcome": "gave_up", "summary": "no case"})")));
  }

  // The refusal the model was told after request `n` (0-based): the tool
  // result in the next request's messages ("" when none).
  std::string ToldModel(size_t n) {
    std::vector<agents::testing::RecordedRequest> r = server_.requests();
    if (r.size() <= n + 1) return "";
    return r[n + 1].body;
  }

  Job BugJob(const std::string& kind, int64_t bug) {
    Json payload = Json::MakeObject();
    payload["bug"] = bug;
    return MakeJob(kind, std::move(payload));
  }

  // A bug reported in words only, found at commit_.
  int64_t TextBug() {
    NewBug b;
    b.signature = "report:" + std::to_string(jobs_);
    b.title = "wrong sums";
    b.details =
        J(R"({"report": {"text": "adding f32[4] to itself is wrong"}})");
    b.details["commit"] = commit_;
    StatusOr<int64_t> id = store_->CreateBug(b, "test", Json::MakeObject());
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  // A reproduced bug whose repro case is stored; *case_sha receives it.
  int64_t ReproducedBug(std::string* case_sha) {
    const std::string src = dir_ + "/src" + std::to_string(++cases_);
    WriteCaseAt(src, cases_);
    StatusOr<std::string> sha = ImportCase(ctx_, src, Json::MakeObject());
    EXPECT_TRUE(sha.ok()) << sha.status().ToString();
    *case_sha = sha.ok() ? *sha : "";
    NewBug b;
    b.signature = "sig:" + *case_sha;
    b.title = "a finding";
    b.case_sha256 = *case_sha;
    b.details = Json::MakeObject();
    b.details["commit"] = commit_;
    b.details["status"] = "mismatch";
    StatusOr<int64_t> id = store_->CreateBug(b, "test", Json::MakeObject());
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    if (!id.ok()) return 0;
    EXPECT_TRUE(store_
                    ->TransitionBug(*id, BugState::kReproduced, "test",
                                    Json::MakeObject())
                    .ok());
    return *id;
  }

  // What the step refused, from its evidence ("" when nothing).
  static std::string Refused(const StatusOr<Json>& out) {
    const Json* r = out.ok() ? out->Find("refused") : nullptr;
    return r && r->is_string() ? r->string_value() : "";
  }

  // The names in the store's cases directory, sorted.
  std::vector<std::string> StoredCases() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(
             fs::path(CaseDir(ctx_, std::string(64, '0'))).parent_path())) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  ScriptedLlmServer server_;
  std::string commit_, planted_;
  int cases_ = 0;
};

// The attack from the field: a finish naming "../../../../tmp/ecoevil",
// where a well-formed case and a marker were planted, and ids that are
// almost ids. The model is told why (and gives up); nothing is imported.
TEST_F(StepClaimsTest, AReproducerCaseThatIsAPathIsRefused) {
  const std::string evil = "/tmp/ecoevil";
  fs::remove_all(evil);
  const std::string evil_sha = WriteCaseAt(evil, 9);
  std::ofstream(evil + "/MARKER") << "planted\n";
  const std::string id(64, 'a');
  const std::vector<std::string> bad = {
      "../../../../tmp/ecoevil",
      "../planted",
      paths_->var + "/planted",
      "../" + planted_,
      std::string(64, 'A'),
      std::string(63, 'a'),
      std::string(65, 'a'),
      id.substr(0, 32) + std::string(1, '\0') + id.substr(33),
      id.substr(0, 63) + "\n"};
  const std::vector<std::string> cases_before = StoredCases();
  for (const std::string& b : bad) {
    const int64_t bug = TextBug();
    const size_t n = server_.requests().size();
    ModelFinishes(R"({"outcome": "done", "summary": "made it", "case": )" +
                  Json(b).Dump() + "}");
    ModelGivesUp();
    StatusOr<Json> out = RunReproduceStep(ctx_, BugJob("reproduce", bug));
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_NE(ToldModel(n).find("finish refused: field 'case' must be a case "
                                "id (64 lowercase hex digits)"),
              std::string::npos)
        << Json(b).Dump() << ": " << ToldModel(n);
    StatusOr<Bug> got = store_->GetBug(bug);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got->state, BugState::kNotReproducible) << Json(b).Dump();
    EXPECT_FALSE(got->case_sha256.has_value()) << Json(b).Dump();
    const Json* rep = out->Find("reproducer");
    EXPECT_TRUE(rep && rep->Find("case") && rep->Find("case")->is_null())
        << out->Dump();
  }
  // The planted cases never entered the store; the marker is untouched.
  EXPECT_EQ(StoredCases(), cases_before);
  for (const std::string& sha : {planted_, evil_sha}) {
    EXPECT_FALSE(store_->GetCase(sha).ok());
    EXPECT_FALSE(fs::exists(CaseDir(ctx_, sha)));
  }
  EXPECT_TRUE(fs::exists(evil + "/MARKER"));
  fs::remove_all(evil);
}

TEST_F(StepClaimsTest, AReproducerCaseNoOneStoredIsRefused) {
  const int64_t bug = TextBug();
  const std::string invented(64, 'a');
  ModelFinishes(R"({"outcome": "done", "summary": "made it", "case": ")" +
                invented + "\"}");
  StatusOr<Json> out = RunReproduceStep(ctx_, BugJob("reproduce", bug));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_NE(Refused(out).find("aaaaaaaaaaaa is not a stored case"),
            std::string::npos)
      << out->Dump();
  StatusOr<Bug> b = store_->GetBug(bug);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->state, BugState::kNotReproducible);
}

TEST_F(StepClaimsTest, AMinimizerCaseThatIsAPathOrUnknownIsRefused) {
  for (const std::string& bad :
       {std::string("../planted"), "../../" + std::string(64, 'b'),
        std::string(64, 'B'), std::string(64, 'c')}) {
    std::string case_sha;
    const int64_t bug = ReproducedBug(&case_sha);
    const size_t n = server_.requests().size();
    const bool id = agents::IsCaseId(bad);
    ModelFinishes(R"({"outcome": "done", "summary": "made it", "case": )" +
                  Json(bad).Dump() + "}");
    if (!id) ModelGivesUp();
    StatusOr<Json> out = RunMinimizeStep(ctx_, BugJob("minimize", bug));
    ASSERT_TRUE(out.ok()) << bad << ": " << out.status().ToString();
    if (id) {  // Well-formed, but no case has it: the step refuses it.
      EXPECT_NE(Refused(out).find("is not a stored case"), std::string::npos)
          << bad << ": " << out->Dump();
    } else {  // The model is told at finish.
      EXPECT_NE(ToldModel(n).find("finish refused: field 'case' must be a "
                                  "case id"),
                std::string::npos)
          << bad << ": " << ToldModel(n);
    }
    // The bug goes on with its own case.
    StatusOr<Bug> b = store_->GetBug(bug);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->state, BugState::kMinimized) << bad;
    EXPECT_EQ(b->minimized_sha256, case_sha) << bad;
  }
  EXPECT_FALSE(store_->GetCase(planted_).ok());
}

}  // namespace
}  // namespace trench::orchestrator
