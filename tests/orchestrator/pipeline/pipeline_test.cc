// The pipeline's registry and bookkeeping without running tools: which
// worker leases which step, the step a bug's state calls for (queued once),
// the reconciler, and the repo watcher on a real git repository.
#include "orchestrator/pipeline/pipeline.h"

#include <gtest/gtest.h>

#include <thread>

#include "base/json_nlohmann.h"
#include "orchestrator/daemon/repo_watcher.h"
#include "orchestrator/pipeline/commit_tools.h"
#include "orchestrator/pipeline/step_util.h"
#include "tests/orchestrator/store/store_test_util.h"
#include "tests/triage/case/embedded_target.h"
#include "triage/localize/localization_record.h"

namespace trench::orchestrator {
namespace {

using testing::StoreTest;

TEST(PipelineRegistryTest, EveryStepHasAWorkerAndAHandler) {
  std::set<std::string> workers = {"orchestrator"};
  for (const std::string& role : SwarmRoles()) workers.insert(role);
  for (const StepKind& s : Steps()) {
    EXPECT_TRUE(workers.count(s.worker)) << s.kind << ": " << s.worker;
    EXPECT_TRUE(s.handler) << s.kind;
    EXPECT_EQ(FindStep(s.kind)->kind, s.kind);
  }
  EXPECT_EQ(FindStep("no-such-step"), nullptr);
  EXPECT_EQ(KindsOfWorker("minimizer"), std::vector<std::string>{"minimize"});
  EXPECT_EQ(KindsOfWorker("reproducer"), std::vector<std::string>{"reproduce"});
  // Every open state but the ones waiting for people or commits has a step.
  for (BugState s : AllBugStates()) {
    bool has_step = false;
    for (const StepKind& k : Steps()) has_step |= k.state && *k.state == s;
    // (approved has the push step, queued only with review.on_approve
    // "push": PushWanted.)
    const bool waits = s == BugState::kProposed;
    EXPECT_EQ(has_step, IsOpen(s) && !waits) << BugStateName(s);
  }
}

class PipelineTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    store_ = OpenStore(SystemClock::Get());
    queue_ = std::make_unique<JobQueue>(store_.get());
    ctx_.config = &config_;
    ctx_.store = store_.get();
    ctx_.queue = queue_.get();
    ctx_.worker = "test";
  }
  int64_t AddBug(const std::string& sig) {
    orchestrator::NewBug b;
    b.signature = sig;
    b.title = sig;
    return *store_->CreateBug(b, "test", Json::MakeObject());
  }
  // The next `n` jobs leased, one at a time, as "kind[:commit]".
  std::vector<std::string> LeaseOrder(int n) {
    std::vector<std::string> order;
    for (int i = 0; i < n; ++i) {
      StatusOr<std::vector<Job>> jobs = queue_->Lease("w", 1, 60000);
      if (!jobs.ok() || jobs->size() != 1) {
        ADD_FAILURE() << "lease " << i << " of " << n << " gave no job";
        break;
      }
      const Json* c = (*jobs)[0].payload.Find("commit");
      order.push_back((*jobs)[0].kind +
                      (c ? ":" + c->string_value() : std::string()));
    }
    return order;
  }
  std::unique_ptr<Store> store_;
  std::unique_ptr<JobQueue> queue_;
  DaemonConfig config_;
  StepContext ctx_;
};

TEST_F(PipelineTest, QueuesTheStepOfTheStateOnce) {
  ASSERT_TRUE(store_->SetMeta("head.built", "c0").ok());
  const int64_t id = AddBug("a");
  Bug bug = *store_->GetBug(id);
  EXPECT_EQ(*QueueNextStep(ctx_, bug), "reproduce");
  EXPECT_EQ(*QueueNextStep(ctx_, bug), "reproduce");
  EXPECT_EQ(*queue_->Count(JobState::kQueued), 1);  // Deduplicated.
  // Waiting for a human: nothing.
  Json d = Json::MakeObject();
  d["needs_human"] = true;
  ASSERT_TRUE(store_->SetBugDetails(id, d).ok());
  EXPECT_EQ(*QueueNextStep(ctx_, *store_->GetBug(id)), "");
}

