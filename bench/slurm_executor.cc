// The Slurm executor against the local one, on a real single-node cluster
// this benchmark starts (tests/orchestrator/slurm/slurm_cluster.h: munged,
// slurmctld, slurmd on loopback; needs root, slurm-wlm and munge):
//
// 1. overhead per run: N runs of /bin/true in the sandbox, locally
//    (sandbox::Run) and as Slurm jobs (SlurmExecutor::Run), one after the
//    other; the executor's submit-to-start time (queue wait) on its own;
// 2. campaign throughput: one hlo-fuzz campaign of P programs (seed fixed,
//    corpus/traces) run locally, as 1 Slurm job, and as 2 Slurm shards at
//    once (--shard 0/2, 1/2): programs per second and the ratios to local;
// 3. the store's write rate per finding: FileFinding (the daemon's own
//    code) filing F new findings (each a new bug and its reproduce job)
//    and F more of known signatures (each a run attached to its bug), on a
//    real store file: findings per second and rows written per finding.
//
// Usage: bench_slurm_executor [PROGRAMS] [RUNS] [FINDINGS]
// Prints one JSON object.
#include "orchestrator/slurm/slurm_executor.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/json.h"
#include "compiler/ir/literal.h"
#include "orchestrator/pipeline/commit_tools.h"
#include "orchestrator/pipeline/pipeline.h"
#include "orchestrator/store/store_sqlite.h"
#include "sandbox/sandbox.h"
#include "tests/orchestrator/slurm/slurm_cluster.h"
#include "triage/case/case_bundle.h"

namespace trench::orchestrator {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "bench_slurm_executor: %s\n", what.c_str());
  return 2;
}

sandbox::Options Sandboxed(std::vector<std::string> argv,
                           const std::string& work) {
  fs::create_directories(work);
  sandbox::Options o;
  o.argv = std::move(argv);
  o.work_dir = work;
  o.env = {"PATH=/usr/bin:/bin", "HOME=/tmp"};
  o.read_only_paths = {TRENCH_BINARY_DIR, TRENCH_SOURCE_DIR};
  o.limits.wall_seconds = 3600;
  o.limits.stdout_bytes = 16 << 20;
  o.uid = o.gid = 65534;
  return o;
}

std::vector<std::string> Campaign(const std::string& out, int programs) {
  const std::string bin = TRENCH_BINARY_DIR;
  return {bin + "/hlo-fuzz",
          "--max-programs",
          std::to_string(programs),
          "--budget",
          "60m",
          "--jobs",
          "1",
          "--seed",
          "4242",
          "--no-progress",
          "--out",
          out,
          "--corpus",
          std::string(TRENCH_SOURCE_DIR) + "/corpus/traces",
          "--hlo-run",
          bin + "/hlo-run",
          "--hloc",
          bin + "/hloc",
          "--tpusim",
          bin + "/tpusim"};
}

int64_t Programs(const StatusOr<sandbox::Result>& r) {
  if (!r.ok()) return -1;
  StatusOr<Json> j = ParseJson(r->stdout_data);
  const Json* p = j.ok() ? j->Find("programs") : nullptr;
  return p && p->is_integer() ? p->int64_value() : -1;
}

// Part 3: FileFinding on a fresh store.
StatusOr<Json> StoreWriteRate(const std::string& dir, int findings) {
  DaemonConfig config;
  config.var_dir = dir + "/var";
  DaemonPaths paths(config.var_dir);
  fs::create_directories(paths.cases);
  ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                   Store::Open(paths.store, StoreOptions()));
  JobQueue queue(store.get());
  StepContext ctx;
  ctx.config = &config;
  ctx.paths = &paths;
  ctx.store = store.get();
  ctx.queue = &queue;
  ctx.worker = "bench";
  // Case bundles: one module per finding (a different constant each).
  std::vector<std::string> dirs;
  for (int i = 0; i < findings; ++i) {
    const std::string text =
        "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n  c = f32[] "
        "constant(" +
        std::to_string(i) +
        ")\n  b = f32[4] broadcast(c), dimensions={}\n  ROOT a = f32[4] "
        "add(p, b)\n}\n";
    Literal in(Shape(PrimitiveType::F32, {4}));
    ASSIGN_OR_RETURN(hlo_diff::Case c,
                     hlo_diff::MakeCase(text, {std::move(in)}));
    const std::string d = dir + "/found/" + std::to_string(i);
    RETURN_IF_ERROR(hlo_diff::WriteCase(d, c));
    dirs.push_back(d);
  }
  sqlite3* db = store->db()->raw();
  Json out = Json::MakeObject();
  for (const char* kind : {"new", "known"}) {
    const bool fresh = std::string(kind) == "new";
    const int64_t rows0 = sqlite3_total_changes64(db);
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < findings; ++i) {
      Json f = Json::MakeObject();
      f["case"] = dirs[i];
      // New: one signature each; known: the first 10 signatures again.
      f["sig"] = "s" + std::to_string(fresh ? i : i % 10);
      f["status"] = "mismatch";
      ASSIGN_OR_RETURN(Json filed, FileFinding(ctx, "c0ffee", f));
      (void)filed;
    }
    const double s = Since(t0);
    Json k = Json::MakeObject();
    k["findings"] = findings;
    k["seconds"] = s;
    k["findings_per_second"] = findings / s;
    k["ms_per_finding"] = s * 1000 / findings;
    k["rows_written_per_finding"] =
        static_cast<double>(sqlite3_total_changes64(db) - rows0) / findings;
    out[kind] = std::move(k);
  }
  return out;
}

