// The Slurm client (orchestrator/slurm/slurm_client.h): its names and
// checks alone (unit), and against a real single-node cluster the suite
// starts (SlurmCluster*, label "slurm": slurm-wlm and munge, as root),
// (the executor's runs as jobs: slurm_executor_test.cc).
#include "orchestrator/slurm/slurm_client.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "tests/orchestrator/slurm/slurm_cluster_suite.h"

namespace trench::orchestrator::slurm {
namespace {

TEST(SlurmNamesTest, StatesParseAsSlurmPrintsThem) {
  EXPECT_EQ(ParseJobState("RUNNING"), JobState::kRunning);
  EXPECT_EQ(ParseJobState("CANCELLED by 0"), JobState::kCancelled);
  EXPECT_EQ(ParseJobState("COMPLETED+"), JobState::kCompleted);
  EXPECT_EQ(ParseJobState("NODE_FAIL"), JobState::kNodeFail);
  EXPECT_EQ(ParseJobState("SPECIAL_EXIT"), JobState::kUnknown);
  EXPECT_EQ(ParseJobState(""), JobState::kUnknown);
  EXPECT_EQ(JobStateName(JobState::kOutOfMemory), "OUT_OF_MEMORY");
  EXPECT_TRUE(IsFinished(JobState::kTimeout));
  EXPECT_FALSE(IsFinished(JobState::kPending));
  EXPECT_FALSE(IsFinished(JobState::kRequeued));
  for (JobState s :
       {JobState::kNodeFail, JobState::kPreempted, JobState::kBootFail}) {
    EXPECT_TRUE(IsClusterFailure(s)) << JobStateName(s);
  }
  EXPECT_FALSE(IsClusterFailure(JobState::kFailed));
}

TEST(SlurmNamesTest, OnlyTokensReachACommandLine) {
  EXPECT_TRUE(IsSlurmToken("trench-fuzz.3_a"));
  EXPECT_FALSE(IsSlurmToken(""));
  EXPECT_FALSE(IsSlurmToken("-p"));
  EXPECT_FALSE(IsSlurmToken("a b"));
  EXPECT_FALSE(IsSlurmToken("a;rm"));
  EXPECT_FALSE(IsSlurmToken(std::string(65, 'a')));
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
}

// Slurm's commands are another program's output: an sbatch that prints no
// job id, or an error with terminal escapes, is an error shown as one
// line without controls.
TEST(SlurmNamesTest, AnSbatchWithoutAJobIdIsAnErrorShownSafely) {
  char tmpl[] = "/tmp/fake-slurm.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string bin = tmpl;
  auto fake = [&](const std::string& name, const std::string& body) {
    const std::string path = bin + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), 0755);
  };
  JobSpec job;
  job.name = "ok";
  job.work_dir = bin;
  job.argv = {"/bin/true"};
  fake("sbatch", "printf '\\033[2Jnot an id\\n'\n");
  SlurmClient client({.bin_dir = bin});
  StatusOr<int64_t> r = client.Submit(job);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "sbatch printed no job id: '[2Jnot an id'");
  fake("sbatch", "printf 'bad\\033]0;owned\\007 thing\\n' >&2; exit 1\n");
  r = client.Submit(job);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message().find('\033'), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("sbatch refused job 'ok': bad"),
            std::string::npos)
      << r.status().message();
  std::filesystem::remove_all(bin);
}

