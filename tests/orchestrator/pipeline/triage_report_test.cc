// The triage report from the API's bug JSON
// (orchestrator/pipeline/triage_report.h): every section from a realistic bug,
// "not yet" for missing parts, data found in event evidence, malformed parts,
// and the one-shot form.
#include "orchestrator/pipeline/triage_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "orchestrator/api/api_handlers.h"
#include "triage/case/verdict_status.h"

namespace trench::orchestrator {
namespace {

constexpr char kSha[] =
    "1111111111111111111111111111111111111111111111111111111111111111";
constexpr char kMinSha[] =
    "2222222222222222222222222222222222222222222222222222222222222222";
constexpr char kCulprit[] = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";

Json Parse(const char* text) {
  StatusOr<Json> j = ParseJson(text);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  return j.ok() ? *j : Json();
}

Json Verdict() {
  return Parse(R"({"status": "mismatch", "message": "output 0 differs",
    "outputs": [{"index": 0, "ok": false, "expected_shape": "f32[4]",
      "elements": 4, "max_abs_error": 1.5, "max_rel_error": 0.5,
      "mismatches": 2, "first_mismatch": {"index": [1], "expected": 3.0,
      "actual": 1.5}}],
    "target": {"last_pass": ""},
    "signature": {"status": "mismatch", "dtype": "f32", "sig": "abcd"}})");
}

Json Localization() {
  return Parse(R"({"format": 1, "case": "best", "status": "mismatch",
    "levels": [{"level": "pass", "result": "found", "summary": "algsimp",
                "runs": 4, "linear_runs": 12, "evidence": {}},
               {"level": "fusion", "result": "found", "summary": "sub.3",
                "runs": 0, "linear_runs": 0, "evidence": {}}],
    "findings": {"pass": "algsimp", "trigger": null, "pass_execution": 3,
      "rewrite": {"pass": "algsimp", "site": "sub-self", "instruction":
                  "%sub.1", "index": 7},
      "instruction": "%sub.1", "opcode": "subtract", "fusion": "%fusion.2",
      "fused_instruction": "%sub.3", "fused_opcode": "subtract",
      "dtype": "f32", "called_computation": "%body",
      "called_instruction": "%gt", "called_opcode": "compare"},
    "signature": {"status": "mismatch", "pass": "algsimp", "site":
                  "sub-self", "opcode": "subtract", "dtype": "f32",
                  "sig": "feed"},
    "runs": {"localize": 9, "linear_scan": 30}})");
}

Json CulpritReport() {
  Json c = Parse(R"({"good": {"short": "000000000001"},
    "bad": {"short": "00000000000f"}, "commits": 6, "builds": 4,
    "confirmed": true, "confirmation": {"revert": "ff", "built": true,
    "status": "pass"}})");
  Json commit = Json::MakeObject();
  commit["sha"] = kCulprit;
  commit["short"] = std::string(kCulprit).substr(0, 12);
  commit["summary"] = "algsimp: fold x - x";
  commit["author"] = "Dev <dev@example.com>";
  c["culprit"] = commit;
  return c;
}

