#include "orchestrator/store/job_queue.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator {
namespace {

using ::trench::orchestrator::testing::Ack;
using ::trench::orchestrator::testing::RunChildAndKill;

class JobQueueTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    store_ = OpenStore(&clock_);
    ASSERT_NE(store_, nullptr);
    queue_ = std::make_unique<JobQueue>(store_.get());
  }
  int64_t Enqueue(const std::string& kind, const JobOptions& options = {}) {
    auto r = queue_->Enqueue(kind, Json::Object{{"k", Json(kind)}}, options);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->id : -1;
  }
  JobState StateOf(int64_t id) { return queue_->Get(id)->state; }
  // A daemon's life in a child process: it opens the store, takes back its
  // dead incarnation's leases, leases one job (of `kinds`) and is SIGKILLed
  // inside it. Returns whether it got that far.
  bool StartLeaseAndDie(const JobQueueOptions& options,
                        const std::vector<std::string>& kinds) {
    return RunChildAndKill(
               [&](int ack) {
                 StoreOptions so;
                 so.clock = &clock_;
                 auto store = Store::Open(path_, so);
                 if (!store.ok()) _exit(2);
                 JobQueue queue(store->get(), options);
                 if (!queue.RequeueOwner("daemon").ok()) _exit(2);
                 auto jobs = queue.Lease("daemon", 1, 3'600'000, kinds);
                 if (!jobs.ok() || jobs->size() != 1) _exit(2);
                 Ack(ack);
                 pause();  // Killed inside the step.
               },
               1) == 1;
  }

  std::unique_ptr<Store> store_;
  std::unique_ptr<JobQueue> queue_;
};

TEST_F(JobQueueTest, LeasesByPriorityThenAgeAndCompletes) {
  int64_t a = Enqueue("fuzz");
  int64_t b = Enqueue("build", {.priority = 5});
  int64_t c = Enqueue("fuzz");
  auto jobs = queue_->Lease("w1", 2, 1000);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, b);
  EXPECT_EQ((*jobs)[1].id, a);
  EXPECT_EQ((*jobs)[0].state, JobState::kLeased);
  EXPECT_EQ((*jobs)[0].lease_owner, "w1");
  EXPECT_EQ((*jobs)[0].lease_expires_ms, clock_.NowMillis() + 1000);
  EXPECT_EQ((*jobs)[0].attempts, 1);
  EXPECT_EQ((*jobs)[1].payload.Dump(), R"({"k":"fuzz"})");
  ASSERT_TRUE(
      queue_->Complete(LeaseOf((*jobs)[0]), Json::Object{{"ok", true}}).ok());
  auto done = queue_->Get(b);
  EXPECT_EQ(done->state, JobState::kDone);
  EXPECT_EQ(done->result.Dump(), R"({"ok":true})");
  EXPECT_FALSE(done->lease_owner.has_value());
  auto rest = queue_->Lease("w2", 5, 1000);
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].id, c);
  EXPECT_TRUE(queue_->Lease("w3", 5, 1000)->empty());
  EXPECT_EQ(*queue_->Count(JobState::kLeased), 2);
}

TEST_F(JobQueueTest, KindsFilterAndDelay) {
  int64_t later = Enqueue("build", {.delay_ms = 500});
  int64_t fuzz = Enqueue("fuzz");
  EXPECT_TRUE(queue_->Lease("w", 5, 100, {"build"})->empty());
  auto jobs = queue_->Lease("w", 5, 100, {"fuzz", "reduce"});
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].id, fuzz);
  clock_.Advance(500);
  jobs = queue_->Lease("w", 5, 100, {"build"});
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].id, later);
}

