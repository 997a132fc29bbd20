// The daemon's fuzz step (orchestrator/pipeline/steps_commit.cc) on the
// Slurm executor of a real single-node cluster (label "slurm"): a landed
// commit's campaign as 1 job and as 2 shards files bugs with the same
// signatures, also when one shard's job is cancelled while it runs (as
// when its node dies) and is requeued. The store is a real SQLite file,
// the mirror a real git repository; cases and scratch dirs live on the
// cluster's shared filesystem.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "base/scoped_temp_dir.h"
#include "git/git_repo.h"
#include "orchestrator/pipeline/pipeline.h"
#include "orchestrator/slurm/slurm_executor.h"
#include "orchestrator/slurm/slurm_job_records.h"
#include "orchestrator/store/job_queue.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/slurm/slurm_cluster_suite.h"

namespace trench::orchestrator::slurm {
namespace {

namespace fs = std::filesystem;

// A target that crashes while compiling any program with a multiply, a
// maximum or a negate, naming the op (one signature per op), and else
// forwards the request to the project's hlo-run --serve ($REAL, set by the
// line before).
// clang-format off
constexpr char kTarget[] = R"sh(coproc SRV { exec "$REAL" "$@"; }
while IFS= read -r line; do
  m=$(printf '%s' "$line" | sed -n 's/.*"module": *"\([^"]*\)".*/\1/p')
  op=$( { printf '%s' "$line"; [ -f "$m" ] && cat "$m"; } |
        grep -o -m1 -E ' (multiply|maximum|negate)\(' | head -1 | tr -d ' (')
  if [ -n "$op" ]; then echo "internal error in $op" >&2; kill -ABRT $$; fi
  printf '%s\n' "$line" >&"${SRV[1]}"
  IFS= read -r ans <&"${SRV[0]}"
  printf '%s\n' "$ans"
done
)sh";
// clang-format on

class SlurmClusterFuzzStepTest : public testing::SlurmClusterSuite {
 protected:
  // One daemon's state: a var dir with the store, the rest on the shared
  // filesystem, the commit built (the crashing target) and landed.
  struct Daemon {
    std::unique_ptr<ScopedTempDir> var;
    std::unique_ptr<DaemonPaths> paths;
    std::unique_ptr<Store> store;
    std::unique_ptr<JobQueue> queue;
    std::unique_ptr<SlurmExecutor> executor;
    DaemonConfig config;
    StepContext ctx;
    std::string commit;
  };

  std::unique_ptr<Daemon> MakeDaemon(const std::string& tag, int shards) {
    auto d = std::make_unique<Daemon>();
    StatusOr<ScopedTempDir> var = ScopedTempDir::Make("/tmp", "fuzz-var", 0755);
    EXPECT_TRUE(var.ok());
    if (!var.ok()) return nullptr;
    d->var = std::make_unique<ScopedTempDir>(std::move(*var));
    const std::string shared = cluster_->shared_dir() + "/" + Prefix(tag);
    d->paths = std::make_unique<DaemonPaths>(d->var->path(), shared);
    for (const std::string& dir :
         {d->paths->cases, d->paths->work, d->paths->build_cache}) {
      fs::create_directories(dir);
    }
    StatusOr<std::unique_ptr<Store>> store =
        Store::Open(d->paths->store, StoreOptions());
    EXPECT_TRUE(store.ok()) << store.status().message();
    if (!store.ok()) return nullptr;
    d->store = std::move(*store);
    d->queue = std::make_unique<JobQueue>(d->store.get());
    // A landed commit that touches no pass: the unfocused campaign alone.
    auto repo = hlo_bisect::GitRepo::Init(d->paths->mirror);
    EXPECT_TRUE(repo.ok()) << repo.status().ToString();
    if (!repo.ok()) return nullptr;
    StatusOr<std::string> sha = (*repo)->CommitFiles("", {{"README", "docs\n"}},
                                                     "docs", "refs/heads/main");
    EXPECT_TRUE(sha.ok());
    d->commit = sha.ok() ? *sha : "";
    const std::string bin = d->paths->build_cache + "/" + d->commit + "/bin";
    fs::create_directories(bin);
    std::ofstream(bin + "/hlo-run")
        << "#!/bin/bash\nREAL='" << TRENCH_BINARY_DIR << "/hlo-run'\n"
        << kTarget;
    ::chmod((bin + "/hlo-run").c_str(), 0755);
    for (const char* tool : {"hloc", "tpusim"}) {
      fs::create_symlink(std::string(TRENCH_BINARY_DIR) + "/" + tool,
                         bin + "/" + tool);
    }
    EXPECT_TRUE(
        d->store->PutBuild(d->commit, "", BuildStatus::kOk, bin, "").ok());
    d->config.fuzz_budget_seconds = 30;
    d->config.fuzz_jobs = 1;
    d->config.fuzz_shards = shards;
    d->config.fuzz_seed = 77;
    d->config.prompts_dir = std::string(TRENCH_SOURCE_DIR) + "/prompts";
    SlurmExecutorOptions o;
    o.run.trench_binary = std::string(TRENCH_BINARY_DIR) + "/trench";
    o.run.shared_dir = shared;
    o.run.partition = testing::SlurmCluster::kPartition;
    o.run.job_name_prefix = Prefix(tag);
    o.run.poll_seconds = 0.1;
    o.client.slurm_conf = cluster_->conf();
    StatusOr<std::unique_ptr<SlurmExecutor>> e = SlurmExecutor::Create(o);
    EXPECT_TRUE(e.ok()) << e.status().message();
    if (!e.ok()) return nullptr;
    d->executor = std::move(*e);
    d->ctx.config = &d->config;
    d->ctx.paths = d->paths.get();
    d->ctx.store = d->store.get();
    d->ctx.queue = d->queue.get();
    d->ctx.runner = d->executor.get();
    d->ctx.tools_dir = TRENCH_BINARY_DIR;
    d->ctx.worker = "stress_test_author#0";
    return d;
  }