// A bug that went the whole way to a proposed patch, as the API gives it.
Json FullBug() {
  Bug bug;
  bug.id = 7;
  bug.state = BugState::kProposed;
  bug.signature = "feed";
  bug.title = "x - x gives 0 for NaN";
  bug.created_ms = 1764500000000;
  bug.updated_ms = 1764500600000;
  bug.case_sha256 = kSha;
  bug.minimized_sha256 = kMinSha;
  bug.culprit_commit = kCulprit;
  Json& d = bug.details;
  d["source"] = "api";
  d["report"]["text"] = "subtracting a tensor from itself\ngives zeros";
  d["report"]["hlo"] = "HloModule m\nENTRY e { ROOT p = f32[] parameter(0) }";
  Json& r = d["reproduction"];
  r["runs"] = 3;
  r["failures"] = 3;
  r["rate"] = 1.0;
  r["verdict"] = Verdict();
  Json& m = d["minimization"];
  m["before"] = Parse(R"({"instructions": 40, "elements": 400,
                          "text_bytes": 2000})");
  m["after"] = Parse(R"({"instructions": 3, "elements": 8,
                         "text_bytes": 120})");
  m["target_runs"] = 55;
  m["module"] = "HloModule min\nENTRY e { p = f32[4] parameter(0) }";
  d["localization"] = Localization();
  d["culprit"] = CulpritReport();

  Json out = Json::MakeObject();
  out["bug"] = BugToJson(bug);
  Json& events = out["events"] = Json::MakeArray();
  const BugState path[] = {BugState::kNew,           BugState::kReproduced,
                           BugState::kMinimized,     BugState::kLocalized,
                           BugState::kCulpritFound,  BugState::kPatchDrafted,
                           BugState::kPatchVerified, BugState::kProposed};
  for (int i = 0; i < 8; ++i) {
    Event e;
    e.id = i + 1;
    e.bug_id = 7;
    if (i > 0) e.from = path[i - 1];
    e.to = path[i];
    e.actor = i == 0 ? "api:report" : "orchestrator";
    e.evidence = Json::MakeObject();
    e.evidence["event"] = std::string(BugStateName(path[i]));
    e.at_ms = 1764500000000 + i * 60000;
    events.push_back(EventToJson(e));
  }
  Patch p;
  p.id = 1;
  p.bug_id = 7;
  p.branch = "trench/bug-7";
  p.diff = "--- a/x.cc\n+++ b/x.cc\n@@ -1 +1 @@\n-bad\n+good\n";
  p.verified = true;
  p.verification = Parse(R"({"repro": "pass", "witnesses": "12/12 pass",
                             "fuzz_seconds": 20})");
  out["patches"] = Json::MakeArray();
  out["patches"].push_back(PatchToJson(p));
  return out;
}

void ExpectHas(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos)
      << "missing \"" << part << "\" in:\n"
      << text;
}

TEST(TriageReportTest, EverySectionOfAFullBug) {
  StatusOr<std::string> text = BugReportText(FullBug());
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  const std::string& t = *text;
  for (const std::string& part : std::vector<std::string>{
           "# Bug 7: x - x gives 0 for NaN", "state: proposed",
           "signature: feed", "created: 2025-11-30",
           // Report.
           "## Report", "> subtracting a tensor from itself", "> gives zeros",
           "attached HLO:", "```hlo\nHloModule m",
           // Reproduction.
           "## Reproduction", kSha, "runs: 3, failures: 3 (rate 1.0)",
           "verdict: mismatch (output 0 differs)",
           "output 0 f32[4]: 2 of 4 elements differ, max abs error 1.5",
           "first mismatch: index=[1], expected=3.0, actual=1.5",
           // Minimized case.
           "## Minimized case", kMinSha,
           "before: 40 instructions, 400 elements, 2000 bytes",
           "after:  3 instructions, 8 elements, 120 bytes", "target runs: 55",
           "```hlo\nHloModule min",
           // Localization.
           "## Localization", "pass: algsimp (pass execution 3)",
           "rewrite site: algsimp rewrite at site sub-self on %sub.1 "
           "(decision 7)",
           "instruction: %sub.1 (subtract, f32)",
           "fused op: %sub.3 (subtract) in %fusion.2",
           "called op: %gt (compare) in %body",
           "pass: found [4 runs] algsimp", "target runs: 9 (a linear scan: 30)",
           // Culprit.
           "## Culprit commit", std::string("commit: ") + kCulprit,
           "summary: algsimp: fold x - x", "author: Dev <dev@example.com>",
           "confirmed: the case passes with this commit reverted on top of "
           "00000000000f",
           "search: 6 commits between 000000000001 and 00000000000f, 4 "
           "builds",
           // Patch.
           "## Patch", "branch: trench/bug-7", "verified: yes",
           "witnesses: 12/12 pass", "```diff\n--- a/x.cc", "+good\n```",
           // History.
           "## History", "(created) -> new  by api:report",
           "patch_verified -> proposed  by orchestrator  [event=proposed]"}) {
    ExpectHas(t, part);
  }
  EXPECT_EQ(t.find("not yet"), std::string::npos) << t;
  EXPECT_EQ(t.find("## Fix"), std::string::npos);
  // Sections come in their fixed order.
  size_t last = 0;
  for (const char* s :
       {"## Report", "## Reproduction", "## Minimized case", "## Localization",
        "## Culprit commit", "## Patch", "## History"}) {
    const size_t at = t.find(s);
    ASSERT_NE(at, std::string::npos);
    EXPECT_GT(at, last) << s;
    last = at;
  }
}