// Commits keep landing while a bug is worked on: its next step is leased
// before the builds queued earlier, and builds before the fix checks and
// fuzzing of commits already built.
TEST_F(PipelineTest, ABugsStepGoesBeforeBuildsAndBuildsBeforeCommitChecks) {
  ASSERT_TRUE(store_->SetMeta("head.built", "c0").ok());
  Json commit = Json::MakeObject();
  commit["commit"] = "c0";
  JobOptions check = StepJobOptions();
  check.dedup_key = "check_fixes:c0";
  ASSERT_TRUE(queue_->Enqueue("check_fixes", commit, check).ok());
  ASSERT_TRUE(QueueLandedCommits(ctx_, {"c1", "c2"}).ok());
  const int64_t id = AddBug("a");
  ASSERT_EQ(*QueueNextStep(ctx_, *store_->GetBug(id)), "reproduce");
  EXPECT_EQ(LeaseOrder(4),
            (std::vector<std::string>{"reproduce", "build:c2", "build:c1",
                                      "check_fixes:c0"}));
}

// A push of several commits: their commit_landed events go in landing
// order, their builds newest first (the tip is built, then fuzzed, first).
// Landing the same push again (a daemon that died before the watcher
// recorded it) adds neither events nor jobs.
TEST_F(PipelineTest, APushIsRecordedOldestFirstAndBuiltNewestFirst) {
  const std::vector<std::string> push = {"c1", "c2", "c3"};
  ASSERT_TRUE(QueueLandedCommits(ctx_, push).ok());
  ASSERT_TRUE(QueueLandedCommits(ctx_, push).ok());
  StatusOr<std::vector<CommitEvent>> events =
      store_->ListCommitEvents(std::nullopt, 0, 10);
  ASSERT_TRUE(events.ok());
  std::vector<std::string> landed;
  for (const CommitEvent& e : *events) {
    EXPECT_EQ(e.kind, CommitEventKind::kCommitLanded);
    landed.push_back(e.commit_sha);
  }
  EXPECT_EQ(landed, push);
  EXPECT_EQ(*queue_->Count(JobState::kQueued), 3);
  EXPECT_EQ(LeaseOrder(3),
            (std::vector<std::string>{"build:c3", "build:c2", "build:c1"}));
  // An empty poll queues nothing.
  ASSERT_TRUE(QueueLandedCommits(ctx_, {}).ok());
  EXPECT_EQ(*queue_->Count(JobState::kQueued), 0);
}

// The localized pass goes on hlo-bisect's argv only as a plain pipeline
// pass name: the record is data (a model's or a stranger's edit could put
// an option, a shell word or a path there).
TEST(PipelinePassOfTest, OnlyPlainPipelinePassNames) {
  auto bug_with = [](const std::string& pass) {
    hlo_bisect::LocalizationReport r;
    r.signature.pass = pass;
    Bug b;
    b.details = Json::MakeObject();
    b.details["localization"] = FromJsonDoc(hlo_bisect::ToJson(r));
    return b;
  };
  EXPECT_EQ(PipelinePassOf(bug_with("all-reduce-combiner")),
            std::optional<std::string>("all-reduce-combiner"));
  for (const std::string& bad :
       {std::string("codegen"), std::string("buffer-assignment"),
        std::string("--build-cmd"), std::string("-x"), std::string("a b"),
        std::string("a;rm -rf /"), std::string("../x"), std::string("A"),
        std::string(""), std::string(65, 'a')}) {
    EXPECT_EQ(PipelinePassOf(bug_with(bad)), std::nullopt) << bad;
  }
  Bug none;
  none.details = Json::MakeObject();
  EXPECT_EQ(PipelinePassOf(none), std::nullopt);
}

