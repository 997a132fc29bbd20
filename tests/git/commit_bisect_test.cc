// The commit search (git/commit_bisect.h): BisectSearch's
// logic alone, then BisectCommits on fake target repositories
// (commit_test_util.h) of 24 commits whose builds are quick shell scripts
// wrapping this build's real binaries; a `bug` commit makes the case's add
// a subtract (a real mismatch).
#include "git/commit_bisect.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/git/commit_test_util.h"

namespace trench::hlo_bisect {
namespace {

using testing::FakeCommit;
using testing::MakeFakeRepo;
using testing::TempDir;

// Runs BisectSearch against "commits >= first_bad are bad, those in
// `broken` skip"; returns the tested commits in order.
std::vector<size_t> Simulate(BisectSearch& s, size_t first_bad,
                             const std::set<size_t>& broken) {
  std::vector<size_t> tested;
  while (std::optional<size_t> i = s.Next()) {
    tested.push_back(*i);
    s.Mark(*i, broken.count(*i)  ? Outcome::kSkip
               : *i >= first_bad ? Outcome::kBad
                                 : Outcome::kGood);
    if (tested.size() > 100) break;
  }
  return tested;
}

TEST(BisectSearchTest, FindsEveryPositionInLogSteps) {
  for (size_t n : {1, 2, 3, 7, 24, 100}) {
    for (size_t bad = 1; bad <= n; ++bad) {
      BisectSearch s(n);
      const std::vector<size_t> tested = Simulate(s, bad, {});
      EXPECT_EQ(s.Candidates(), std::vector<size_t>{bad}) << n << " " << bad;
      size_t log2 = 0;
      while ((size_t{1} << log2) < n) ++log2;
      EXPECT_LE(tested.size(), log2) << n << " " << bad;
    }
  }
}

TEST(BisectSearchTest, SkipsTryNeighboursAndMayLeaveCandidates) {
  // The middle (12) does not build: 13 is tried next, then the search goes
  // on and still finds 17.
  BisectSearch s(24);
  const std::vector<size_t> tested = Simulate(s, 17, {12});
  ASSERT_GE(tested.size(), 2u);
  EXPECT_EQ(tested[0], 12u);
  EXPECT_EQ(tested[1], 13u);
  EXPECT_EQ(s.Candidates(), std::vector<size_t>{17});
  // The commit just before the culprit does not build: both remain.
  BisectSearch t(24);
  Simulate(t, 17, {16});
  EXPECT_EQ(t.Candidates(), (std::vector<size_t>{16, 17}));
  EXPECT_EQ(t.last_good(), 15u);
  EXPECT_EQ(t.first_bad(), 17u);
  // Nothing builds: every commit is a candidate, the bad one included.
  std::set<size_t> all;
  for (size_t i = 1; i < 6; ++i) all.insert(i);
  BisectSearch u(6);
  EXPECT_EQ(Simulate(u, 3, all).size(), 5u);
  EXPECT_EQ(u.Candidates(), (std::vector<size_t>{1, 2, 3, 4, 5, 6}));
}

struct FakeRun {
  TempDir tmp;
  testing::FakeRepo f;
  std::unique_ptr<CommitBuilder> builder;