TEST(TriageReportTest, FixCommitHasItsSection) {
  Json b = FullBug();
  b["bug"]["fix_commit"] = "beefbeef";
  b["bug"]["state"] = "fixed";
  StatusOr<std::string> text = BugReportText(b);
  ASSERT_TRUE(text.ok());
  ExpectHas(*text, "## Fix\nfixed by commit beefbeef");
}

TEST(TriageReportTest, ANewBugSaysNotYet) {
  Bug bug;
  bug.id = 3;
  bug.title = "slow and wrong";
  bug.details["report"]["text"] = "it is wrong";
  Json j = Json::MakeObject();
  j["bug"] = BugToJson(bug);
  j["events"] = Json::MakeArray();
  j["patches"] = Json::MakeArray();
  StatusOr<std::string> text = BugReportText(j);
  ASSERT_TRUE(text.ok());
  for (const char* s :
       {"## Reproduction\nnot yet", "## Minimized case\nnot yet",
        "## Localization\nnot yet", "## Culprit commit\nnot yet",
        "## Patch\nnot yet", "## History\nno events"}) {
    ExpectHas(*text, s);
  }
  ExpectHas(*text, "> it is wrong");
}

// A fuzz finding's bug shows its campaign's changed-line reach.
TEST(TriageReportTest, AFuzzFindingShowsTheCampaignsReach) {
  Bug bug;
  bug.id = 4;
  bug.title = "fuzz finding: mismatch";
  bug.details["source"] = "fuzz";
  bug.details["finding"]["reach"]["lines"] = 2;
  bug.details["finding"]["reach"]["reached"] = 1;
  bug.details["finding"]["reach"]["no_code"] = 1;
  Json unreached = Json::MakeArray();
  unreached.push_back("compiler/passes/cse.cc:40");
  bug.details["finding"]["reach"]["unreached"] = unreached;
  Json j = Json::MakeObject();
  j["bug"] = BugToJson(bug);
  j["events"] = Json::MakeArray();
  j["patches"] = Json::MakeArray();
  StatusOr<std::string> text = BugReportText(j);
  ASSERT_TRUE(text.ok());
  ExpectHas(*text,
            "source: fuzz\nchanged-line reach of the campaign: 1/2 "
            "executable changed lines (1 more changed lines hold no code)\n"
            "not reached: compiler/passes/cse.cc:40\n");
  // Without a measured reach, no such line.
  bug.details["finding"] = Json::MakeObject();
  j["bug"] = BugToJson(bug);
  text = BugReportText(j);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->find("changed-line reach"), std::string::npos);
}

// trench show prints the whole reason of a fallback, however long.
TEST(TriageReportTest, AFallbackReasonIsShownWhole) {
  Json j = FullBug();
  const std::string reason =
      "backend_error: INVALID_ARGUMENT: openai: HTTP 404: " +
      std::string(200, 'x') + " the end";
  Json claim = Json::MakeObject();
  claim["case"] = Json();
  claim["fallback"]["from"] = "openai";
  claim["fallback"]["reason"] = reason;
  j["events"].mutable_array()[1]["evidence"]["reproducer"] = claim;
  StatusOr<std::string> text = BugReportText(j);
  ASSERT_TRUE(text.ok());
  ExpectHas(*text,
            "reproducer: the openai brain fell back to the built-in one: " +
                reason + "\n");
}