TEST_F(PipelineTest, ReconcileQueuesEveryOpenBugsStep) {
  ASSERT_TRUE(store_->SetMeta("head.built", "c0").ok());
  const int64_t a = AddBug("a");
  const int64_t b = AddBug("b");
  ASSERT_TRUE(store_
                  ->TransitionBug(b, BugState::kNotReproducible, "t",
                                  Json::MakeObject())
                  .ok());
  ASSERT_TRUE(Reconcile(ctx_).ok());
  StatusOr<std::vector<Job>> jobs = queue_->List(JobState::kQueued, 10);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);  // b is closed (not reproducible).
  EXPECT_EQ((*jobs)[0].kind, "reproduce");
  EXPECT_EQ((*jobs)[0].payload.Find("bug")->int64_value(), a);
  ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_EQ(*queue_->Count(JobState::kQueued), 1);
}

TEST_F(PipelineTest, WatcherReportsLandedCommitsOnce) {
  const std::string dir = dir_ + "/repo";
  auto repo = hlo_bisect::GitRepo::Init(dir);
  ASSERT_TRUE(repo.ok());
  std::string c0 =
      *(*repo)->CommitFiles("", {{"a", "1"}}, "c0", "refs/heads/main");
  auto watcher = RepoWatcher::Create(dir, "main");
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  EXPECT_FALSE(RepoWatcher::Create(dir, "nope").ok());
  // First poll: the head alone, recorded as the base.
  EXPECT_EQ(*(*watcher)->Poll(*store_), std::vector<std::string>{c0});
  EXPECT_EQ(store_->GetMeta("watch.base")->value_or(""), c0);
  ASSERT_TRUE((*watcher)->Commit(*store_, c0).ok());
  EXPECT_TRUE((*watcher)->Poll(*store_)->empty());
  std::string c1 =
      *(*repo)->CommitFiles(c0, {{"a", "2"}}, "c1", "refs/heads/main");
  std::string c2 =
      *(*repo)->CommitFiles(c1, {{"a", "3"}}, "c2", "refs/heads/main");
  EXPECT_EQ(*(*watcher)->Poll(*store_), (std::vector<std::string>{c1, c2}));
  // Not committed (a crash before the jobs were queued): reported again.
  EXPECT_EQ(*(*watcher)->Poll(*store_), (std::vector<std::string>{c1, c2}));
  ASSERT_TRUE((*watcher)->Commit(*store_, c2).ok());
  EXPECT_TRUE((*watcher)->Poll(*store_)->empty());
  // A force-push that drops c2: the new head alone.
  std::string d1 =
      *(*repo)->CommitFiles(c0, {{"a", "4"}}, "d1", "refs/heads/main");
  EXPECT_EQ(*(*watcher)->Poll(*store_), std::vector<std::string>{d1});
  EXPECT_EQ(store_->GetMeta("watch.base")->value_or(""), c0);
}