int Main(int argc, char** argv) {
  const int programs = argc > 1 ? std::atoi(argv[1]) : 300;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 10;
  const int findings = argc > 3 ? std::atoi(argv[3]) : 1000;
  testing::SlurmCluster cluster;
  std::string skip;
  if (Status s = cluster.Start(&skip); !s.ok()) return Fail(s.message());
  if (!skip.empty()) return Fail("cannot run here: " + skip);
  const std::string shared = cluster.shared_dir();
  slurm::SlurmExecutorOptions so;
  so.run.trench_binary = std::string(TRENCH_BINARY_DIR) + "/trench";
  so.run.shared_dir = shared;
  so.run.partition = testing::SlurmCluster::kPartition;
  so.run.job_name_prefix = "trench-bench";
  so.run.poll_seconds = 0.1;
  so.client.slurm_conf = cluster.conf();
  StatusOr<std::unique_ptr<slurm::SlurmExecutor>> made =
      slurm::SlurmExecutor::Create(so);
  if (!made.ok()) return Fail(made.status().message());
  slurm::SlurmExecutor& slurm = **made;
  Json out = Json::MakeObject();
  out["cpus"] = static_cast<int64_t>(std::thread::hardware_concurrency());

  // 1. Overhead per run.
  double local_s = 0, slurm_s = 0;
  for (int i = 0; i < runs; ++i) {
    const std::string w = shared + "/true/" + std::to_string(i);
    Clock::time_point t = Clock::now();
    if (!sandbox::Run(Sandboxed({"/bin/true"}, w + "l")).ok()) {
      return Fail("local run failed");
    }
    local_s += Since(t);
    t = Clock::now();
    StatusOr<sandbox::Result> r =
        slurm.Run(Sandboxed({"/bin/true"}, w + "s"), RunLabel{});
    if (!r.ok() || !r->ok()) return Fail("Slurm run failed");
    slurm_s += Since(t);
  }
  const ExecutorStats st = slurm.Stats();
  Json overhead = Json::MakeObject();
  overhead["runs"] = runs;
  overhead["local_seconds_per_run"] = local_s / runs;
  overhead["slurm_seconds_per_run"] = slurm_s / runs;
  overhead["slurm_submit_to_start_seconds"] =
      st.queue_wait_count ? st.queue_wait_seconds_sum / st.queue_wait_count
                          : -1.0;
  overhead["slurm_overhead_seconds_per_run"] = (slurm_s - local_s) / runs;
  out["overhead"] = std::move(overhead);

  // 2. Campaign throughput.
  Json campaign = Json::MakeObject();
  campaign["programs"] = programs;
  Clock::time_point t = Clock::now();
  StatusOr<sandbox::Result> local = sandbox::Run(Sandboxed(
      Campaign(shared + "/c-local/out", programs), shared + "/c-local"));
  const double local_wall = Since(t);
  if (Programs(local) != programs) return Fail("local campaign failed");
  t = Clock::now();
  StatusOr<sandbox::Result> one = slurm.Run(
      Sandboxed(Campaign(shared + "/c-one/out", programs), shared + "/c-one"),
      RunLabel{});
  const double one_wall = Since(t);
  if (Programs(one) != programs) return Fail("1-shard campaign failed");
  t = Clock::now();
  std::vector<StatusOr<sandbox::Result>> shards(2, IoError("not run"));
  std::vector<std::thread> threads;
  for (int k = 0; k < 2; ++k) {
    threads.emplace_back([&, k] {
      const std::string w = shared + "/c-two-" + std::to_string(k);
      std::vector<std::string> a = Campaign(w + "/out", programs);
      a.insert(a.end(), {"--shard", std::to_string(k) + "/2"});
      shards[k] = slurm.Run(Sandboxed(a, w), RunLabel{});
    });
  }
  for (std::thread& th : threads) th.join();
  const double two_wall = Since(t);
  if (Programs(shards[0]) + Programs(shards[1]) != programs) {
    return Fail("2-shard campaign failed");
  }
  campaign["local_programs_per_second"] = programs / local_wall;
  campaign["slurm1_programs_per_second"] = programs / one_wall;
  campaign["slurm2_programs_per_second"] = programs / two_wall;
  campaign["slurm1_vs_local"] = local_wall / one_wall;
  campaign["slurm2_vs_local"] = local_wall / two_wall;
  campaign["slurm2_vs_slurm1"] = one_wall / two_wall;
  out["campaign"] = std::move(campaign);

  // 3. The store's write rate per finding.
  StatusOr<Json> rate = StoreWriteRate(shared + "/store", findings);
  if (!rate.ok()) return Fail(rate.status().message());
  out["store"] = *rate;
  std::printf("%s\n", out.DumpPretty().c_str());
  return 0;
}

}  // namespace
}  // namespace trench::orchestrator

int main(int argc, char** argv) {
  return trench::orchestrator::Main(argc, argv);
}
