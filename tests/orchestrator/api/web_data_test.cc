// The dashboard's data endpoints (orchestrator/api/web_data.h) over a real
// socket on a real store file: the overview, the bug list's filters on
// 10,000 bugs, signatures, the bug view (with a real git repository for
// the culprit, and the error maps as hlo-diff draws them), the graph
// through Graphviz (also in the sandbox), and the downloads checked with
// tar(1).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/sha256.h"
#include "base/subprocess.h"
#include "compiler/ir/npy.h"
#include "git/git_repo.h"
#include "orchestrator/api/bug_graph.h"
#include "orchestrator/api/http_metrics.h"
#include "sandbox/sandbox.h"
#include "tests/orchestrator/api/api_test_util.h"
#include "triage/case/case_bundle.h"
#include "triage/case/error_map.h"

namespace trench::orchestrator::testing {
namespace {

namespace fs = std::filesystem;

// A module with a fusion: the localization's findings name it.
constexpr char kFusionHlo[] = R"(HloModule m
fused {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  m = f32[4] multiply(x, y)
  ROOT a = f32[4] add(m, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  f = f32[4] fusion(p, q), kind=kLoop, calls=fused
  ROOT n = f32[4] negate(f)
})";

Literal F32(std::vector<double> values) {
  Literal l(Shape(PrimitiveType::F32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) l.SetFromDouble(i, values[i]);
  return l;
}

// Bug details whose localization found multiply `m` in fusion `f`.
Json FusionLocalized() {
  Json level = Json::MakeObject();
  level["level"] = "fusion";
  level["result"] = "found";
  level["summary"] = "multiply in fusion f";
  level["evidence"] = Json::MakeObject();
  level["runs"] = 3;
  Json loc = Json::MakeObject();
  loc["levels"] = Json::MakeArray();
  loc["levels"].push_back(level);
  Json findings = Json::MakeObject();
  findings["instruction"] = "f";
  findings["fusion"] = "f";
  findings["fused_instruction"] = "m";
  findings["pass"] = "fusion";
  loc["findings"] = findings;
  Json details = Json::MakeObject();
  details["localization"] = loc;
  return details;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class WebDataTest : public ApiTest {
 protected:
  ApiOptions Options() override {
    ApiOptions options = ApiTest::Options();
    repo_dir_ = dir_ + "/repo";
    options.repo = repo_dir_;
    options.branch = "main";
    options.good_commit = "";
    options.swarm["reproducer"] = RoleConfig{2, "openai"};
    options.dot_program = DotProgram();
    return options;
  }
  virtual std::string DotProgram() { return "dot"; }

  // A real case directory (module and inputs) stored under cases/.
  std::string PutRealCase(const std::string& hlo) {
    std::vector<Literal> inputs;
    inputs.push_back(F32({1, 2, 3, 4}));
    inputs.push_back(F32({1, 1, 1, 1}));
    StatusOr<hlo_diff::Case> c = hlo_diff::MakeCase(hlo, std::move(inputs));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    const std::string sha = hlo_diff::CaseSha256(*c);
    const std::string dir = dir_ + "/cases/" + sha;
    EXPECT_TRUE(hlo_diff::WriteCase(dir, *c).ok());
    EXPECT_TRUE(check_->PutCase(sha, dir, Json::MakeObject()).ok());
    return sha;
  }

  int64_t NewBug(const std::string& signature, const std::string& title,
                 std::optional<std::string> case_sha = std::nullopt,
                 Json details = Json::MakeObject()) {
    auto id = check_->CreateBug({signature, title, case_sha, details}, "test",
                                Json::MakeObject());
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return *id;
  }

  // Inserts a job row as a step would leave it.
  void AddJob(const std::string& kind, const Json& payload,
              const std::string& state, const Json& result, int64_t at_ms) {
    auto st = check_->db()->Prepare(
        "INSERT INTO jobs (kind, payload, state, max_attempts, "
        "not_before_ms, result, last_error, created_ms, updated_ms) VALUES "
        "(?1, ?2, ?3, 3, 0, ?4, ?5, ?6, ?6)");
    ASSERT_TRUE(st.ok());
    st->BindText(1, kind).BindJson(2, payload).BindText(3, state);
    st->BindJson(4, result).BindText(5, state == "failed" ? "boom" : "");
    st->BindInt64(6, at_ms);
    ASSERT_TRUE(st->Run().ok());
  }

  std::string repo_dir_;
};

TEST_F(WebDataTest, OverviewGathersCommitsSwarmJobsAndSeries) {
  auto repo = hlo_bisect::GitRepo::Init(repo_dir_);
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  auto c1 = (*repo)->CommitFiles("", {{"a.txt", "1"}}, "first <commit>\n",
                                 "refs/heads/main");
  ASSERT_TRUE(c1.ok());
  auto c2 = (*repo)->CommitFiles(*c1, {{"a.txt", "2"}}, "second commit",
                                 "refs/heads/main");
  ASSERT_TRUE(c2.ok());
  ASSERT_TRUE(check_->SetMeta("watch.last_commit", *c2).ok());
  ASSERT_TRUE(check_->SetMeta("watch.base", *c1).ok());
  ASSERT_TRUE(check_->SetMeta("head.built", *c2).ok());
  for (const std::string& sha : {*c1, *c2}) {
    ASSERT_TRUE(check_
                    ->RecordCommitEvent(sha, CommitEventKind::kCommitLanded,
                                        "watcher", Json::MakeObject())
                    .ok());
  }
  ASSERT_TRUE(check_->PutBuild(*c2, "", BuildStatus::kOk, "/bin/dir", "").ok());
  Json payload = Json::MakeObject();
  payload["commit"] = *c2;
  Json built = Json::MakeObject();
  built["built"] = true;
  built["seconds"] = 12.5;
  const int64_t t0 = clock_.NowMillis();
  AddJob("build", payload, "done", built, t0);
  for (int round = 0; round < 2; ++round) {
    Json fuzzed = Json::MakeObject();
    fuzzed["programs"] = 100;
    fuzzed["seconds"] = 10.0;
    Json focus = Json::MakeObject();
    focus["passes"] = "algsimp,fusion";
    focus["ops"] = round == 0 ? "add" : "";
    fuzzed["focus"] = focus;
    Json filed = Json::MakeArray();
    filed.push_back(Json::MakeObject());
    fuzzed["filed"] = filed;
    // The later round measured the changed-line reach.
    if (round == 1) {
      Json reach = Json::MakeObject();
      reach["lines"] = 4;
      reach["reached"] = 3;
      fuzzed["reach"] = reach;
    }
    AddJob("fuzz", payload, "done", fuzzed, t0 + round * 3600 * 1000);
  }
  AddJob("reproduce", Json::MakeObject(), "failed", Json(), t0);
  AddJob("localize", Json::MakeObject(), "parked", Json(), t0);
  AddJob("minimize", Json::MakeObject(), "queued", Json(), t0);
  auto s1 = check_->StartAgentSession(std::nullopt, "reproducer", "openai");
  auto s2 = check_->StartAgentSession(std::nullopt, "reproducer", "openai");
  ASSERT_TRUE(s1.ok() && s2.ok());
  ASSERT_TRUE(check_->EndAgentSession(*s1, "fell back", "timeout").ok());
  NewBug("s", "one");

  HttpReply r = Call("GET", "/api/v1/overview");
  ASSERT_EQ(r.status, 200) << r.body;
  Json o = r.json();
  const Json& repo_json = *o.Find("repo");
  EXPECT_EQ(repo_json.Find("path")->string_value(), repo_dir_);
  EXPECT_EQ(repo_json.Find("branch")->string_value(), "main");
  EXPECT_EQ(repo_json.Find("head")->string_value(), *c2);
  EXPECT_EQ(repo_json.Find("built_head")->string_value(), *c2);
  EXPECT_EQ(repo_json.Find("good_commit")->string_value(), *c1);
  const Json& commits = *o.Find("commits");
  ASSERT_EQ(commits.size(), 2u);
  const Json& newest = commits.array()[0];
  EXPECT_EQ(newest.Find("sha")->string_value(), *c2);
  EXPECT_EQ(newest.Find("summary")->string_value(), "second commit");
  EXPECT_NE(newest.Find("author")->string_value(), "");
  EXPECT_EQ(newest.Find("build")->Find("status")->string_value(), "ok");
  EXPECT_EQ(newest.Find("build")->Find("seconds")->number_value(), 12.5);
  EXPECT_EQ(newest.Find("programs")->int64_value(), 200);
  EXPECT_EQ(newest.Find("findings")->int64_value(), 2);
  EXPECT_EQ(newest.Find("focus")->Dump(), R"(["add","algsimp","fusion"])");
  EXPECT_EQ(newest.Find("reach")->Dump(), R"({"reached":3,"lines":4})");
  ASSERT_NE(commits.array()[1].Find("reach"), nullptr);
  EXPECT_TRUE(commits.array()[1].Find("reach")->is_null());
  EXPECT_EQ(commits.array()[1].Find("summary")->string_value(),
            "first <commit>");
  EXPECT_TRUE(commits.array()[1].Find("build")->is_null());
  bool found_role = false;
  for (const Json& role : o.Find("swarm")->array()) {
    if (role.Find("role")->string_value() != "reproducer") continue;
    found_role = true;
    EXPECT_EQ(role.Find("brain")->string_value(), "openai");
    EXPECT_EQ(role.Find("count")->int64_value(), 2);
    EXPECT_EQ(role.Find("sessions")->int64_value(), 2);
    EXPECT_EQ(role.Find("running")->int64_value(), 1);
    EXPECT_EQ(role.Find("fallbacks")->int64_value(), 1);
  }
  EXPECT_TRUE(found_role) << r.body;
  const Json& jobs = *o.Find("jobs");
  EXPECT_EQ(jobs.Find("counts")->Find("done")->int64_value(), 3);
  EXPECT_EQ(jobs.Find("counts")->Find("failed")->int64_value(), 1);
  EXPECT_EQ(jobs.Find("counts")->Find("parked")->int64_value(), 1);
  EXPECT_EQ(jobs.Find("counts")->Find("queued")->int64_value(), 1);
  EXPECT_EQ(jobs.Find("attention")->size(), 2u);
  EXPECT_EQ(o.Find("bugs_by_state")->Find("new")->int64_value(), 1);
  const Json& pps = *o.Find("series")->Find("programs_per_second");
  ASSERT_EQ(pps.size(), 2u);
  EXPECT_EQ(pps.array()[0].array()[1].number_value(), 10.0);
  EXPECT_EQ(o.Find("series")->Find("findings_per_hour")->size(), 2u);
}

// 10,000 bugs: every filter's page and total against the expected sets.
TEST_F(WebDataTest, BugListFiltersTenThousandBugs) {
  constexpr int kBugs = 10000;
  ASSERT_TRUE(check_->db()->Exec("BEGIN").ok());
  for (int i = 1; i <= kBugs; ++i) {
    // Prepared again each time: a statement is reset when it goes.
    auto st = check_->db()->Prepare(
        "INSERT INTO bugs (state, signature, title, created_ms, updated_ms, "
        "details) VALUES (?1, ?2, ?3, ?4, ?4, ?5)");
    ASSERT_TRUE(st.ok());
    {
      Json d = Json::MakeObject();
      Json findings = Json::MakeObject();
      findings["pass"] = "pass" + std::to_string(i % 7);
      findings["opcode"] = "op" + std::to_string(i % 5);
      findings["fused_opcode"] = i % 11 == 0 ? Json("op4") : Json();
      Json loc = Json::MakeObject();
      loc["findings"] = findings;
      d["localization"] = loc;
      Json report = Json::MakeObject();
      report["text"] = i % 100 == 0 ? "has a NeedLe inside" : "plain";
      d["report"] = report;
      st->BindText(1, i % 3 == 0 ? "reproduced" : "new")
          .BindText(2, "sig" + std::to_string(i % 13))
          .BindText(3, i % 250 == 0 ? "Title NEEDLE" : "title")
          .BindInt64(4, i)
          .BindJson(5, d);
      Status inserted = st->Run();
      ASSERT_TRUE(inserted.ok()) << inserted.ToString();
    }
  }
  ASSERT_TRUE(check_->db()->Exec("COMMIT").ok());

  auto expect = [&](const std::string& query, auto pred) {
    SCOPED_TRACE(query);
    std::vector<int64_t> want;
    for (int i = 1; i <= kBugs; ++i) {
      if (pred(i)) want.push_back(i);
    }
    std::vector<int64_t> got;
    std::string after = "0";
    for (int page = 0; page < 100; ++page) {
      HttpReply r =
          Call("GET", "/api/v1/bugs?" + query + "&limit=1000&after=" + after);
      ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
      Json j = r.json();
      EXPECT_EQ(j.Find("total")->int64_value(),
                static_cast<int64_t>(want.size()));
      for (const Json& b : j.Find("bugs")->array()) {
        got.push_back(b.Find("id")->int64_value());
      }
      const Json* next = j.Find("next");
      if (next == nullptr) break;
      after = std::to_string(next->int64_value());
    }
    EXPECT_EQ(got, want);
  };
  expect("pass=pass3", [](int i) { return i % 7 == 3; });
  expect("opcode=op4", [](int i) { return i % 5 == 4 || i % 11 == 0; });
  expect("state=reproduced&pass=pass1",
         [](int i) { return i % 3 == 0 && i % 7 == 1; });
  expect("signature=sig5", [](int i) { return i % 13 == 5; });
  expect("q=needle", [](int i) { return i % 100 == 0 || i % 250 == 0; });
  expect("q=NEEDLE&pass=pass2",
         [](int i) { return (i % 100 == 0 || i % 250 == 0) && i % 7 == 2; });
  expect("pass=&q=", [](int) { return true; });  // Empty: no filter.

  HttpReply first = Call("GET", "/api/v1/bugs?limit=10");
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(first.json().Find("bugs")->size(), 10u);
  EXPECT_EQ(first.json().Find("next")->int64_value(), 10);
  EXPECT_EQ(first.json().Find("total")->int64_value(), kBugs);
  HttpReply bad = Call("GET", "/api/v1/bugs?state=nope");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.error_message().find("state"), std::string::npos);
  EXPECT_EQ(Call("GET", "/api/v1/bugs?limit=0").status, 400);

  // The filters use migration 12's expression indexes.
  auto plan = check_->db()->Prepare(
      "EXPLAIN QUERY PLAN SELECT id FROM bugs WHERE (CASE WHEN "
      "json_valid(details) THEN json_extract(details, "
      "'$.localization.findings.pass') END) = 'x'");
  ASSERT_TRUE(plan.ok());
  std::string detail;
  while (*plan->Step()) detail += plan->ColumnText(3) + "\n";
  EXPECT_NE(detail.find("bugs_by_pass"), std::string::npos) << detail;
}

TEST_F(WebDataTest, SignaturesCountBugsAndCommits) {
  const std::string sha = Sha256Hex("case");
  ASSERT_TRUE(check_->PutCase(sha, "", Json::MakeObject()).ok());
  Json d = Json::MakeObject();
  d["commit"] = "c1";
  const int64_t a = NewBug("sigA", "first A", sha, d);
  clock_.Advance(1000);
  const int64_t b = NewBug("sigA", "second A");
  clock_.Advance(1000);
  NewBug("sigB", "B");
  ASSERT_TRUE(check_->AddRun(sha, b, "c2", Json::MakeObject(), 1).ok());
  HttpReply r = Call("GET", "/api/v1/signatures");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json body = r.json();
  const Json& list = *body.Find("signatures");
  ASSERT_EQ(list.size(), 2u);
  const Json& s = list.array()[0];
  EXPECT_EQ(s.Find("signature")->string_value(), "sigA");
  EXPECT_EQ(s.Find("title")->string_value(), "first A");
  EXPECT_EQ(s.Find("count")->int64_value(), 2);
  EXPECT_EQ(s.Find("commits")->Dump(), R"(["c1","c2"])");
  EXPECT_EQ(s.Find("bugs")->Dump(),
            "[" + std::to_string(a) + "," + std::to_string(b) + "]");
  EXPECT_LT(s.Find("first_seen_ms")->int64_value(),
            s.Find("last_seen_ms")->int64_value());
  HttpReply page = Call("GET", "/api/v1/signatures?limit=1");
  EXPECT_EQ(page.json().Find("next")->string_value(), "sigA");
  HttpReply rest = Call("GET", "/api/v1/signatures?limit=1&after=sigA");
  EXPECT_EQ(rest.json()
                .Find("signatures")
                ->array()[0]
                .Find("signature")
                ->string_value(),
            "sigB");
}

TEST_F(WebDataTest, BugViewHasEverythingThePageShows) {
  auto repo = hlo_bisect::GitRepo::Init(repo_dir_);
  ASSERT_TRUE(repo.ok());
  auto c1 = (*repo)->CommitFiles("", {{"pass.cc", "int x = 1;\n"}}, "base",
                                 "refs/heads/main");
  auto c2 = (*repo)->CommitFiles(*c1, {{"pass.cc", "int x = 2;\n"}},
                                 "break the <pass>", "refs/heads/main");
  ASSERT_TRUE(c1.ok() && c2.ok());
  const std::string case_sha = PutRealCase(kFusionHlo);
  const Json details = FusionLocalized();
  const int64_t id =
      NewBug("sig", "<script>alert(1)</script>", case_sha, details);
  ASSERT_TRUE(
      check_->TransitionBug(id, BugState::kReproduced, "test", Json()).ok());
  auto patch = check_->AddPatch(id, "trench/bug-1", "--- a/x\n+++ b/x\n");
  ASSERT_TRUE(patch.ok());
  auto session = check_->StartAgentSession(id, "patch_drafter", "builtin");
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(check_->AddAgentMessage(*session, "user", "the task", 5, 0).ok());
  ASSERT_TRUE(
      check_->AddAgentMessage(*session, "assistant", "a reply", 0, 7).ok());
  // Failing runs whose verdict maps where output 0 differs (as hlo-diff
  // draws it: element 2 far outside its allowance); the second run of the
  // same case repeats the map, which is shown once.
  Json verdict = Json::MakeObject();
  verdict["status"] = "mismatch";
  Json out0 = Json::MakeObject();
  out0["index"] = 0;
  out0["mismatches"] = 1;
  Json outputs = Json::MakeArray();
  outputs.push_back(out0);
  verdict["outputs"] = outputs;
  hlo_diff::ErrorMap drawn = hlo_diff::ErrorGrid(
      {-2, -3, 100, -5}, {-2, -3, -4, -5}, {1, 1, 1, 1}, 1, 4);
  drawn.shape = {4};
  Json maps = Json::MakeArray();
  maps.push_back(drawn.ToJson());
  verdict["error_maps"] = maps;
  auto run = check_->AddRun(case_sha, id, *c2, verdict, 0.5);
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(check_->AddRun(case_sha, id, *c2, verdict, 0.5).ok());

  HttpReply r = Call("GET", "/api/v1/bugs/" + std::to_string(id) + "/view");
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 500);
  Json v = r.json();
  EXPECT_EQ(v.Find("bug")->Find("title")->string_value(),
            "<script>alert(1)</script>");
  EXPECT_GE(v.Find("events")->size(), 2u);
  ASSERT_EQ(v.Find("runs")->size(), 2u);
  EXPECT_EQ(v.Find("runs")
                ->array()[0]
                .Find("verdict")
                ->Find("status")
                ->string_value(),
            "mismatch");
  ASSERT_EQ(v.Find("error_maps")->size(), 1u) << r.body.substr(0, 2000);
  const Json& map = v.Find("error_maps")->array()[0];
  EXPECT_EQ(map.Find("run")->int64_value(), *run);
  EXPECT_EQ(map.Find("rows")->int64_value(), 1);
  EXPECT_EQ(map.Find("cols")->int64_value(), 4);
  const Json& cells = map.Find("cells")->array()[0];
  EXPECT_LE(cells.array()[0].number_value(), 1.0);
  EXPECT_GT(cells.array()[2].number_value(), 1.0);
  EXPECT_EQ(v.Find("case_hlo")->string_value(), kFusionHlo);
  EXPECT_TRUE(v.Find("minimized_hlo")->is_null());
  EXPECT_EQ(v.Find("highlight")->Find("fused_instruction")->string_value(),
            "m");
  EXPECT_TRUE(v.Find("highlight")->Find("called_instruction")->is_null());
  EXPECT_EQ(v.Find("localization")
                ->Find("levels")
                ->array()[0]
                .Find("summary")
                ->string_value(),
            "multiply in fusion f");
  EXPECT_TRUE(v.Find("culprit")->is_null());  // Not set on the bug yet.
  ASSERT_EQ(v.Find("patches")->size(), 1u);
  EXPECT_EQ(v.Find("patches")->array()[0].Find("download")->string_value(),
            "/api/v1/patches/" + std::to_string(*patch) + ".patch");
  ASSERT_EQ(v.Find("sessions")->size(), 1u);
  const Json& s = v.Find("sessions")->array()[0];
  EXPECT_EQ(s.Find("role")->string_value(), "patch_drafter");
  ASSERT_EQ(s.Find("messages")->size(), 2u);
  EXPECT_EQ(s.Find("messages")->array()[1].Find("output_tokens")->int64_value(),
            7);
  EXPECT_EQ(v.Find("downloads")->Find("case")->string_value(),
            "/api/v1/bugs/" + std::to_string(id) + "/case.tar.gz");
  EXPECT_TRUE(v.Find("downloads")->Find("minimized")->is_null());
  EXPECT_EQ(v.Find("graph")->string_value(),
            "/api/v1/bugs/" + std::to_string(id) + "/graph.svg");

  // With a culprit: its summary, author and diff from the repository.
  ASSERT_TRUE(check_->db()
                  ->Prepare("UPDATE bugs SET culprit_commit = ?1 "
                            "WHERE id = ?2")
                  ->BindText(1, *c2)
                  .BindInt64(2, id)
                  .Run()
                  .ok());
  Json culprit = *Call("GET", "/api/v1/bugs/" + std::to_string(id) + "/view")
                      .json()
                      .Find("culprit");
  EXPECT_EQ(culprit.Find("sha")->string_value(), *c2);
  EXPECT_EQ(culprit.Find("summary")->string_value(), "break the <pass>");
  EXPECT_NE(culprit.Find("diff")->string_value().find("+int x = 2;"),
            std::string::npos);
}

// The bug page shows each patch's coverage (pipeline/draft_coverage.h)
// from the patch_drafted event that named it; a partial revert is flagged.
TEST_F(WebDataTest, PatchesCarryTheirCoverage) {
  const int64_t id = NewBug("sig", "t");
  auto first = check_->AddPatch(id, "trench/bug-1", "--- a/x\n+++ b/x\n");
  auto second = check_->AddPatch(id, "trench/bug-1", "--- a/y\n+++ b/y\n");
  ASSERT_TRUE(first.ok() && second.ok());
  Json coverage = Json::MakeObject();
  coverage["partial"] = true;
  coverage["reason"] =
      "partial revert: it leaves the culprit's change at a.cc:7";
  Json evidence = Json::MakeObject();
  evidence["event"] = "patch_drafted";
  evidence["patch"] = *first;
  evidence["coverage"] = coverage;
  ASSERT_TRUE(
      check_->TransitionBug(id, BugState::kReproduced, "test", evidence).ok());
  Json v = Call("GET", "/api/v1/bugs/" + std::to_string(id) + "/view").json();
  ASSERT_EQ(v.Find("patches")->size(), 2u);
  const Json& p0 = v.Find("patches")->array()[0];
  ASSERT_EQ(p0.Find("id")->int64_value(), *first);
  EXPECT_TRUE(p0.Find("coverage")->Find("partial")->bool_value());
  EXPECT_NE(p0.Find("coverage")->Find("reason")->string_value().find("a.cc:7"),
            std::string::npos);
  EXPECT_TRUE(v.Find("patches")->array()[1].Find("coverage")->is_null());
}

TEST_F(WebDataTest, GraphHighlightsTheDivergingInstruction) {
  const std::string case_sha = PutRealCase(kFusionHlo);
  const Json details = FusionLocalized();
  const int64_t id = NewBug("sig", "t", case_sha, details);
  HttpReply r =
      Call("GET", "/api/v1/bugs/" + std::to_string(id) + "/graph.svg");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers["content-type"], "image/svg+xml");
  EXPECT_NE(r.body.find("<svg"), std::string::npos);
  EXPECT_NE(r.body.find("#e74c3c"), std::string::npos);
  EXPECT_NE(r.body.find("multiply"), std::string::npos);
  EXPECT_EQ(Call("GET", "/api/v1/bugs/" + std::to_string(NewBug("s", "t")) +
                            "/graph.svg")
                .status,
            404);
}

TEST(BugGraphTest, HighlightNamesTheOpInsideACalledComputation) {
  StatusOr<Json> details = ParseJson(R"({"localization": {"findings": {
      "instruction": "s", "called_computation": "greater",
      "called_instruction": "gt", "called_opcode": "compare"}}})");
  ASSERT_TRUE(details.ok());
  GraphHighlight h = LocalizedHighlight(*details);
  EXPECT_EQ(h.instruction, "s");
  EXPECT_EQ(h.called_instruction, "gt");
  EXPECT_EQ(h.fused_instruction, "");
}