TEST(SlurmNamesTest, BadSpecsAndMissingCommandsAreClearErrors) {
  SlurmClient missing({.bin_dir = "/nonexistent"});
  JobSpec job;
  job.name = "ok";
  job.work_dir = "/tmp";
  job.argv = {"/bin/true"};
  StatusOr<int64_t> r = missing.Submit(job);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("sbatch"), std::string::npos)
      << r.status().message();
  for (auto bad : std::vector<std::function<void(JobSpec&)>>{
           [](JobSpec& j) { j.name = "a b"; },
           [](JobSpec& j) { j.partition = "--wrap=x"; },
           [](JobSpec& j) { j.work_dir = "relative"; },
           [](JobSpec& j) { j.argv = {"true"}; },
           [](JobSpec& j) {
             j.extra_args = {"--exclusive", "--x y"};
           },
           [](JobSpec& j) { j.cpus = 0; }}) {
    JobSpec b = job;
    bad(b);
    EXPECT_EQ(missing.Submit(b).status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(missing.CheckPartition("a;b").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(missing.ListJobs("").status().code(), StatusCode::kInvalidArgument);
}

class SlurmClusterTest : public testing::SlurmClusterSuite {
 protected:
  void SetUp() override {
    SlurmClusterSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    client_ = std::make_unique<SlurmClient>(
        ClientOptions{.slurm_conf = cluster_->conf()});
  }
  // Polls until the job is finished (up to 60 s).
  JobInfo WaitFinished(int64_t id) {
    JobInfo info;
    for (int i = 0; i < 600; ++i) {
      StatusOr<JobInfo> q = client_->Query(id);
      EXPECT_TRUE(q.ok()) << q.status().message();
      if (q.ok()) {
        info = *q;
        if (IsFinished(info.state)) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return info;
  }
  JobSpec Job(const std::string& name, std::vector<std::string> argv) {
    JobSpec j;
    j.name = name;
    j.partition = testing::SlurmCluster::kPartition;
    j.work_dir = cluster_->shared_dir();
    j.argv = std::move(argv);
    j.time_limit_minutes = 5;
    return j;
  }

  std::unique_ptr<SlurmClient> client_;
};

TEST_F(SlurmClusterTest, APartitionIsCheckedByName) {
  EXPECT_TRUE(client_->CheckPartition("trench").ok());
  Status bad = client_->CheckPartition("gpu-large");
  EXPECT_EQ(bad.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(bad.message(),
            "Slurm partition 'gpu-large' does not exist (sinfo shows: trench)");
}

TEST_F(SlurmClusterTest, AJobRunsItsArgvVerbatimAndReportsItsExitCode) {
  // Quotes, spaces and a $ reach the program as one argument, unexpanded.
  const std::string arg = "it's \"quoted\" $HOME; `id`";
  StatusOr<int64_t> id = client_->Submit(Job(
      "trench-test-exit",
      {"/bin/sh", "-c", "printf '%s' \"$1\" > arg.txt; exit 3", "sh", arg}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  JobInfo info = WaitFinished(*id);
  EXPECT_EQ(info.state, JobState::kFailed) << JobStateName(info.state);
  EXPECT_EQ(info.exit_code, 3);
  EXPECT_EQ(info.name, "trench-test-exit");
  std::ifstream in(cluster_->shared_dir() + "/arg.txt");
  std::stringstream got;
  got << in.rdbuf();
  EXPECT_EQ(got.str(), arg);

  StatusOr<int64_t> ok = client_->Submit(Job("trench-test-ok", {"/bin/true"}));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  JobInfo done = WaitFinished(*ok);
  EXPECT_EQ(done.state, JobState::kCompleted);
  EXPECT_EQ(done.exit_code, 0);
}

TEST_F(SlurmClusterTest, RunningJobsAreListedByPrefixAndCancelled) {
  StatusOr<int64_t> id =
      client_->Submit(Job("trench-test-sleep", {"/bin/sleep", "300"}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  bool running = false;
  for (int i = 0; i < 300 && !running; ++i) {
    StatusOr<JobInfo> q = client_->Query(*id);
    ASSERT_TRUE(q.ok()) << q.status().message();
    running = q->state == JobState::kRunning;
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(running);
  StatusOr<std::vector<JobInfo>> mine = client_->ListJobs("trench-test-sl");
  ASSERT_TRUE(mine.ok()) << mine.status().message();
  ASSERT_EQ(mine->size(), 1u);
  EXPECT_EQ((*mine)[0].id, *id);
  EXPECT_EQ((*mine)[0].state, JobState::kRunning);
  EXPECT_TRUE(client_->ListJobs("someone-else")->empty());
  ASSERT_TRUE(client_->Cancel(*id).ok());
  EXPECT_EQ(WaitFinished(*id).state, JobState::kCancelled);
  EXPECT_TRUE(client_->Cancel(*id).ok());  // Again: nothing to do.
}

TEST_F(SlurmClusterTest, AJobSlurmNeverHadIsNotFound) {
  EXPECT_EQ(client_->Query(987654).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(client_->Cancel(987654).ok());
}

}  // namespace
}  // namespace trench::orchestrator::slurm