  explicit FakeRun(const std::vector<std::pair<int, FakeCommit>>& extra) {
    f = MakeFakeRepo(tmp / "repo", 24, extra);
    builder = MakeBuilder();
  }
  std::unique_ptr<CommitBuilder> MakeBuilder() {
    BuilderOptions o;
    o.work_dir = tmp / "work";
    o.cache_dir = tmp / "cache";
    o.build_command = testing::FakeBuildCommand();
    return std::make_unique<CommitBuilder>(f.repo.get(), o);
  }
  StatusOr<Json> Bisect(CommitBuilder& b, const std::string& good = "main~24",
                        const std::string& bad = "main") {
    CommitBisectOptions o;
    o.good = good;
    o.bad = bad;
    o.work_dir = tmp / "runs";
    return BisectCommits(testing::AddCase(), *f.repo, b, o);
  }
};

const std::string& Str(const Json& j, const char* key) {
  static const std::string kNone;
  const Json* v = j.Find(key);
  return v && v->is_string() ? v->string_value() : kNone;
}

TEST(CommitBisectTest, FindsConfirmsAndSkipsTheUnbuildableCommit) {
  // 12 does not build (13 repairs it); 17 introduces the bug.
  FakeRun run({{12, FakeCommit{.add_broken = true}},
               {13, FakeCommit{.remove_broken = true}},
               {17, FakeCommit{.set_bug = "on"}}});
  ASSERT_TRUE(run.f.repo);
  StatusOr<Json> r = run.Bisect(*run.builder);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  SCOPED_TRACE(r->DumpPretty());
  EXPECT_EQ(Str(*r->Find("culprit"), "sha"), run.f.shas[17]);
  EXPECT_EQ(Str(*r->Find("culprit"), "summary"), "commit 17");
  EXPECT_EQ(r->Find("commits")->int64_value(), 24);
  EXPECT_EQ(Str(*r->Find("bad_verdict"), "status"), "mismatch");
  EXPECT_TRUE(r->Find("confirmed")->bool_value());
  EXPECT_EQ(Str(*r->Find("confirmation"), "status"), "pass");
  // Steps: bad, good, the search (the skipped 12 among them), the revert.
  const Json::Array& steps = r->Find("steps")->array();
  ASSERT_GE(steps.size(), 4u);
  EXPECT_EQ(Str(steps[0], "role"), "bad");
  EXPECT_EQ(Str(steps[1], "role"), "good");
  EXPECT_EQ(Str(steps.back(), "role"), "revert");
  int skipped = 0;
  for (const Json& s : steps) {
    if (Str(s, "commit") == run.f.shas[12]) {
      EXPECT_FALSE(s.Find("built")->bool_value());
      EXPECT_EQ(Str(s, "outcome"), "skip");
      EXPECT_NE(Str(s, "log_tail").find("broken"), std::string::npos);
      ++skipped;
    }
  }
  EXPECT_EQ(skipped, 1);
  const int64_t builds = r->Find("builds")->int64_value();
  EXPECT_EQ(builds, static_cast<int64_t>(steps.size()));
  EXPECT_LE(builds, 2 + 6 + 1);  // good, bad, <= log2(24) + 1 skip, revert.
  EXPECT_EQ(r->Find("cache_hits")->int64_value(), 0);

  // A second run on the same cache builds nothing and agrees.
  auto again_builder = run.MakeBuilder();
  StatusOr<Json> again = run.Bisect(*again_builder);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(Str(*again->Find("culprit"), "sha"), run.f.shas[17]);
  EXPECT_TRUE(again->Find("confirmed")->bool_value());
  EXPECT_EQ(again->Find("builds")->int64_value(), 0);
  EXPECT_EQ(again->Find("cache_hits")->int64_value(), builds);
}

TEST(CommitBisectTest, UnbuildableNeighbourLeavesTwoCandidates) {
  // 16 does not build and 17 both repairs it and introduces the bug: as
  // git bisect, the first bad commit is 16 or 17.
  FakeRun run({{16, FakeCommit{.add_broken = true}},
               {17, FakeCommit{.remove_broken = true, .set_bug = "on"}}});
  ASSERT_TRUE(run.f.repo);
  StatusOr<Json> r = run.Bisect(*run.builder);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  SCOPED_TRACE(r->DumpPretty());
  EXPECT_TRUE(r->Find("culprit")->is_null());
  const Json::Array& c = r->Find("candidates")->array();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(Str(c[0], "sha"), run.f.shas[16]);
  EXPECT_EQ(Str(c[1], "sha"), run.f.shas[17]);
  EXPECT_FALSE(r->Find("confirmed")->bool_value());
}

TEST(CommitBisectTest, ConflictingRevertIsNotConfirmed) {
  // 20 edits the file 17 added: reverting 17 on top of 24 conflicts.
  FakeRun run(
      {{17, FakeCommit{.set_bug = "on"}}, {20, FakeCommit{.set_bug = "2"}}});
  ASSERT_TRUE(run.f.repo);
  StatusOr<Json> r = run.Bisect(*run.builder);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  SCOPED_TRACE(r->DumpPretty());
  EXPECT_EQ(Str(*r->Find("culprit"), "sha"), run.f.shas[17]);
  EXPECT_FALSE(r->Find("confirmed")->bool_value());
  EXPECT_NE(Str(*r->Find("confirmation"), "reason").find("conflicts in: bug"),
            std::string::npos);
}

TEST(CommitBisectTest, RevertThatDoesNotBuildIsNotConfirmed) {
  // 17 drops old-api along with the bug; 20 adds new-api. Every commit
  // builds, but 17 reverted on 24 has both APIs and does not.
  FakeRun run({{17, FakeCommit{.remove_old_api = true, .set_bug = "on"}},
               {20, FakeCommit{.add_new_api = true}}});
  ASSERT_TRUE(run.f.repo);
  StatusOr<Json> r = run.Bisect(*run.builder);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  SCOPED_TRACE(r->DumpPretty());
  EXPECT_EQ(Str(*r->Find("culprit"), "sha"), run.f.shas[17]);
  EXPECT_FALSE(r->Find("confirmed")->bool_value());
  const Json& conf = *r->Find("confirmation");
  EXPECT_FALSE(conf.Find("built")->bool_value());
  EXPECT_NE(Str(conf, "reason").find("the revert does not build"),
            std::string::npos);
  const Json& last = r->Find("steps")->array().back();
  EXPECT_EQ(Str(last, "role"), "revert");
  EXPECT_NE(Str(last, "log_tail").find("both APIs"), std::string::npos);
}

// Good's target cannot run the case (an older target, before the ops it
// needs): commits until 6 refuse it, 17 brings the bug. The search skips
// the commits that refuse it and finds 17.
TEST(CommitBisectTest, AGoodCommitWhoseTargetCannotRunTheCaseIsSkipped) {
  FakeRun run({{1, FakeCommit{.add_unsupported = true}},
               {6, FakeCommit{.remove_unsupported = true}},
               {17, FakeCommit{.set_bug = "on"}}});
  ASSERT_TRUE(run.f.repo);
  StatusOr<Json> r = run.Bisect(*run.builder, "main~23", "main");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  SCOPED_TRACE(r->DumpPretty());
  EXPECT_EQ(Str(*r->Find("culprit"), "sha"), run.f.shas[17]);
  EXPECT_TRUE(r->Find("confirmed")->bool_value());
  const Json& good = r->Find("steps")->array()[1];
  EXPECT_EQ(Str(good, "role"), "good");
  EXPECT_EQ(Str(good, "status"), "target_unsupported");
  EXPECT_EQ(Str(good, "outcome"), "skip");
}

// A judge for commits whose target cannot run the case (hlo-bisect
// commits --pass: the localized pass judged without running): commits
// 1-7 refuse the case, 3 brings the bug. Judged, the unsupported commits
// are good or bad like run ones, and the search names 3; each judged step
// says so.
TEST(CommitBisectTest, AJudgeDecidesCommitsWhoseTargetCannotRunTheCase) {
  FakeRun run({{1, FakeCommit{.add_unsupported = true}},
               {3, FakeCommit{.set_bug = "on"}},
               {8, FakeCommit{.remove_unsupported = true}}});
  ASSERT_TRUE(run.f.repo);
  CommitBisectOptions o;
  o.good = "main~23";
  o.bad = "main";
  o.work_dir = run.tmp / "runs";
  int judged = 0;
  // The work directory is named by the build's key: the commit's sha.
  o.judge_unsupported = [&](const std::string&, const std::string& work,
                            std::string* why) -> StatusOr<std::optional<bool>> {
    const std::string sha = std::filesystem::path(work).filename().string();
    const auto it = std::find(run.f.shas.begin(), run.f.shas.end(), sha);
    if (it == run.f.shas.end()) return std::optional<bool>();
    ++judged;
    *why = "judged";
    return std::optional<bool>(it - run.f.shas.begin() >= 3);
  };
  StatusOr<Json> r =
      BisectCommits(testing::AddCase(), *run.f.repo, *run.builder, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  SCOPED_TRACE(r->DumpPretty());
  EXPECT_EQ(Str(*r->Find("culprit"), "sha"), run.f.shas[3]);
  EXPECT_TRUE(r->Find("confirmed")->bool_value());
  EXPECT_GT(judged, 1);
  const Json& good = r->Find("steps")->array()[1];
  EXPECT_EQ(Str(good, "run_status"), "target_unsupported");
  EXPECT_EQ(Str(good, "status"), "pass");
  EXPECT_EQ(Str(good, "outcome"), "good");
  EXPECT_EQ(Str(good, "judged"), "judged");
}

// The bug comes with the support (commit 6): the first commit that runs
// the case is named, and reverting it cannot confirm (the case is refused
// again).
TEST(CommitBisectTest, TheFirstCommitThatRunsTheCaseMayBeTheCulprit) {
  FakeRun run({{1, FakeCommit{.add_unsupported = true}},
               {6, FakeCommit{.set_bug = "on", .remove_unsupported = true}}});
  ASSERT_TRUE(run.f.repo);
  StatusOr<Json> r = run.Bisect(*run.builder, "main~23", "main");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  SCOPED_TRACE(r->DumpPretty());
  const Json::Array& candidates = r->Find("candidates")->array();
  ASSERT_FALSE(candidates.empty());
  EXPECT_EQ(Str(candidates.back(), "sha"), run.f.shas[6]);
  EXPECT_FALSE(r->Find("confirmed")->bool_value());
}

// Bad that passes, and good after bad, are refused. Good that fails the
// same way is an answer: the bug predates the range, with no culprit and
// no search (a final report, not an error to retry).
TEST(CommitBisectTest, RefusesBadThatPassesAndReportsAFailureAtGood) {
  FakeRun run({{5, FakeCommit{.set_bug = "on"}}});
  ASSERT_TRUE(run.f.repo);
  // Bad (commit 4) passes.
  StatusOr<Json> r = run.Bisect(*run.builder, "main~24", "main~20");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("does not fail at bad"),
            std::string::npos)
      << r.status().message();
  // Good (commit 10) fails as bad does.
  r = run.Bisect(*run.builder, "main~14", "main");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  SCOPED_TRACE(r->DumpPretty());
  EXPECT_TRUE(r->Find("fails_at_good")->bool_value());
  EXPECT_TRUE(r->Find("culprit")->is_null());
  EXPECT_TRUE(r->Find("candidates")->array().empty());
  EXPECT_FALSE(r->Find("confirmed")->bool_value());
  EXPECT_EQ(r->Find("steps")->array().size(), 2u);  // Bad and good only.
  EXPECT_NE(Str(*r->Find("confirmation"), "reason").find("predates the range"),
            std::string::npos);
  // Good after bad.
  r = run.Bisect(*run.builder, "main", "main~3");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not an ancestor"), std::string::npos);
}

}  // namespace
}  // namespace trench::hlo_bisect