TEST(BugGraphTest, HighlightFallsBackToTheRewritesInstruction) {
  // A pass localized to one rewrite decision, with no single diverging
  // instruction found by the graph level (e.g. CSE merging two compares).
  StatusOr<Json> details = ParseJson(R"({"localization": {"findings": {
      "pass": "cse", "instruction": null, "fusion": null,
      "fused_instruction": null,
      "rewrite": {"pass": "cse", "site": "merge-identical",
                  "instruction": "c", "index": 0}}}})");
  ASSERT_TRUE(details.ok());
  GraphHighlight h = LocalizedHighlight(*details);
  EXPECT_EQ(h.instruction, "c");
  EXPECT_EQ(h.fusion, "");
  // The graph level's instruction wins when there is one.
  details = ParseJson(R"({"localization": {"findings": {
      "instruction": "d", "rewrite": {"instruction": "c"}}}})");
  ASSERT_TRUE(details.ok());
  EXPECT_EQ(LocalizedHighlight(*details).instruction, "d");
  EXPECT_EQ(LocalizedHighlight(Json::MakeObject()).instruction, "");
}

TEST(BugGraphTest, LabelsAreEscapedForDot) {
  EXPECT_EQ(DotEscape("a\"b\\c\nd<e>"), "a\\\"b\\\\c d<e>");
  EXPECT_EQ(DotEscape("\\N\\G"), "\\\\N\\\\G");
  EXPECT_EQ(DotEscape(std::string(100, 'x'), 80), std::string(80, 'x') + "...");
  auto dot = ModuleDot(kFusionHlo, {"f", "f", "m"});
  ASSERT_TRUE(dot.ok()) << dot.status().ToString();
  EXPECT_NE(dot->find("subgraph cluster_"), std::string::npos);
  EXPECT_NE(dot->find("fillcolor=\"#e74c3c\""), std::string::npos);
  EXPECT_EQ(ModuleDot("HloModule broken", {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ModuleDot(kFusionHlo, {}, 3).status().code(),
            StatusCode::kResourceExhausted);
}

TEST_F(WebDataTest, AMalformedErrorMapInAStoredVerdictIsLeftOut) {
  const std::string case_sha = PutRealCase(kFusionHlo);
  const int64_t id = NewBug("sig", "t", case_sha);
  // 10^6 cells claimed, a string cell, a map that is no object: a tool's
  // output is data, and none of it reaches the page.
  for (const char* bad :
       {R"([{"output":0,"shape":[4],"rows":1000,"cols":1000,"cells":[]}])",
        R"([{"output":0,"shape":[2],"rows":1,"cols":2,"cells":[[1,"<b>"]]}])",
        R"(["x"])", R"({"output":0})"}) {
    Json verdict = Json::MakeObject();
    verdict["status"] = "mismatch";
    verdict["error_maps"] = *ParseJson(bad);
    ASSERT_TRUE(check_->AddRun(case_sha, id, "c", verdict, 0.5).ok());
  }
  HttpReply r = Call("GET", "/api/v1/bugs/" + std::to_string(id) + "/view");
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 500);
  Json v = r.json();
  EXPECT_EQ(v.Find("error_maps")->size(), 0u);
  ASSERT_EQ(v.Find("runs")->size(), 4u);
  for (const Json& run : v.Find("runs")->array()) {
    EXPECT_EQ(run.Find("verdict")->Find("error_maps"), nullptr);
  }
}

TEST(WebRoutesMetricsTest, RoutesArePatterns) {
  EXPECT_EQ(RouteOf("/api/v1/bugs/3/view"), "/api/v1/bugs/{id}/view");
  EXPECT_EQ(RouteOf("/api/v1/bugs/3/graph.svg"), "/api/v1/bugs/{id}/graph.svg");
  EXPECT_EQ(RouteOf("/api/v1/patches/3.patch"), "/api/v1/patches/{id}.patch");
  EXPECT_EQ(RouteOf("/api/v1/patches/.patch"), "other");
  EXPECT_EQ(RouteOf("/api/v1/patches/3.patchx"), "other");
  EXPECT_EQ(RouteOf("/api/v1/overview"), "/api/v1/overview");
}

class WebDataNoDotTest : public WebDataTest {
  std::string DotProgram() override { return "/nonexistent/dot"; }
};

TEST_F(WebDataNoDotTest, MissingDotIs503NamingIt) {
  const int64_t id = NewBug("sig", "t", PutRealCase(kFusionHlo));
  HttpReply r =
      Call("GET", "/api/v1/bugs/" + std::to_string(id) + "/graph.svg");
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_NE(r.error_message().find("dot"), std::string::npos);
}

// The daemon's dot runs in the sandbox. Here "dot" is hostile: it tries
// to write beside the store, to reach the network, and says who it is.
class WebDataSandboxedDotTest : public WebDataTest {
 protected:
  ApiOptions Options() override {
    ApiOptions options = WebDataTest::Options();
    ::chmod(dir_.c_str(), 0711);  // The render dirs' parents: searchable.
    char tools[] = "/tmp/trench-dot-test.XXXXXX";
    tools_dir_ = ::mkdtemp(tools) ? tools : "";
    ::chmod(tools_dir_.c_str(), 0755);
    outside_ = dir_ + "/owned-by-dot";
    const std::string dot = tools_dir_ + "/dot";
    std::ofstream(dot)
        << "#!/bin/sh\n"
        << "echo owned > " << outside_ << " 2>/dev/null\n"
        << "echo here > ./inside || exit 3\n"
        << "test -s graph.dot || exit 4\n"
        << "printf '<svg><text>uid=%s</text></svg>' \"$(id -u)\"\n";
    ::chmod(dot.c_str(), 0755);
    options.dot_program = dot;
    sandbox::Options jail;
    jail.work_dir = dir_ + "/graph";
    jail.limits.wall_seconds = 20;
    options.graph_sandbox = std::make_shared<const sandbox::Options>(jail);
    return options;
  }
  void TearDown() override {
    WebDataTest::TearDown();
    std::error_code ec;
    fs::remove_all(tools_dir_, ec);
  }
  std::string tools_dir_, outside_;
};

TEST_F(WebDataSandboxedDotTest, DotRunsInTheSandbox) {
  const int64_t id = NewBug("sig", "t", PutRealCase(kFusionHlo));
  HttpReply r =
      Call("GET", "/api/v1/bugs/" + std::to_string(id) + "/graph.svg");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.rfind("<svg><text>uid=", 0), 0u) << r.body;
  if (::geteuid() == 0) {  // Switched away from root.
    EXPECT_EQ(r.body.find("uid=0<"), std::string::npos) << r.body;
  }
  // Nothing written outside its own directory, and that one is gone.
  EXPECT_FALSE(fs::exists(outside_));
  std::error_code ec;
  EXPECT_TRUE(fs::is_empty(dir_ + "/graph", ec)) << ec.message();
}

