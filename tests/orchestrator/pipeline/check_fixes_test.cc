// The check_fixes step of a landed commit (steps_commit.cc) run for real:
// a bug's stored repro case runs through the sandboxed hlo-diff on each
// later commit's build (here the project's own, which passes it), and a
// bug that passes is closed as fixed by that commit. Two workers checking
// two commits at once race for the same bug: it is closed once, by one of
// them, and neither job fails. The store is a real SQLite file (one
// connection per worker, as in the daemon), the mirror a real git
// repository.
#include <gtest/gtest.h>

#include <thread>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/random_inputs.h"
#include "orchestrator/pipeline/step_util.h"
#include "tests/orchestrator/pipeline/step_test_fixture.h"
#include "triage/case/case_bundle.h"

namespace trench::orchestrator {
namespace {

constexpr char kModule[] = R"(HloModule sums

ENTRY e {
  p = f32[4,8] parameter(0)
  ROOT a = f32[4,8] add(p, p)
}
)";

class CheckFixesTest : public testing::StepTest {
 protected:
  void SetUp() override {
    StepTest::SetUp();
    found_ = Commit({{"README", "x\n"}}, "found here");
    fix_one_ = Commit({{"README", "y\n"}}, "fix one");
    fix_two_ = Commit({{"README", "z\n"}}, "fix two");
  }

  // A reproduced bug found at found_ whose repro case is stored.
  int64_t ReproducedBug(uint64_t seed) {
    StatusOr<std::unique_ptr<HloModule>> m =
        hlo_diff::ParseCaseModule(kModule, "test");
    EXPECT_TRUE(m.ok());
    if (!m.ok()) return 0;
    StatusOr<hlo_diff::Case> c =
        hlo_diff::MakeCase(kModule, hlo_diff::ArgumentLeaves(RandomArguments(
                                        *(*m)->entry_computation(), seed)));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    const std::string src = dir_ + "/src" + std::to_string(seed);
    EXPECT_TRUE(hlo_diff::WriteCase(src, *c).ok());
    StatusOr<std::string> sha = ImportCase(ctx_, src, Json::MakeObject());
    EXPECT_TRUE(sha.ok()) << sha.status().ToString();
    NewBug b;
    b.signature = "sig:" + std::to_string(seed);
    b.title = "a finding";
    b.case_sha256 = sha.ok() ? *sha : "";
    b.details = Json::MakeObject();
    b.details["commit"] = found_;
    StatusOr<int64_t> id = store_->CreateBug(b, "test", Json::MakeObject());
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    if (!id.ok()) return 0;
    EXPECT_TRUE(store_
                    ->TransitionBug(*id, BugState::kReproduced, "test",
                                    Json::MakeObject())
                    .ok());
    return *id;
  }

  // The check_fixes step of `commit` as a worker of its own runs it: its
  // own store connection and queue.
  StatusOr<Json> CheckOnOwnConnection(const Job& job) {
    ASSIGN_OR_RETURN(Connection own, OwnConnection());
    own.ctx.worker = "fix_checker#" + std::to_string(job.id);
    return RunCheckFixesStep(own.ctx, job);
  }

  Job CheckJob(const std::string& commit) {
    Json payload = Json::MakeObject();
    payload["commit"] = commit;
    return MakeJob("check_fixes", std::move(payload));
  }

  // The bug's fix_verified events.
  std::vector<Event> FixEvents(int64_t id) {
    StatusOr<std::vector<Event>> events = store_->ListEvents(id, 0, 1000);
    EXPECT_TRUE(events.ok());
    std::vector<Event> out;
    for (const Event& e : events.ok() ? *events : std::vector<Event>()) {
      const Json* what = e.evidence.Find("event");
      if (what && what->is_string() && what->string_value() == "fix_verified") {
        out.push_back(e);
      }
    }
    return out;
  }

  std::string found_, fix_one_, fix_two_;
};

TEST_F(CheckFixesTest, ABugThatPassesOnALaterCommitIsClosedAsFixedByIt) {
  const int64_t id = ReproducedBug(1);
  // Its own commit never fixes it.
  StatusOr<Json> same = RunCheckFixesStep(ctx_, CheckJob(found_));
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->Find("fixed")->size(), 0u);
  StatusOr<Json> later = RunCheckFixesStep(ctx_, CheckJob(fix_one_));
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  ASSERT_EQ(later->Find("fixed")->size(), 1u) << later->Dump();
  EXPECT_EQ(later->Find("fixed")->array()[0].int64_value(), id);
  StatusOr<Bug> bug = store_->GetBug(id);
  ASSERT_TRUE(bug.ok());
  EXPECT_EQ(bug->state, BugState::kFixed);
  EXPECT_EQ(bug->fix_commit, std::optional<std::string>(fix_one_));
  const std::vector<Event> fixes = FixEvents(id);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].evidence.Find("verdict")->Find("status")->string_value(),
            "pass");
}

// Two commits land together; their checks run on two workers at once and
// both list the same bugs before either closes one. Each bug ends fixed
// once, by one of the two commits, and both jobs succeed (before the fix
// of 2026-12-04 the slower one failed for good with "illegal bug
// transition fixed -> fixed").
TEST_F(CheckFixesTest, TwoWorkersCheckingTwoCommitsCloseEachBugOnce) {
  std::vector<int64_t> ids;
  for (uint64_t seed = 1; seed <= 3; ++seed) ids.push_back(ReproducedBug(seed));
  const Job one = CheckJob(fix_one_), two = CheckJob(fix_two_);
  StatusOr<Json> out_one = Internal("not run"), out_two = Internal("not run");
  std::thread a([&] { out_one = CheckOnOwnConnection(one); });
  std::thread b([&] { out_two = CheckOnOwnConnection(two); });
  a.join();
  b.join();
  ASSERT_TRUE(out_one.ok()) << out_one.status().ToString();
  ASSERT_TRUE(out_two.ok()) << out_two.status().ToString();
  EXPECT_EQ(out_one->Find("fixed")->size() + out_two->Find("fixed")->size(),
            ids.size())
      << out_one->Dump() << "\n"
      << out_two->Dump();
  for (int64_t id : ids) {
    StatusOr<Bug> bug = store_->GetBug(id);
    ASSERT_TRUE(bug.ok());
    EXPECT_EQ(bug->state, BugState::kFixed);
    const std::vector<Event> fixes = FixEvents(id);
    ASSERT_EQ(fixes.size(), 1u) << "bug " << id;
    ASSERT_TRUE(bug->fix_commit.has_value());
    EXPECT_EQ(fixes[0].evidence.Find("commit")->string_value(),
              *bug->fix_commit);
    EXPECT_TRUE(*bug->fix_commit == fix_one_ || *bug->fix_commit == fix_two_);
  }
}

}  // namespace
}  // namespace trench::orchestrator