  static std::string Prefix(const std::string& tag) {
    return "trench-f" + std::to_string(::getpid() % 100000) + tag;
  }

  // Runs the fuzz step as queue job `job_id`; the signatures of the bugs
  // it filed.
  std::set<std::string> Fuzz(Daemon& d, int64_t job_id) {
    Json payload = Json::MakeObject();
    payload["commit"] = d.commit;
    Job job;
    job.id = job_id;
    job.kind = "fuzz";
    job.payload = payload;
    d.ctx.BeginJob(job.id, 1);
    StatusOr<Json> out = RunFuzzStep(d.ctx, job);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    std::set<std::string> sigs;
    StatusOr<std::vector<Bug>> bugs = d.store->ListBugs(std::nullopt, 0, 100);
    EXPECT_TRUE(bugs.ok());
    for (const Bug& b : bugs.ok() ? *bugs : std::vector<Bug>{}) {
      sigs.insert(b.signature);
    }
    return sigs;
  }
};

TEST_F(SlurmClusterFuzzStepTest, TwoShardsFileTheBugsOfOneEvenIfOneIsLost) {
  std::unique_ptr<Daemon> one = MakeDaemon("a", 1);
  ASSERT_NE(one, nullptr);
  const std::set<std::string> by_one = Fuzz(*one, 7);
  EXPECT_EQ(by_one.size(), 3u) << "one signature per crashing op";
  // The campaign's job, and the step's other runs (the target describes
  // itself).
  const int64_t completed_by_one =
      one->executor->Stats().runs_by_state.at("COMPLETED");

  std::unique_ptr<Daemon> two = MakeDaemon("b", 2);
  ASSERT_NE(two, nullptr);
  // Shard 1's job is cancelled from outside once it runs.
  const std::string shard1 = Prefix("b") + "-j7-r1";
  std::thread killer([&] {
    for (int i = 0; i < 1200; ++i) {
      StatusOr<std::unique_ptr<Store>> s =
          Store::Open(two->paths->store, StoreOptions());
      if (s.ok()) {
        StatusOr<std::optional<SlurmJobRecord>> r =
            GetJobRecord(s->get(), shard1);
        if (r.ok() && r->has_value() && (*r)->slurm_id &&
            (*r)->state == "RUNNING") {
          std::this_thread::sleep_for(std::chrono::seconds(2));
          SlurmClient client(ClientOptions{.slurm_conf = cluster_->conf()});
          EXPECT_TRUE(client.Cancel(*(*r)->slurm_id).ok());
          return;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "shard 1 never ran";
  });
  const std::set<std::string> by_two = Fuzz(*two, 7);
  killer.join();
  EXPECT_EQ(by_two, by_one);
  const ExecutorStats stats = two->executor->Stats();
  EXPECT_EQ(stats.requeued, 1);
  EXPECT_EQ(stats.runs_by_state.at("CANCELLED"), 1);
  EXPECT_EQ(stats.runs_by_state.at("COMPLETED"), completed_by_one + 1)
      << "one more shard";
}

}  // namespace
}  // namespace trench::orchestrator::slurm
