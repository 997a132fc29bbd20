// JobQueue::Find (the jobs listing of the API and `trench jobs`), the
// shown state names, and UnparkOnce (a retry under an Idempotency-Key).
#include <gtest/gtest.h>

#include "orchestrator/store/job_queue.h"
#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator {
namespace {

class JobQueueFindTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    store_ = OpenStore(&clock_);
    ASSERT_NE(store_, nullptr);
    queue_ = std::make_unique<JobQueue>(store_.get());
  }
  int64_t Enqueue(const std::string& kind, const std::string& key = "",
                  int max_attempts = 3) {
    JobOptions o;
    o.dedup_key = key;
    o.max_attempts = max_attempts;
    auto r = queue_->Enqueue(kind, Json::MakeObject(), o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->id : -1;
  }
  // Leases the one ready job of `kind` and fails it for good.
  void FailFinally(const std::string& kind) {
    auto jobs = queue_->Lease("w", 1, 60'000, {kind});
    ASSERT_TRUE(jobs.ok() && jobs->size() == 1u);
    ASSERT_TRUE(queue_->Fail(LeaseOf(jobs->front()), "boom", false).ok());
  }
  std::vector<int64_t> Ids(const JobFilter& f) {
    auto jobs = queue_->Find(f);
    EXPECT_TRUE(jobs.ok()) << jobs.status().ToString();
    std::vector<int64_t> ids;
    if (!jobs.ok()) return ids;
    for (const Job& j : *jobs) ids.push_back(j.id);
    return ids;
  }

  std::unique_ptr<Store> store_;
  std::unique_ptr<JobQueue> queue_;
};

TEST_F(JobQueueFindTest, ShownNamesCallALeasedJobRunning) {
  EXPECT_EQ(JobStateShownName(JobState::kLeased), "running");
  EXPECT_EQ(JobStateShownName(JobState::kParked), "parked");
  EXPECT_EQ(JobStateShownNames(), "queued, running, done, failed, parked");
  EXPECT_EQ(*ParseJobStateShownName("running"), JobState::kLeased);
  auto bad = ParseJobStateShownName("leased");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "unknown job state 'leased' (valid: queued, running, done, "
            "failed, parked)");
}

TEST_F(JobQueueFindTest, FiltersByStateKindKeyPrefixAndPages) {
  const int64_t a = Enqueue("reproduce", "bug:1:reproduce");
  const int64_t b = Enqueue("localize", "bug:1:localize");
  const int64_t c = Enqueue("reproduce", "bug:12:reproduce");
  const int64_t d = Enqueue("scan");
  FailFinally("localize");                                // b.
  auto leased = queue_->Lease("w", 1, 60'000, {"scan"});  // d.
  ASSERT_TRUE(leased.ok() && leased->size() == 1u);

  EXPECT_EQ(Ids({}), (std::vector<int64_t>{d, c, b, a}));  // Newest first.
  JobFilter f;
  f.state = JobState::kFailed;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b}));
  f.state = JobState::kLeased;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{d}));
  f = {};
  f.kind = "reproduce";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{c, a}));
  f = {};
  f.key_prefix = "bug:1:";  // Not bug 12's.
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b, a}));
  f = {};
  f.limit = 2;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{d, c}));
  f.before_id = c;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b, a}));
  f.limit = 0;
  EXPECT_EQ(queue_->Find(f).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(JobQueueFindTest, UnparkOnceReplaysTheSameKeyAndRefusesAnother) {
  const int64_t a = Enqueue("reproduce");
  const int64_t b = Enqueue("localize");
  FailFinally("reproduce");
  FailFinally("localize");
  auto first = queue_->UnparkOnce(a, "key-1", 60'000);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(*first);
  EXPECT_EQ(queue_->Get(a)->state, JobState::kQueued);
  // It runs and fails again: the same key must not queue it a second time.
  FailFinally("reproduce");
  auto again = queue_->UnparkOnce(a, "key-1", 60'000);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(*again);
  EXPECT_EQ(queue_->Get(a)->state, JobState::kFailed);
  auto other = queue_->UnparkOnce(b, "key-1", 60'000);
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(other.status().message().find("already used for job " +
                                          std::to_string(a)),
            std::string::npos)
      << other.status().message();
  EXPECT_EQ(queue_->Get(b)->state, JobState::kFailed);
  // After the retention, the key is free again.
  clock_.Advance(61'000);
  auto later = queue_->UnparkOnce(b, "key-1", 60'000);
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  EXPECT_FALSE(*later);
  EXPECT_EQ(queue_->Get(b)->state, JobState::kQueued);
}

TEST_F(JobQueueFindTest, UnparkRefusesALiveJobNamingItsState) {
  const int64_t a = Enqueue("reproduce");
  Status s = queue_->Unpark(a);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("job " + std::to_string(a) +
                             " is queued, not parked or failed"),
            std::string::npos)
      << s.message();
  ASSERT_TRUE(queue_->Lease("w", 1, 60'000).ok());
  EXPECT_NE(queue_->Unpark(a).message().find("is running"), std::string::npos);
}

}  // namespace
}  // namespace trench::orchestrator