TEST_F(WebDataTest, DownloadsAreRealArchivesAndPatches) {
  const std::string case_sha = PutRealCase(kFusionHlo);
  const std::string case_dir = dir_ + "/cases/" + case_sha;
  fs::create_directories(case_dir + "/sub");
  { std::ofstream(case_dir + "/sub/notes.txt") << "nested\n"; }
  fs::create_symlink("/etc/passwd", case_dir + "/link");  // Not archived.
  const int64_t id = NewBug("sig", "a \"quoted\" title", case_sha);
  HttpReply r =
      Call("GET", "/api/v1/bugs/" + std::to_string(id) + "/case.tar.gz");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string name = "bug-" + std::to_string(id) + "-case";
  EXPECT_EQ(r.headers["content-disposition"],
            "attachment; filename=\"" + name + ".tar.gz\"");
  EXPECT_EQ(r.headers["content-type"], "application/gzip");
  const std::string archive = dir_ + "/case.tar.gz";
  { std::ofstream(archive, std::ios::binary) << r.body; }
  hlo_diff::ProcessSpec list;
  list.argv = {"/usr/bin/tar", "-tzf", archive};
  auto listed = hlo_diff::RunProcess(list);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->exit_code, 0) << listed->err;
  std::set<std::string> names;
  std::istringstream lines(listed->out);
  for (std::string line; std::getline(lines, line);) names.insert(line);
  EXPECT_TRUE(names.count(name + "/module.hlo")) << listed->out;
  EXPECT_TRUE(names.count(name + "/sub/notes.txt")) << listed->out;
  EXPECT_FALSE(names.count(name + "/link")) << listed->out;
  const std::string unpacked = dir_ + "/unpacked";
  fs::create_directories(unpacked);
  hlo_diff::ProcessSpec extract;
  extract.argv = {"/usr/bin/tar", "-xzf", archive, "-C", unpacked};
  auto extracted = hlo_diff::RunProcess(extract);
  ASSERT_TRUE(extracted.ok());
  ASSERT_EQ(extracted->exit_code, 0) << extracted->err;
  for (const auto& e : fs::recursive_directory_iterator(case_dir)) {
    if (!e.is_regular_file() || e.is_symlink()) continue;
    const std::string rel = fs::relative(e.path(), case_dir).string();
    EXPECT_EQ(ReadFile(unpacked + "/" + name + "/" + rel),
              ReadFile(e.path().string()))
        << rel;
  }
  EXPECT_EQ(
      Call("GET", "/api/v1/bugs/" + std::to_string(id) + "/minimized.tar.gz")
          .status,
      404);

  auto patch = check_->AddPatch(id, "trench/bug-" + std::to_string(id),
                                "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ "
                                "-1 +1 @@\n-a\n+b\n");
  ASSERT_TRUE(patch.ok());
  HttpReply p =
      Call("GET", "/api/v1/patches/" + std::to_string(*patch) + ".patch");
  ASSERT_EQ(p.status, 200) << p.body;
  EXPECT_EQ(p.headers["content-disposition"],
            "attachment; filename=\"bug-" + std::to_string(id) + "-patch-" +
                std::to_string(*patch) + ".patch\"");
  EXPECT_NE(p.body.find("Subject: [PATCH] bug " + std::to_string(id) +
                        ": a \"quoted\" title\n"),
            std::string::npos)
      << p.body;
  EXPECT_NE(p.body.find("\n---\ndiff --git a/x b/x\n"), std::string::npos);
  EXPECT_EQ(Call("GET", "/api/v1/patches/999.patch").status, 404);
}

TEST_F(WebDataTest, IdsInPathsAreValidated) {
  for (const std::string path :
       {"/api/v1/bugs/abc/view", "/api/v1/bugs/0/view",
        "/api/v1/bugs/-1/graph.svg",
        "/api/v1/bugs/99999999999999999999999999/view",
        "/api/v1/bugs/1e3/case.tar.gz", "/api/v1/bugs/%2e%2e/case.tar.gz",
        "/api/v1/bugs/..%2F..%2Fetc/case.tar.gz",
        "/api/v1/bugs/1/..%2Fcase.tar.gz", "/api/v1/patches/..%2Fx.patch",
        "/api/v1/patches/abc.patch", "/api/v1/patches/.patch",
        "/api/v1/patches/1%00.patch", "/api/v1/bugs/12345/view",
        "/api/v1/patches/12345.patch"}) {
    SCOPED_TRACE(path);
    HttpReply r = Call("GET", path);
    EXPECT_EQ(r.status, 404) << r.body;
    EXPECT_NE(r.error_message(), "");
  }
  HttpReply post = Call("POST", "/api/v1/bugs/1/view", "{}", kToken);
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.headers["allow"], "GET");
  ExpectHealthy();
}

}  // namespace
}  // namespace trench::orchestrator::testing
