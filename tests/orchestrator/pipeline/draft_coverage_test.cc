// The draft step's choice among candidates (pipeline/draft_coverage.h) on
// a real culprit commit (libgit2) that changes one rule in the localized
// pass and in the code generator's copy: the codegen-only revert is the
// smallest diff and passes the witness, yet the candidate that also covers
// the pass is proposed, and the flag reaches the triage report.
#include "orchestrator/pipeline/draft_coverage.h"

#include <gtest/gtest.h>

#include "orchestrator/pipeline/triage_report.h"
#include "tests/agents/coverage_fixture.h"

namespace trench::orchestrator {
namespace {

using agents::testing::CulpritRepo;
using agents::testing::kCodegenFile;
using agents::testing::kPassFile;

Json Task(const std::string& pass) {
  Json findings = Json::MakeObject();
  findings["pass"] = pass;
  Json loc = Json::MakeObject();
  loc["findings"] = findings;
  Json task = Json::MakeObject();
  task["localization"] = loc;
  return task;
}

// What a model might submit: its own hunk for the codegen copy only.
constexpr char kLlmCodegenOnly[] =
    "--- a/compiler/codegen/emit_add.cc\n"
    "+++ b/compiler/codegen/emit_add.cc\n"
    "@@ -7 +7 @@\n"
    "-  if (c >= 0) return EmitFolded(b, add, \"fold_add_const\");\n"
    "+  if (c > 0) return EmitFolded(b, add, \"fold_add_const\");\n";

class DraftCoverageTest : public ::testing::Test {
 protected:
  std::vector<DraftCandidate> Candidates() {
    const std::string full =
        agents::RenderUnifiedDiff(agents::InvertDiff(repo_.Culprit()));
    return {{1, "revert_commit", full},
            {2, "partial_revert", repo_.RevertOnHead(kCodegenFile)},
            {3, "llm", kLlmCodegenOnly}};
  }
  CulpritRepo repo_;
};

TEST_F(DraftCoverageTest, TheCandidateCoveringTheLocalizedPassIsPreferred) {
  const std::vector<DraftCandidate> c = Candidates();
  ASSERT_LT(c[2].diff.size(), c[0].diff.size());  // Smallest is not chosen.
  ASSERT_LT(c[1].diff.size(), c[0].diff.size());
  const DraftChoice choice =
      ChooseDraft(*repo_.repo, repo_.culprit, Task("algsimp"), c);
  ASSERT_TRUE(choice.unknown.empty()) << choice.unknown;
  EXPECT_EQ(choice.best, 0u);
  ASSERT_EQ(choice.coverage.size(), 3u);
  EXPECT_FALSE(choice.coverage[0].partial());
  EXPECT_TRUE(choice.coverage[1].partial());
  EXPECT_TRUE(choice.coverage[2].partial());  // The model's, the same.
  const Json d = choice.DetailsJson(c);
  EXPECT_FALSE(d.Find("coverage")->Find("partial")->bool_value());
  const Json::Array& over = d.Find("passed_over")->array();
  ASSERT_EQ(over.size(), 2u);
  EXPECT_EQ(over[0].Find("candidate")->int64_value(), 2);
  EXPECT_EQ(over[1].Find("strategy")->string_value(), "llm");
  EXPECT_EQ(over[1].Find("changed_lines")->int64_value(), 2);
  EXPECT_NE(over[0].Find("reason")->string_value().find(kPassFile),
            std::string::npos);
}

TEST_F(DraftCoverageTest, AFlaggedCandidateAloneIsProposedAndReported) {
  std::vector<DraftCandidate> c = Candidates();
  c.erase(c.begin());  // Only the partial ones.
  const DraftChoice choice =
      ChooseDraft(*repo_.repo, repo_.culprit, Task("algsimp"), c);
  EXPECT_TRUE(choice.coverage[choice.best].partial());
  const Json details = choice.DetailsJson(c);

  // The triage report of a bug whose draft is this patch.
  Json draft = Json::MakeObject();
  draft["patch"] = 5;
  draft["coverage"] = *details.Find("coverage");
  draft["passed_over"] = *details.Find("passed_over");
  Json bug_details = Json::MakeObject();
  bug_details["draft"] = draft;
  Json bug = Json::MakeObject();
  bug["id"] = 3;
  bug["title"] = "fold";
  bug["state"] = "patch_drafted";
  bug["details"] = bug_details;
  Json patch = Json::MakeObject();
  patch["id"] = 5;
  patch["branch"] = "trench/bug-3";
  patch["diff"] = c[choice.best].diff;
  Json response = Json::MakeObject();
  response["bug"] = bug;
  response["patches"] = Json::MakeArray();
  response["patches"].push_back(patch);
  StatusOr<std::string> report = BugReportText(response);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_NE(report->find("WARNING: partial revert: it leaves the culprit's "
                         "change at " +
                         std::string(kPassFile) +
                         ":7 (the localized pass 'algsimp') in place"),
            std::string::npos)
      << *report;
  EXPECT_NE(report->find("coverage: reverts 1, changes 0 and leaves 2"),
            std::string::npos)
      << *report;
  EXPECT_NE(report->find("preferred over candidate"), std::string::npos);

  // A draft naming another patch says nothing about this one.
  response["bug"]["details"]["draft"]["patch"] = 4;
  report = BugReportText(response);
  EXPECT_EQ(report->find("WARNING"), std::string::npos) << *report;
}

TEST_F(DraftCoverageTest, WithoutTheCulpritTheSmallestDiffIsChosen) {
  const std::vector<DraftCandidate> c = Candidates();
  const DraftChoice choice =
      ChooseDraft(*repo_.repo, std::string(40, 'e'), Task("algsimp"), c);
  EXPECT_FALSE(choice.unknown.empty());
  EXPECT_TRUE(choice.coverage.empty());
  EXPECT_EQ(choice.best, 2u);
  const Json d = choice.DetailsJson(c);
  EXPECT_NE(d.Find("coverage")->Find("unknown"), nullptr);
}

TEST_F(DraftCoverageTest, TheCodegenCopyLocalizedIsJudgedFromTheOtherSide) {
  // Localized in the back end: the pass-only revert is the partial one.
  const std::vector<DraftCandidate> c = {
      {1, "revert_file", repo_.RevertOnHead(kPassFile)},
      {2, "revert_file", repo_.RevertOnHead(kCodegenFile)}};
  const DraftChoice choice =
      ChooseDraft(*repo_.repo, repo_.culprit, Task("codegen"), c);
  EXPECT_EQ(choice.coverage[0].left_localized.size(), 1u);
  EXPECT_TRUE(choice.coverage[1].left_localized.empty());
}

}  // namespace
}  // namespace trench::orchestrator
