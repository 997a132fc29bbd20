// The daemon on the Slurm executor, against a real single-node cluster
// the suite starts (label "slurm"): a bad partition stops `trench serve`;
// a zoo bug goes from its landed commit to a verified branch with every
// run a Slurm job; a daemon killed (SIGKILL) while its jobs run is
// restarted and reattaches: no job is submitted twice, none is lost.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "base/json.h"
#include "base/scoped_temp_dir.h"
#include "base/subprocess.h"
#include "orchestrator/slurm/slurm_client.h"
#include "orchestrator/slurm/slurm_executor.h"
#include "orchestrator/slurm/slurm_job_records.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/slurm/slurm_cluster_suite.h"

namespace trench::orchestrator::slurm {
namespace {

namespace fs = std::filesystem;
using hlo_diff::ProcessResult;
using hlo_diff::ProcessSpec;
using hlo_diff::RunProcess;

class SlurmClusterDaemonTest : public testing::SlurmClusterSuite {
 protected:
  void SetUp() override {
    SlurmClusterSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    StatusOr<ScopedTempDir> d =
        ScopedTempDir::Make(cluster_->shared_dir(), "daemon-test", 0755);
    ASSERT_TRUE(d.ok());
    dir_ = std::make_unique<ScopedTempDir>(std::move(*d));
    fs::create_directories(dir_->path() + "/shared");
    ::chmod((dir_->path() + "/shared").c_str(), 0755);
  }

  Json Executor(const std::string& partition) const {
    Json e = Json::MakeObject();
    e["kind"] = "slurm";
    e["partition"] = partition;
    e["shared_dir"] = dir_->path() + "/shared";
    e["slurm_conf"] = cluster_->conf();
    e["max_jobs"] = 4;
    e["poll_seconds"] = 0.2;
    return e;
  }
  // config/demo.json with the Slurm executor (and absolute paths).
  std::string DemoConfig() const {
    StatusOr<Json> c = ParseJson(
        testing::ReadAll(std::string(TRENCH_SOURCE_DIR) + "/config/demo.json"));
    EXPECT_TRUE(c.ok());
    Json j = c.ok() ? *c : Json::MakeObject();
    j["fuzz"]["corpus"] = std::string(TRENCH_SOURCE_DIR) + "/corpus/traces";
    j["executor"] = Executor(testing::SlurmCluster::kPartition);
    const std::string path = dir_->path() + "/demo.json";
    std::ofstream(path) << j.DumpPretty();
    return path;
  }
  std::vector<std::string> Demo(const std::string& out) const {
    return {std::string(TRENCH_BINARY_DIR) + "/trench",
            "demo",
            "--bug",
            "01",
            "--history",
            "short",
            "--config",
            DemoConfig(),
            "--source",
            TRENCH_SOURCE_DIR,
            "--dir",
            out,
            "--timeout",
            "2400",
            "--json"};
  }
  // Each Slurm job of the daemon whose state dir is `var`, by name.
  std::map<std::string, int> SlurmJobsByName(const std::string& var) const {
    SlurmClient client(ClientOptions{.slurm_conf = cluster_->conf()});
    StatusOr<std::vector<JobInfo>> jobs = client.ListJobs(DaemonJobPrefix(var));
    EXPECT_TRUE(jobs.ok()) << jobs.status().message();
    std::map<std::string, int> n;
    for (const JobInfo& j : jobs.ok() ? *jobs : std::vector<JobInfo>{}) {
      ++n[j.name];
    }
    return n;
  }