TEST_F(PipelineTest, MetaKeysOfTheMigrationsAreRefused) {
  EXPECT_EQ(store_->SetMeta("schema_version", "9").code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(store_->GetMeta("nothing")->has_value());
  EXPECT_EQ(store_->SetBugDetails(42, Json::MakeObject()).code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace trench::orchestrator

namespace trench::orchestrator {
namespace {

TEST_F(PipelineTest, AFailedStepIsNotRetriedUntilTheBugChanges) {
  ASSERT_TRUE(store_->SetMeta("head.built", "c0").ok());
  const int64_t id = AddBug("a");
  ASSERT_EQ(*QueueNextStep(ctx_, *store_->GetBug(id)), "reproduce");
  StatusOr<std::vector<Job>> leased = queue_->Lease("w", 1, 60000);
  ASSERT_TRUE(leased.ok() && leased->size() == 1);
  ASSERT_TRUE(queue_->Fail(LeaseOf((*leased)[0]), "no", false).ok());
  EXPECT_EQ(*QueueNextStep(ctx_, *store_->GetBug(id)), "");
  EXPECT_EQ(*queue_->Count(JobState::kQueued), 0);
  // The bug changes (e.g. a human edits it): the step may run again.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(store_->SetBugDetails(id, Json::MakeObject()).ok());
  EXPECT_EQ(*QueueNextStep(ctx_, *store_->GetBug(id)), "reproduce");
}

// Issue 18 item 9: a report filed before any commit was built used to have
// its reproduce job fail (no commit to run on) until it was parked, and
// the bug sat in `new` for good. It waits for the first build instead: no
// job, no attempt used, however often the reconciler runs; the first
// build's reconcile queues it. A finding carries its own commit and goes
// at once.
TEST_F(PipelineTest, AReportBeforeTheFirstBuildWaitsForIt) {
  const int64_t report = AddBug("report");
  for (int tick = 0; tick < 20; ++tick) ASSERT_TRUE(Reconcile(ctx_).ok());
  EXPECT_TRUE(JobsOfBug(*queue_, report, 10)->empty());
  EXPECT_EQ(*queue_->Count(JobState::kParked), 0);
  orchestrator::NewBug finding;
  finding.signature = "finding";
  finding.details["commit"] = "c1";
  const int64_t found = *store_->CreateBug(finding, "test", Json::MakeObject());
  EXPECT_EQ(*QueueNextStep(ctx_, *store_->GetBug(found)), "reproduce");
  // The first build lands (the build step moves head.built).
  ASSERT_TRUE(store_->SetMeta("head.built", "c1").ok());
  ASSERT_TRUE(Reconcile(ctx_).ok());
  auto jobs = JobsOfBug(*queue_, report, 10);
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].kind, "reproduce");
  EXPECT_EQ((*jobs)[0].state, JobState::kQueued);
  EXPECT_EQ((*jobs)[0].attempts, 0);
}

// A parked or failed step of a bug is retryable by a human: its newest job
// is queued again with a fresh budget; nothing else is touched.
TEST_F(PipelineTest, RetryQueuesTheBugsParkedOrFailedStepsAgain) {
  ASSERT_TRUE(store_->SetMeta("head.built", "c0").ok());
  const int64_t id = AddBug("a");
  const int64_t other = AddBug("b");
  EXPECT_TRUE(RetryBugSteps(*queue_, id)->empty());  // Nothing to retry.
  ASSERT_EQ(*QueueNextStep(ctx_, *store_->GetBug(id)), "reproduce");
  ASSERT_EQ(*QueueNextStep(ctx_, *store_->GetBug(other)), "reproduce");
  EXPECT_TRUE(RetryBugSteps(*queue_, id)->empty());  // Queued: running.
  auto leased = queue_->Lease("w", 2, 60000);
  ASSERT_EQ(leased->size(), 2u);
  for (const Job& job : *leased) {
    ASSERT_TRUE(queue_->Fail(LeaseOf(job), "no", false).ok());
  }
  auto retried = RetryBugSteps(*queue_, id);
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  ASSERT_EQ(retried->size(), 1u);
  Job job = *queue_->Get(retried->front());
  EXPECT_EQ(job.state, JobState::kQueued);
  EXPECT_EQ(job.dedup_key, BugJobKey(id, "reproduce"));
  EXPECT_EQ(JobsOfBug(*queue_, other, 10)->front().state, JobState::kFailed);
}

TEST_F(PipelineTest, ContinuousFuzzingQueuesARoundOfTheBuiltHeadWhenIdle) {
  config_.fuzz_continuous = true;
  EXPECT_FALSE(*QueueIdleFuzz(ctx_));  // Nothing built yet.
  const std::string head(40, 'a');
  ASSERT_TRUE(store_->SetMeta("head.built", head).ok());
  ASSERT_TRUE(*QueueIdleFuzz(ctx_));
  EXPECT_FALSE(*QueueIdleFuzz(ctx_));  // Not idle: round 1 waits.
  StatusOr<std::vector<Job>> leased = queue_->Lease("w", 1, 60000);
  ASSERT_TRUE(leased.ok() && leased->size() == 1);
  const Job& one = (*leased)[0];
  EXPECT_EQ(one.kind, "fuzz");
  EXPECT_EQ(one.payload.Find("commit")->string_value(), head);
  EXPECT_EQ(one.payload.Find("round")->int64_value(), 1);
  EXPECT_FALSE(*QueueIdleFuzz(ctx_));  // Not idle: round 1 runs.
  ASSERT_TRUE(queue_->Complete(LeaseOf(one), Json::MakeObject()).ok());
  // Idle again: round 2, a new job (not deduplicated into round 1).
  ASSERT_TRUE(*QueueIdleFuzz(ctx_));
  leased = queue_->Lease("w", 1, 60000);
  ASSERT_TRUE(leased.ok() && leased->size() == 1);
  EXPECT_EQ((*leased)[0].payload.Find("round")->int64_value(), 2);
  EXPECT_EQ(*store_->GetMeta("fuzz.round"), std::optional<std::string>("2"));
  ASSERT_TRUE(queue_->Complete(LeaseOf((*leased)[0]), Json::MakeObject()).ok());
  // Off in the config: never.
  config_.fuzz_continuous = false;
  EXPECT_FALSE(*QueueIdleFuzz(ctx_));
  EXPECT_EQ(*queue_->Count(JobState::kQueued), 0);
}

TEST_F(PipelineTest, TheKnownGoodCommitIsTheConfiguredOneElseTheFirstSeen) {
  EXPECT_EQ(*KnownGoodCommit(ctx_), "");
  ASSERT_TRUE(store_->SetMeta("watch.base", std::string(40, 'b')).ok());
  EXPECT_EQ(*KnownGoodCommit(ctx_), std::string(40, 'b'));
  config_.good_commit = std::string(40, 'c');
  EXPECT_EQ(*KnownGoodCommit(ctx_), std::string(40, 'c'));
}

}  // namespace
}  // namespace trench::orchestrator

namespace trench::orchestrator {
namespace {

// The daemon's mirror with main = c0 (a=1), c1 (a=2), c2 (b=1); returns
// the three commits.
std::vector<std::string> MirrorWithThreeCommits(const DaemonPaths& paths) {
  auto repo = hlo_bisect::GitRepo::Init(paths.mirror);
  EXPECT_TRUE(repo.ok()) << repo.status().ToString();
  if (!repo.ok()) return {"", "", ""};
  const std::string c0 =
      *(*repo)->CommitFiles("", {{"a", "1"}}, "c0", "refs/heads/main");
  const std::string c1 =
      *(*repo)->CommitFiles(c0, {{"a", "2"}}, "c1", "refs/heads/main");
  const std::string c2 =
      *(*repo)->CommitFiles(c1, {{"b", "1"}}, "c2", "refs/heads/main");
  return {c0, c1, c2};
}

// A finding on a commit that predates a bug's fix is that (fixed) bug; on
// a commit holding the fix it is a regression, so FileFinding opens a bug.
TEST_F(PipelineTest, AFindingBeforeTheFixIsTheFixedBugAndAfterItARegression) {
  DaemonPaths paths(dir_ + "/var");
  ctx_.paths = &paths;
  const std::vector<std::string> main = MirrorWithThreeCommits(paths);
  const std::string &c0 = main[0], &fix = main[1], &c2 = main[2];
  auto repo = hlo_bisect::GitRepo::Open(paths.mirror);
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  const std::string side =
      *(*repo)->CommitFiles(c0, {{"c", "1"}}, "side", "refs/heads/side");
  const int64_t id = AddBug("sig:x");
  EXPECT_FALSE(FixedLaterThan(ctx_, "sig:x", c0)->has_value());  // Open.
  ASSERT_TRUE(
      store_
          ->TransitionBug(id, BugState::kReproduced, "test", Json::MakeObject())
          .ok());
  TransitionFields f;
  f.fix_commit = fix;
  ASSERT_TRUE(
      store_->TransitionBug(id, BugState::kFixed, "test", Json::MakeObject(), f)
          .ok());
  for (const std::string& before : {c0, side}) {
    StatusOr<std::optional<Bug>> known = FixedLaterThan(ctx_, "sig:x", before);
    ASSERT_TRUE(known.ok()) << known.status().ToString();
    ASSERT_TRUE(known->has_value());
    EXPECT_EQ((*known)->id, id);
  }
  for (const std::string& holding : {fix, c2}) {
    StatusOr<std::optional<Bug>> known = FixedLaterThan(ctx_, "sig:x", holding);
    ASSERT_TRUE(known.ok()) << known.status().ToString();
    EXPECT_FALSE(known->has_value());
  }
  EXPECT_FALSE(FixedLaterThan(ctx_, "sig:y", c0)->has_value());
  // A commit the mirror does not have is an error, not a guess.
  EXPECT_FALSE(FixedLaterThan(ctx_, "sig:x", std::string(40, 'f')).ok());
}

// Builds finish in any order; the built head only moves forward.
TEST_F(PipelineTest, TheBuiltHeadOnlyMovesForward) {
  DaemonPaths paths(dir_ + "/var");
  ctx_.paths = &paths;
  const std::vector<std::string> main = MirrorWithThreeCommits(paths);
  const std::string &c0 = main[0], &c1 = main[1], &c2 = main[2];
  auto head = [&] { return store_->GetMeta("head.built")->value_or(""); };
  ASSERT_TRUE(AdvanceBuiltHead(ctx_, c0).ok());
  EXPECT_EQ(head(), c0);
  ASSERT_TRUE(AdvanceBuiltHead(ctx_, c2).ok());  // c1's build is slower.
  EXPECT_EQ(head(), c2);
  ASSERT_TRUE(AdvanceBuiltHead(ctx_, c1).ok());
  EXPECT_EQ(head(), c2);
  ASSERT_TRUE(AdvanceBuiltHead(ctx_, c2).ok());
  EXPECT_EQ(head(), c2);
}

// hlo-diff verdicts: `fail` of `runs` fail with coarse signature `sig`.
std::vector<hlo_diff::Verdict> Verdicts(const std::string& sig, int fail,
                                        int runs) {
  std::vector<hlo_diff::Verdict> out;
  for (int i = 0; i < runs; ++i) {
    hlo_diff::Verdict v;
    v.status = i < fail ? hlo_diff::VerdictStatus::kMismatch
                        : hlo_diff::VerdictStatus::kPass;
    v.signature.status = v.status;
    if (i < fail) v.signature.sig = sig;
    out.push_back(std::move(v));
  }
  return out;
}

// The error maps of a reproduction stay with its runs; the bug's details
// (read with every bug list page) keep the verdict without them.
TEST_F(PipelineTest, ErrorMapsStayWithTheRunsNotInTheBugsDetails) {
  DaemonPaths paths(dir_ + "/var");
  ctx_.paths = &paths;
  const std::vector<std::string> main = MirrorWithThreeCommits(paths);
  const std::string case_sha(64, 'e');
  ASSERT_TRUE(store_->PutCase(case_sha, "", Json::MakeObject()).ok());
  NewBug b;
  b.signature = "sig:maps";
  b.details["source"] = "fuzz";
  const int64_t id = *store_->CreateBug(b, "test", Json::MakeObject());
  std::vector<hlo_diff::Verdict> verdicts = Verdicts("maps", 2, 2);
  for (hlo_diff::Verdict& v : verdicts) {
    v.case_sha = case_sha;
    v.error_maps.push_back(hlo_diff::ErrorGrid({1, 9}, {1, 1}, {1, 1}, 1, 2));
  }
  ASSERT_TRUE(JudgeReproduction(ctx_, *store_->GetBug(id), case_sha, main[0],
                                verdicts, Json::MakeObject(), {})
                  .ok());
  const Bug bug = *store_->GetBug(id);
  const Json* verdict = bug.details.Find("reproduction")->Find("verdict");
  ASSERT_NE(verdict, nullptr);
  EXPECT_EQ(verdict->Find("status")->string_value(), "mismatch");
  EXPECT_EQ(verdict->Find("error_maps"), nullptr);
  auto runs = store_->ListRunsForCase(case_sha);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  for (const auto& r : *runs) {
    ASSERT_NE(r.verdict.Find("error_maps"), nullptr) << r.verdict.Dump();
    EXPECT_EQ(r.verdict.Find("error_maps")->size(), 1u);
  }
}

// A reproduced report that fails like a known bug is that bug: the open
// fuzz finding one of whose coarse signatures it has, the report
// reproduced before it, or a fixed bug whose fix the commit predates. A
// fuzz finding is never merged this coarsely, nor a report that passes.
TEST_F(PipelineTest, AReproducedReportOfAKnownBugBecomesItsDuplicate) {
  DaemonPaths paths(dir_ + "/var");
  ctx_.paths = &paths;
  const std::vector<std::string> main = MirrorWithThreeCommits(paths);
  const std::string &c0 = main[0], &fix = main[1];
  const std::string case_sha(64, 'a');
  ASSERT_TRUE(store_->PutCase(case_sha, "", Json::MakeObject()).ok());
  auto bug_from = [&](const std::string& source, const std::string& sig,
                      const std::vector<std::string>& coarse) {
    NewBug b;
    b.signature = sig;
    b.title = source;
    b.details["source"] = source;
    if (!coarse.empty()) {
      Json list = Json::MakeArray();
      for (const std::string& c : coarse) list.push_back(Json(c));
      b.details["finding"] = Json::MakeObject();
      b.details["finding"]["coarse_signatures"] = std::move(list);
    }
    return *store_->CreateBug(b, "test", Json::MakeObject());
  };
  auto judge = [&](int64_t id, const std::string& sig, int fail,
                   const std::string& commit) {
    StatusOr<Json> e =
        JudgeReproduction(ctx_, *store_->GetBug(id), case_sha, commit,
                          Verdicts(sig, fail, 3), Json::MakeObject(), {});
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return *store_->GetBug(id);
  };
  const int64_t finding = bug_from("fuzz", "sig:refined", {"c9", "c1"});
  // A report failing with a coarse signature of the finding.
  const int64_t report = bug_from("api", "report:1", {});
  Bug b = judge(report, "c1", 3, c0);
  EXPECT_EQ(b.state, BugState::kDuplicate);
  EXPECT_EQ(b.duplicate_of, finding);
  StatusOr<std::vector<Event>> events = store_->ListEvents(report, 0, 10);
  ASSERT_TRUE(events.ok());
  const Event& moved = events->back();
  EXPECT_EQ(moved.to, BugState::kDuplicate);
  EXPECT_EQ(moved.evidence.Find("event")->string_value(), "reproduced");
  EXPECT_EQ(moved.evidence.Find("duplicate_of")->int64_value(), finding);
  EXPECT_EQ(moved.evidence.Find("failures")->int64_value(), 3);
  EXPECT_EQ(store_->ListRunsForCase(case_sha)->size(), 3u);
  // A report of something new is reproduced; a later flaky report of the
  // same failure is its duplicate (the reproduction's signature).
  const int64_t first = bug_from("api", "report:2", {});
  EXPECT_EQ(judge(first, "c2", 3, c0).state, BugState::kReproduced);
  const int64_t second = bug_from("api", "report:3", {});
  b = judge(second, "c2", 1, c0);
  EXPECT_EQ(b.state, BugState::kDuplicate);
  EXPECT_EQ(b.duplicate_of, first);
  EXPECT_FALSE(b.flaky_rate.has_value());
  // A fuzz finding with a known coarse signature stays its own bug.
  const int64_t other = bug_from("fuzz", "sig:other", {"c2"});
  EXPECT_EQ(judge(other, "c2", 3, c0).state, BugState::kReproduced);
  // A report that does not fail is not reproducible, whatever else exists.
  const int64_t passing = bug_from("api", "report:4", {});
  EXPECT_EQ(judge(passing, "c1", 0, c0).state, BugState::kNotReproducible);
  // A fixed bug: the same failure before its fix is that bug, after it a
  // regression (a new bug).
  const int64_t fixed = bug_from("fuzz", "sig:c3", {});
  ASSERT_TRUE(store_
                  ->TransitionBug(fixed, BugState::kReproduced, "test",
                                  Json::MakeObject())
                  .ok());
  TransitionFields f;
  f.fix_commit = fix;
  ASSERT_TRUE(
      store_->TransitionBug(fixed, BugState::kFixed, "test", Json(), f).ok());
  const int64_t old_report = bug_from("api", "report:5", {});
  b = judge(old_report, "c3", 3, c0);
  EXPECT_EQ(b.state, BugState::kDuplicate);
  EXPECT_EQ(b.duplicate_of, fixed);
  EXPECT_TRUE(store_->ListEvents(old_report, 0, 10)
                  ->back()
                  .evidence.Find("fixed_later")
                  ->bool_value());
  const int64_t regression = bug_from("api", "report:6", {});
  EXPECT_EQ(judge(regression, "c3", 3, fix).state, BugState::kReproduced);
  EXPECT_FALSE(JudgeReproduction(ctx_, *store_->GetBug(regression), case_sha,
                                 c0, {}, Json::MakeObject(), {})
                   .ok());
}

TEST(ChangedAreaTest, PassesAndEmittedOpsOfADiff) {
  const hlo_diff::TargetDescription target =
      hlo_diff::testing::EmbeddedTarget();
  const std::string diff =
      "diff --git a/compiler/passes/cse.cc b/compiler/passes/cse.cc\n"
      "--- a/compiler/passes/cse.cc\n+++ b/compiler/passes/cse.cc\n"
      "@@ -1 +1 @@\n-a\n+b\n"
      "+++ b/compiler/passes/algsimp_arith.cc\n"
      "+++ b/compiler/passes/algsimp_shape.cc\n"
      "+++ b/compiler/passes/literal_folder.cc\n"
      "+++ b/compiler/codegen/emit_reduce.cc\n"
      "+++ b/compiler/codegen/emit_reduce_window.cc\n"
      "+++ b/compiler/codegen/emit_pad.cc\n"
      "+++ b/compiler/codegen/kernel_builder.cc\n"
      "+++ b/tpu/ISA.md\n";
  ChangedArea area = ChangedAreaOf(diff, target);
  // literal_folder* is the constant folder's evaluator (pass_registry.def).
  EXPECT_EQ(area.passes,
            (std::vector<std::string>{"cse", "algsimp", "constant-folding"}));
  EXPECT_EQ(area.ops,
            (std::vector<std::string>{"reduce", "reduce-window", "pad"}));
  // The streamed paths of an op aim at it too; streaming.cc names none.
  ChangedArea streamed = ChangedAreaOf(
      "+++ b/compiler/codegen/stream_sort.cc\n"
      "+++ b/compiler/codegen/stream_gather_rows.cc\n"
      "+++ b/compiler/codegen/streaming.cc\n",
      target);
  EXPECT_EQ(streamed.ops, (std::vector<std::string>{"sort", "gather"}));
  EXPECT_TRUE(ChangedAreaOf("", target).passes.empty());
}

}  // namespace
}  // namespace trench::orchestrator