TEST_F(JobQueueTest, DedupKeyAllowsOneLiveJob) {
  auto first = queue_->Enqueue("build", Json("c1"), {.dedup_key = "build:c1"});
  auto again = queue_->Enqueue("build", Json("c1"), {.dedup_key = "build:c1"});
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_TRUE(first->created);
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->id, first->id);
  auto jobs = queue_->Lease("w", 1, 100);
  again = queue_->Enqueue("build", Json("c1"), {.dedup_key = "build:c1"});
  EXPECT_EQ(again->id, first->id);  // Still live while leased.
  ASSERT_TRUE(queue_->Complete(LeaseOf((*jobs)[0]), Json()).ok());
  auto next = queue_->Enqueue("build", Json("c1"), {.dedup_key = "build:c1"});
  EXPECT_TRUE(next->created);  // The done one is not live.
  EXPECT_NE(next->id, first->id);
  // The database itself refuses a second live row with the key.
  Status raw = store_->db()->Exec(
      "INSERT INTO jobs (kind, payload, state, dedup_key, max_attempts, "
      "not_before_ms, created_ms, updated_ms) VALUES ('build', 'null', "
      "'queued', 'build:c1', 1, 0, 0, 0)");
  EXPECT_EQ(raw.code(), StatusCode::kFailedPrecondition) << raw.ToString();
}

TEST_F(JobQueueTest, FailRetriesWithBackoffThenParks) {
  int64_t id = Enqueue("reduce", {.max_attempts = 2});
  auto jobs = queue_->Lease("w", 1, 100);
  auto state = queue_->Fail(LeaseOf((*jobs)[0]), "timeout", true);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(*state, JobState::kQueued);
  EXPECT_EQ(queue_->Get(id)->last_error, "timeout");
  EXPECT_TRUE(queue_->Lease("w", 1, 100)->empty());  // Backing off 1 s.
  clock_.Advance(1000);
  jobs = queue_->Lease("w", 1, 100);
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].attempts, 2);
  EXPECT_EQ(*queue_->Fail(LeaseOf((*jobs)[0]), "timeout again", true),
            JobState::kParked);
  clock_.Advance(1'000'000);
  EXPECT_TRUE(queue_->Lease("w", 1, 100)->empty());
  ASSERT_TRUE(queue_->Unpark(id).ok());
  jobs = queue_->Lease("w", 1, 100);
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].attempts, 1);
  EXPECT_EQ(*queue_->Fail(LeaseOf((*jobs)[0]), "bad input", false),
            JobState::kFailed);
  EXPECT_EQ(queue_->Unpark(Enqueue("x")).code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(JobQueueTest, ExpiredLeaseIsReleasedAndTheOldHolderFenced) {
  int64_t id = Enqueue("fuzz");
  auto first = queue_->Lease("w1", 1, 100);
  JobLease old = LeaseOf((*first)[0]);
  clock_.Advance(50);
  ASSERT_TRUE(queue_->Heartbeat(old, 100).ok());  // Now expires at +150.
  clock_.Advance(99);
  EXPECT_TRUE(queue_->Lease("w2", 1, 100)->empty());
  clock_.Advance(1);
  auto second = queue_->Lease("w2", 1, 100);
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ((*second)[0].id, id);
  EXPECT_EQ((*second)[0].attempts, 2);
  Status late = queue_->Complete(old, Json("stale"));
  EXPECT_EQ(late.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(late.message(),
            "job 1 is not leased by w1 at attempt 1 (it is leased by w2 at "
            "attempt 2)");
  EXPECT_FALSE(queue_->Heartbeat(old, 100).ok());
  EXPECT_FALSE(queue_->Release(old).ok());
  ASSERT_TRUE(queue_->Complete(LeaseOf((*second)[0]), Json("fresh")).ok());
  EXPECT_EQ(queue_->Get(id)->result.Dump(), R"("fresh")");
}

// A lost lease is a crash, not a failure: the job is queued again with its
// failure budget whole, and the old attempt stays counted as the fence.
TEST_F(JobQueueTest, ExpiryIsACrashNotAFailure) {
  int64_t id = Enqueue("crashy", {.max_attempts = 1});
  ASSERT_EQ(queue_->Lease("w", 1, 10)->size(), 1u);
  clock_.Advance(10);
  EXPECT_EQ(*queue_->RequeueExpired(), 1);
  auto job = queue_->Get(id);
  EXPECT_EQ(job->state, JobState::kQueued);
  EXPECT_EQ(job->last_error, "lease of w at attempt 1 expired");
  EXPECT_EQ(job->crashes, 1);
  EXPECT_EQ(FailuresOf(*job), 0);
  auto again = queue_->Lease("w", 1, 10);
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].attempts, 2);
  // Its one real failure parks it, and says so.
  EXPECT_EQ(*queue_->Fail(LeaseOf((*again)[0]), "boom", true),
            JobState::kParked);
  EXPECT_EQ(ParkedReason(*queue_->Get(id)), "failed 1 of 1 attempts: boom");
}