TEST(TriageReportTest, StepDataFromEventEvidence) {
  Json j = FullBug();
  j["bug"]["details"] = Json::MakeObject();  // Nothing in details.
  Json& events = j["events"];
  // The event that moved the bug to localized carries the report.
  events.mutable_array()[3]["evidence"]["localization"] = Localization();
  // The reproduction's evidence is the data itself.
  Json& ev = events.mutable_array()[1]["evidence"];
  ev["runs"] = 5;
  ev["failures"] = 4;
  StatusOr<std::string> text = BugReportText(j);
  ASSERT_TRUE(text.ok());
  ExpectHas(*text, "pass: algsimp (pass execution 3)");
  ExpectHas(*text, "runs: 5, failures: 4");
  ExpectHas(*text, "## Report\nnone (found by trench)");
}

TEST(TriageReportTest, MalformedPartsCountAsMissing) {
  Json j = FullBug();
  Json& d = j["bug"]["details"];
  d["localization"] = 5;
  d["reproduction"] = "three";
  d["minimization"] = Json::MakeArray();
  d["culprit"] = Json();
  d["report"] = Parse(R"({"text": 7, "hlo": ["x"]})");
  j["bug"]["culprit_commit"] = Json();
  j["bug"]["minimized_sha256"] = 12;
  j["bug"]["created_ms"] = "yesterday";
  j["patches"] = Parse(R"([3])");
  j["events"] = Parse(R"([{"to": 4}, "x", {"evidence": [1]}])");
  StatusOr<std::string> text = BugReportText(j);
  ASSERT_TRUE(text.ok());
  ExpectHas(*text, "## Localization\nnot yet");
  ExpectHas(*text, "## Culprit commit\nnot yet");
  ExpectHas(*text, "## Patch\nnot yet");
  ExpectHas(*text, "created: ?");

  EXPECT_FALSE(BugReportText(Json(3)).ok());
  EXPECT_FALSE(BugReportText(Parse(R"({"bug": []})")).ok());
  StatusOr<std::string> err = BugReportText(Json::MakeObject());
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.status().message().find("\"bug\""), std::string::npos);
}

TEST(TriageReportTest, OneShotPassingCase) {
  Json t = Json::MakeObject();
  t["case"] = "cases/add";
  t["verdict"] = Parse(R"({"status": "pass", "message": ""})");
  const std::string text = TriageRunText(t);
  ExpectHas(text, "# Triage of cases/add");
  ExpectHas(text, "verdict: pass");
  ExpectHas(text, "nothing to reduce: the case does not fail (pass)");
  ExpectHas(text, "nothing to localize");
}

TEST(TriageReportTest, OneShotFailingCase) {
  Json t = Json::MakeObject();
  t["case"] = "w";
  t["out"] = "/tmp/o";
  t["verdict"] = Verdict();
  t["minimization"] = FullBug()["bug"]["details"]["minimization"];
  t["minimized_case"] = "/tmp/o/reduce/best";
  t["minimized_module"] = "HloModule min\n";
  t["localization"] = Localization();
  t["notes"] = Parse(R"(["hlo-reduce: slow"])");
  const std::string text = TriageRunText(t);
  ExpectHas(text, "verdict: mismatch");
  ExpectHas(text, "case: /tmp/o/reduce/best");
  ExpectHas(text, "after:  3 instructions");
  ExpectHas(text, "fused op: %sub.3 (subtract) in %fusion.2");
  ExpectHas(text, "not searched: a one-shot triage has no repository");
  ExpectHas(text, "## Notes\n- hlo-reduce: slow");
  // Steps that did not run say so.
  t["localization"] = Json();
  ExpectHas(TriageRunText(t), "## Localization\nnot done");
}

TEST(TriageReportTest, FailureVerdicts) {
  EXPECT_TRUE(hlo_diff::IsFailureStatus("mismatch"));
  EXPECT_TRUE(hlo_diff::IsFailureStatus("memory_error"));
  EXPECT_FALSE(hlo_diff::IsFailureStatus("pass"));
  EXPECT_FALSE(hlo_diff::IsFailureStatus("target_unsupported"));
}

}  // namespace
}  // namespace trench::orchestrator
