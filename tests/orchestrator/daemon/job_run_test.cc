// A daemon worker's run of one leased job (orchestrator/daemon/job_run.h):
// the JSON log lines of the run carry the job's fields, the steps' own
// plain spdlog lines included, and the queue is settled as the result says.
#include "orchestrator/daemon/job_run.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <sstream>
#include <vector>

#include "orchestrator/daemon/logging.h"
#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator {
namespace {

class JobRunTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    store_ = OpenStore(&clock_);
    ASSERT_NE(store_, nullptr);
    paths_ = std::make_unique<DaemonPaths>(dir_ + "/var");
    ctx_.store = store_.get();
    ctx_.paths = paths_.get();
    ASSERT_TRUE(SetUpLogging("json", "info", &out_).ok());
  }
  void TearDown() override {
    ASSERT_TRUE(SetUpLogging("human", "info").ok());
    StoreTest::TearDown();
  }

  // Queues a job of `kind` with `payload` and leases it.
  Job Leased(JobQueue& q, const std::string& kind, const char* payload,
             int max_attempts = 3) {
    JobOptions o;
    o.max_attempts = max_attempts;
    EXPECT_TRUE(q.Enqueue(kind, *ParseJson(payload), o).ok());
    StatusOr<std::vector<Job>> jobs = q.Lease("daemon", 1, 60'000);
    EXPECT_TRUE(jobs.ok() && jobs->size() == 1);
    return jobs->front();
  }

  std::vector<Json> Lines() {
    std::vector<Json> lines;
    std::istringstream in(out_.str());
    for (std::string l; std::getline(in, l);) {
      StatusOr<Json> j = ParseJson(l);
      EXPECT_TRUE(j.ok()) << l;
      if (j.ok()) lines.push_back(*j);
    }
    out_.str("");
    return lines;
  }

  static int64_t Int(const Json& line, const char* key) {
    const Json* v = line.Find(key);
    if (v == nullptr) return -1;
    StatusOr<int64_t> n = v->GetInt64();
    return n.ok() ? *n : -1;
  }

  std::unique_ptr<Store> store_;
  std::unique_ptr<DaemonPaths> paths_;
  StepContext ctx_;
  std::ostringstream out_;
  std::atomic<bool> stopping_{false};
};

TEST_F(JobRunTest, LinesOfARunCarryTheJobsFields) {
  JobQueue q(store_.get());
  const Job job = Leased(q, "reproduce", R"({"bug": 12})");
  const StepHandler step = [](StepContext&, const Job&) -> StatusOr<Json> {
    spdlog::info("reproduced: 3/3 runs fail");
    return *ParseJson(R"({"ok": true})");
  };
  ASSERT_TRUE(RunLeasedJob(ctx_, q, job, step, "reproducer#0", stopping_).ok());
  std::vector<Json> lines = Lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].Find("msg")->string_value(), "job started");
  EXPECT_EQ(lines[1].Find("msg")->string_value(), "reproduced: 3/3 runs fail");
  EXPECT_EQ(lines[2].Find("msg")->string_value(), "job done");
  for (const Json& l : lines) {
    EXPECT_EQ(Int(l, "job"), job.id) << l.Dump();
    EXPECT_EQ(l.Find("step")->string_value(), "reproduce");
    EXPECT_EQ(Int(l, "bug"), 12);
    EXPECT_EQ(Int(l, "attempt"), 1);
    EXPECT_EQ(l.Find("worker")->string_value(), "reproducer#0");
  }
  EXPECT_GE(Int(lines[2], "duration_ms"), 0);
  EXPECT_EQ(lines[0].Find("duration_ms"), nullptr);
  EXPECT_EQ(q.Get(job.id)->state, JobState::kDone);
  // Outside the run, no job fields.
  spdlog::info("idle");
  lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].Find("job"), nullptr);
}

TEST_F(JobRunTest, FailuresSayAttemptErrorAndWhatComesNext) {
  JobQueue q(store_.get());
  const StepHandler fails = [](StepContext&, const Job&) -> StatusOr<Json> {
    return IoError("disk full");
  };
  // A retryable failure with attempts left: retried.
  Job job = Leased(q, "build", R"({"commit": "1a2b3c"})", 2);
  ASSERT_TRUE(
      RunLeasedJob(ctx_, q, job, fails, "orchestrator", stopping_).ok());
  std::vector<Json> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].Find("msg")->string_value(),
            "job failed: will be retried");
  EXPECT_EQ(lines[1].Find("level")->string_value(), "warn");
  EXPECT_EQ(lines[1].Find("commit")->string_value(), "1a2b3c");
  EXPECT_EQ(lines[1].Find("step")->string_value(), "build");
  EXPECT_EQ(Int(lines[1], "attempt"), 1);
  EXPECT_NE(lines[1].Find("error")->string_value().find("disk full"),
            std::string::npos);
  EXPECT_GE(Int(lines[1], "duration_ms"), 0);

  // The last attempt: parked, an error line.
  clock_.Advance(3'600'000);
  StatusOr<std::vector<Job>> again = q.Lease("daemon", 1, 60'000);
  ASSERT_TRUE(again.ok() && again->size() == 1);
  ASSERT_TRUE(
      RunLeasedJob(ctx_, q, again->front(), fails, "orchestrator", stopping_)
          .ok());
  lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].Find("msg")->string_value(), "job parked: needs a human");
  EXPECT_EQ(lines[1].Find("level")->string_value(), "error");
  EXPECT_EQ(Int(lines[1], "attempt"), 2);
  EXPECT_EQ(q.Get(job.id)->state, JobState::kParked);

  // Not retryable: failed for good.
  job = Leased(q, "localize", R"({"bug": 4})");
  const StepHandler refuses = [](StepContext&, const Job&) -> StatusOr<Json> {
    return InvalidArgument("no case");
  };
  ASSERT_TRUE(
      RunLeasedJob(ctx_, q, job, refuses, "orchestrator", stopping_).ok());
  lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].Find("msg")->string_value(), "job failed for good");
  EXPECT_EQ(Int(lines[1], "bug"), 4);
  EXPECT_EQ(q.Get(job.id)->state, JobState::kFailed);

  // Stopped by a shutdown: given back.
  job = Leased(q, "minimize", R"({"bug": 5})");
  stopping_ = true;
  ASSERT_TRUE(RunLeasedJob(ctx_, q, job, fails, "minimizer#0", stopping_).ok());
  lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].Find("msg")->string_value(),
            "job interrupted: queued again for the next start");
  EXPECT_EQ(Int(lines[1], "job"), job.id);
  EXPECT_EQ(q.Get(job.id)->state, JobState::kQueued);
}

}  // namespace
}  // namespace trench::orchestrator