  std::unique_ptr<ScopedTempDir> dir_;
};

TEST_F(SlurmClusterDaemonTest, ABadPartitionStopsServeWithAClearMessage) {
  Json c = Json::MakeObject();
  c["var_dir"] = dir_->path() + "/var";
  c["repo"] = dir_->path() + "/repo";
  c["executor"] = Executor("gpu-large");
  const std::string config = dir_->path() + "/bad.json";
  std::ofstream(config) << c.DumpPretty();
  ProcessSpec spec;
  spec.argv = {std::string(TRENCH_BINARY_DIR) + "/trench", "serve", "--config",
               config};
  spec.timeout_seconds = 120;
  StatusOr<ProcessResult> r = RunProcess(spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->timed_out);
  EXPECT_NE(r->exit_code, 0);
  EXPECT_NE(r->err.find("executor slurm: Slurm partition 'gpu-large' does "
                        "not exist (sinfo shows: trench)"),
            std::string::npos)
      << r->err;
  // Nothing was created on the shared filesystem.
  EXPECT_FALSE(fs::exists(dir_->path() + "/shared/cases"));
}

// The demo on the Slurm executor: found, reproduced, bisected, patched and
// verified, every run a job (each recorded with its Slurm id, each ended,
// one job per run unless the cluster lost it).
TEST_F(SlurmClusterDaemonTest, AZooBugGoesToAVerifiedBranchWithEveryRunAJob) {
  const std::string out = dir_->path() + "/demo";
  ProcessSpec spec;
  spec.argv = Demo(out);
  spec.timeout_seconds = 2700;
  spec.capture_bytes = 8 << 20;
  StatusOr<ProcessResult> r = RunProcess(spec);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->err.substr(0, 4000);
  const size_t at = r->out.rfind("\n[\n");
  ASSERT_NE(at, std::string::npos) << r->out.substr(0, 4000);
  StatusOr<Json> results = ParseJson(r->out.substr(at + 1));
  ASSERT_TRUE(results.ok() && results->is_array() && !results->array().empty());
  Json result = results->array()[0];
  EXPECT_TRUE(result["reproduced"].bool_value()) << result.Dump();
  EXPECT_TRUE(result["culprit_right"].bool_value()) << result.Dump();
  EXPECT_TRUE(result["patch_verified"].bool_value()) << result.Dump();
  StatusOr<std::unique_ptr<Store>> store =
      Store::Open(out + "/var/store.db", StoreOptions());
  ASSERT_TRUE(store.ok());
  StatusOr<std::vector<SlurmJobRecord>> left =
      UnfinishedJobRecords(store->get(), 0);
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
  ASSERT_TRUE(
      (*store)->db()->Prepare("SELECT count(*) FROM executor_jobs").ok());
  StatusOr<Statement> count = (*store)->db()->Prepare(
      "SELECT count(*), sum(requeues) FROM executor_jobs");
  ASSERT_TRUE(count.ok() && *count->Step());
  const int64_t runs = count->ColumnInt64(0);
  EXPECT_GT(runs, 10);  // Builds, campaigns, reproductions, ...
  int jobs = 0;
  for (const auto& [name, n] : SlurmJobsByName(out + "/var")) jobs += n;
  EXPECT_EQ(jobs, runs + count->ColumnInt64(1));
  // Cases and builds are on the shared filesystem; the store is not.
  EXPECT_TRUE(fs::is_directory(dir_->path() + "/shared/cases"));
  EXPECT_TRUE(fs::is_directory(dir_->path() + "/shared/builder/cache"));
  EXPECT_FALSE(fs::exists(out + "/var/cases"));
}

// SIGKILL of the daemon while a job runs, then `trench serve` on the same
// state: it reattaches to that job (no second submission) and the job's
// step finishes with it.
TEST_F(SlurmClusterDaemonTest,
       SigkillWhileJobsRunThenRestartSubmitsNothingTwice) {
  const std::string out = dir_->path() + "/killed";
  const pid_t demo = testing::SlurmCluster::Spawn(Demo(out), out + ".log");
  ASSERT_GT(demo, 0);
  // The first job that runs for a while: the first build.
  std::string victim;
  for (int i = 0; i < 1200 && victim.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    if (!fs::exists(out + "/var/store.db")) continue;
    StatusOr<std::unique_ptr<Store>> s =
        Store::Open(out + "/var/store.db", StoreOptions());
    if (!s.ok()) continue;
    StatusOr<std::vector<SlurmJobRecord>> live =
        UnfinishedJobRecords(s->get(), 0);
    if (!live.ok()) continue;
    for (const SlurmJobRecord& rec : *live) {
      if (rec.state == "RUNNING" && rec.started_ms &&
          std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::system_clock::now().time_since_epoch())
                      .count() -
                  *rec.started_ms >
              3000) {
        victim = rec.name;
      }
    }
  }
  ASSERT_FALSE(victim.empty())
      << testing::ReadAll(out + ".log").substr(0, 4000);
  ASSERT_EQ(::kill(-demo, SIGKILL), 0);
  int status = 0;
  ::waitpid(demo, &status, 0);
  ASSERT_EQ(SlurmJobsByName(out + "/var")[victim], 1);
  // The same state, served again (the demo wrote var.json for this), on
  // a port of its own.
  StatusOr<Json> config = ParseJson(testing::ReadAll(out + "/var.json"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  ASSERT_NE(config->Find("executor"), nullptr) << config->Dump();
  (*config)["http"] = Json::MakeObject();
  (*config)["http"]["port"] = 0;
  std::ofstream(out + "/serve.json") << config->DumpPretty();
  const pid_t serve =
      testing::SlurmCluster::Spawn({std::string(TRENCH_BINARY_DIR) + "/trench",
                                    "serve", "--config", out + "/serve.json"},
                                   out + ".serve.log");
  ASSERT_GT(serve, 0);
  bool finished = false;
  // A cold build on a loaded 2-core machine: up to 40 minutes.
  for (int i = 0; i < 9600 && !finished; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    StatusOr<std::unique_ptr<Store>> s =
        Store::Open(out + "/var/store.db", StoreOptions());
    if (!s.ok()) continue;
    StatusOr<std::optional<SlurmJobRecord>> rec =
        GetJobRecord(s->get(), victim);
    finished = rec.ok() && rec->has_value() && (*rec)->finished;
  }
  ::kill(-serve, SIGTERM);
  ::waitpid(serve, &status, 0);
  EXPECT_TRUE(finished) << testing::ReadAll(out + ".serve.log").substr(0, 4000);
  StatusOr<std::unique_ptr<Store>> s =
      Store::Open(out + "/var/store.db", StoreOptions());
  ASSERT_TRUE(s.ok());
  StatusOr<std::optional<SlurmJobRecord>> rec = GetJobRecord(s->get(), victim);
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ((*rec)->state, "COMPLETED");
  EXPECT_EQ((*rec)->requeues, 0);
  // One Slurm job for the run the killed daemon had started (else the
  // serve log says why it was submitted again).
  std::string again;
  {
    std::istringstream log(testing::ReadAll(out + ".serve.log"));
    for (std::string line; std::getline(log, line);) {
      if (line.find("submitted again") != std::string::npos) {
        again += line.substr(0, 600) + "\n";
      }
    }
  }
  EXPECT_EQ(SlurmJobsByName(out + "/var")[victim], 1) << victim << "\n"
                                                      << again;
  EXPECT_NE(testing::ReadAll(out + ".serve.log")
                .find("Slurm jobs of the previous run: their steps reattach"),
            std::string::npos);
}

}  // namespace
}  // namespace trench::orchestrator::slurm