TEST_F(JobQueueTest, ReleaseGivesTheAttemptBack) {
  int64_t id = Enqueue("fuzz", {.max_attempts = 1});
  auto jobs = queue_->Lease("daemon", 1, 1000);
  ASSERT_TRUE(queue_->Release(LeaseOf((*jobs)[0])).ok());
  auto job = queue_->Get(id);
  EXPECT_EQ(job->state, JobState::kQueued);
  EXPECT_EQ(job->attempts, 0);
  EXPECT_EQ(queue_->Lease("daemon", 1, 1000)->size(), 1u);
}

TEST_F(JobQueueTest, BadArgumentsAndMalformedPayload) {
  EXPECT_EQ(queue_->Enqueue("", Json()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(queue_->Enqueue("k", Json(), {.max_attempts = 0}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(queue_->Lease("", 1, 1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(queue_->Lease("w", 0, 1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(queue_->Get(5).status().code(), StatusCode::kNotFound);
  int64_t id = Enqueue("fuzz");
  ASSERT_TRUE(store_->db()->Exec("UPDATE jobs SET payload = 'nope'").ok());
  auto job = queue_->Get(id);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), StatusCode::kIoError);
  EXPECT_NE(job.status().message().find("jobs.payload of job 1 is not valid "
                                        "JSON"),
            std::string::npos)
      << job.status().message();
  // A lease skips the bad row and fails that job, so the queue is not
  // wedged; the good job behind it is leased.
  int64_t good = Enqueue("fuzz");
  auto jobs = queue_->Lease("w", 2, 100);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].id, good);
  EXPECT_EQ(*queue_->Count(JobState::kFailed), 1);
  EXPECT_EQ(*queue_->Count(JobState::kQueued), 0);
  EXPECT_FALSE(store_->db()->InTransaction());
  ASSERT_TRUE(
      store_->db()->Exec("UPDATE jobs SET payload = '{}' WHERE id = 1").ok());
  auto failed = queue_->Get(id);
  EXPECT_EQ(failed->state, JobState::kFailed);
  EXPECT_NE(failed->last_error.find("not valid JSON"), std::string::npos)
      << failed->last_error;
}

// Two connections (threads) drain one queue: every job is run exactly once.
TEST_F(JobQueueTest, TwoConnectionsNeverLeaseTheSameJob) {
  constexpr int kJobs = 150;
  for (int i = 0; i < kJobs; ++i) Enqueue("fuzz");
  std::vector<std::vector<int64_t>> ran(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      auto store = OpenStore(&clock_);
      JobQueue queue(store.get());
      const std::string owner = "w" + std::to_string(t);
      while (true) {
        auto jobs = queue.Lease(owner, 3, 60'000);
        if (!jobs.ok()) {
          errors[t] = jobs.status().ToString();
          return;
        }
        if (jobs->empty()) return;
        for (const Job& job : *jobs) {
          ran[t].push_back(job.id);
          Status s = queue.Complete(LeaseOf(job), Json(owner));
          if (!s.ok()) errors[t] = s.ToString();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  std::set<int64_t> all(ran[0].begin(), ran[0].end());
  all.insert(ran[1].begin(), ran[1].end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(ran[0].size() + ran[1].size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(*queue_->Count(JobState::kDone), kJobs);
  auto done = queue_->List(JobState::kDone, kJobs);
  ASSERT_TRUE(done.ok());
  for (const Job& job : *done) {
    EXPECT_EQ(job.attempts, 1);
  }
}

// The crash-recovery path: a daemon leases jobs and is SIGKILLed; the
// restarted daemon takes its leases back and re-runs those jobs.
TEST_F(JobQueueTest, JobsLeasedByAKilledDaemonAreRerun) {
  for (int i = 0; i < 4; ++i) Enqueue("step");
  int acks = RunChildAndKill(
      [&](int ack) {
        StoreOptions options;
        options.clock = &clock_;
        auto store = Store::Open(path_, options);
        if (!store.ok()) _exit(2);
        JobQueue queue(store->get());
        auto jobs = queue.Lease("daemon", 3, 60'000);
        if (!jobs.ok() || jobs->size() != 3) _exit(2);
        if (!queue.Complete(LeaseOf((*jobs)[0]), Json("done")).ok()) _exit(2);
        Ack(ack);
        pause();  // Killed while holding two leases.
      },
      1);
  ASSERT_EQ(acks, 1);
  EXPECT_EQ(*queue_->Count(JobState::kDone), 1);
  EXPECT_EQ(*queue_->Count(JobState::kLeased), 2);
  // Before expiry another worker only gets the never-leased job.
  EXPECT_EQ(queue_->Lease("other", 5, 1000)->size(), 1u);
  // The restarted daemon voids its dead incarnation's leases at start-up.
  EXPECT_EQ(*queue_->RequeueOwner("daemon"), 2);
  auto rerun = queue_->Lease("daemon", 5, 1000);
  ASSERT_EQ(rerun->size(), 2u);
  for (const Job& job : *rerun) {
    EXPECT_EQ(job.attempts, 2);
    EXPECT_EQ(job.last_error, "lease of daemon at attempt 1 taken back");
    EXPECT_TRUE(queue_->Complete(LeaseOf(job), Json("rerun")).ok());
  }
  EXPECT_EQ(*queue_->Count(JobState::kDone), 3);
}

// The same crash, recovered only by lease expiry (e.g. a worker host that
// never comes back), with the kill landing at an arbitrary point of a
// lease/complete loop.
TEST_F(JobQueueTest, KillAnywhereThenExpiryLosesAndDuplicatesNothing) {
  constexpr int kJobs = 60;
  for (int i = 0; i < kJobs; ++i) Enqueue("step");
  int acks = RunChildAndKill(
      [&](int ack) {
        StoreOptions options;
        options.clock = &clock_;
        auto store = Store::Open(path_, options);
        if (!store.ok()) _exit(2);
        JobQueue queue(store->get());
        while (true) {
          auto jobs = queue.Lease("worker", 2, 5000);
          if (!jobs.ok()) _exit(2);
          for (const Job& job : *jobs) {
            if (!queue.Complete(LeaseOf(job), Json("child")).ok()) _exit(2);
            Ack(ack);
          }
        }
      },
      25);
  ASSERT_EQ(acks, 25);
  int64_t done = *queue_->Count(JobState::kDone);
  EXPECT_GE(done, 25);
  clock_.Advance(5000);
  int64_t rerun = 0;
  while (true) {
    auto jobs = queue_->Lease("restarted", 10, 5000);
    ASSERT_TRUE(jobs.ok());
    if (jobs->empty()) break;
    for (const Job& job : *jobs) {
      ASSERT_TRUE(queue_->Complete(LeaseOf(job), Json("parent")).ok());
      ++rerun;
    }
  }
  EXPECT_EQ(done + rerun, kJobs);
  EXPECT_EQ(*queue_->Count(JobState::kDone), kJobs);
  EXPECT_EQ(*queue_->Count(JobState::kLeased), 0);
}

// Issue 18 item 8, played: the daemon SIGKILLed 25 times in a row while it
// runs a step (each restart takes the dead incarnation's lease back, then
// leases the step again) must not park the step: kills are not failures.
// The step keeps its whole failure budget afterwards.
TEST_F(JobQueueTest, TwentyFiveDaemonKillsDoNotParkTheStep) {
  const int64_t id = Enqueue("stress", {.max_attempts = 8});
  for (int kill = 0; kill < 25; ++kill) {
    ASSERT_TRUE(StartLeaseAndDie({}, {})) << "kill " << kill;
    ASSERT_EQ(StateOf(id), JobState::kLeased);
  }
  EXPECT_EQ(*queue_->RequeueOwner("daemon"), 1);
  Job job = *queue_->Get(id);
  EXPECT_EQ(job.state, JobState::kQueued);
  EXPECT_EQ(job.attempts, 25);
  EXPECT_EQ(job.crashes, 25);
  EXPECT_EQ(FailuresOf(job), 0);
  // Seven real failures are retried; the eighth parks it.
  for (int failure = 1; failure <= 8; ++failure) {
    clock_.Advance(10'000'000);
    auto jobs = queue_->Lease("daemon", 1, 1000);
    ASSERT_EQ(jobs->size(), 1u) << "failure " << failure;
    EXPECT_EQ(*queue_->Fail(LeaseOf((*jobs)[0]), "step failed", true),
              failure < 8 ? JobState::kQueued : JobState::kParked);
  }
  EXPECT_EQ(ParkedReason(*queue_->Get(id)),
            "failed 8 of 8 attempts: step failed");
}

// A job that kills its daemon each time is still bounded: after
// max_crashes lost leases it is parked as a crash loop, with a reason that
// says so, while the other jobs run on; a human's Unpark starts it afresh.
TEST_F(JobQueueTest, ACrashLoopIsParkedAndSaysSo) {
  const JobQueueOptions options{.max_crashes = 3};
  JobQueue queue(store_.get(), options);
  const int64_t crashy = Enqueue("crashy", {.max_attempts = 8});
  for (int start = 0; start < 3; ++start) {
    ASSERT_TRUE(StartLeaseAndDie(options, {"crashy"})) << "start " << start;
  }
  const int64_t other = Enqueue("fine");
  // The fourth start takes the third lost lease back: a crash loop.
  EXPECT_EQ(*queue.RequeueOwner("daemon"), 1);
  Job job = *queue.Get(crashy);
  EXPECT_EQ(job.state, JobState::kParked);
  EXPECT_EQ(job.crashes, 3);
  EXPECT_EQ(job.last_error,
            "crash loop: 3 leases lost, the last: lease of daemon at attempt "
            "3 taken back");
  EXPECT_EQ(ParkedReason(job), job.last_error);
  auto next = queue.Lease("daemon", 5, 1000);
  ASSERT_EQ(next->size(), 1u);
  EXPECT_EQ((*next)[0].id, other);
  ASSERT_TRUE(queue.Unpark(crashy).ok());
  job = *queue.Get(crashy);
  EXPECT_EQ(job.state, JobState::kQueued);
  EXPECT_EQ(job.attempts, 0);
  EXPECT_EQ(job.crashes, 0);
}

TEST_F(JobQueueTest, ListsTheJobsOfAKeyPrefixNewestFirst) {
  const int64_t a = Enqueue("reproduce", {.dedup_key = "bug:1:reproduce"});
  Enqueue("reproduce", {.dedup_key = "bug:12:reproduce"});
  const int64_t b = Enqueue("draft", {.dedup_key = "bug:1:draft"});
  Enqueue("build");
  auto jobs = queue_->ListByKeyPrefix("bug:1:", 10);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, b);
  EXPECT_EQ((*jobs)[1].id, a);
  EXPECT_EQ(queue_->ListByKeyPrefix("bug:1:", 1)->size(), 1u);
  EXPECT_TRUE(queue_->ListByKeyPrefix("bug:3:", 10)->empty());
}

}  // namespace
}  // namespace trench::orchestrator
