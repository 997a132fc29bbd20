// The Slurm executor (orchestrator/slurm/slurm_executor.h) on a real
// single-node cluster the suite starts (label "slurm"): runs as jobs with
// their ids in the store, the start-up checks, a requeue after a job is
// cancelled from outside or its node fails, reattachment to the jobs a killed
// daemon left (none submitted twice), and a drain that cancels its own jobs
// only.
#include "orchestrator/slurm/slurm_executor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "base/scoped_temp_dir.h"
#include "orchestrator/pipeline/fuzz_shards.h"
#include "orchestrator/slurm/slurm_job_records.h"
#include "orchestrator/store/job_queue.h"
#include "orchestrator/store/store.h"
#include "sandbox/run_files.h"
#include "tests/orchestrator/slurm/slurm_cluster_suite.h"

namespace trench::orchestrator::slurm {
namespace {

namespace fs = std::filesystem;

class SlurmClusterExecutorTest : public testing::SlurmClusterSuite {
 protected:
  void SetUp() override {
    SlurmClusterSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    StatusOr<ScopedTempDir> dir =
        ScopedTempDir::Make("/tmp", "exec-store", 0700);
    ASSERT_TRUE(dir.ok());
    store_dir_ = std::make_unique<ScopedTempDir>(std::move(*dir));
    StatusOr<std::unique_ptr<Store>> store =
        Store::Open(store_dir_->path() + "/store.db", StoreOptions());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(*store);
    prefix_ = "trench-t" + std::to_string(::getpid() % 100000) + "-" +
              std::to_string(++counter_);
  }

  SlurmExecutorOptions Options() const {
    SlurmExecutorOptions o;
    o.run.trench_binary = std::string(TRENCH_BINARY_DIR) + "/trench";
    o.run.shared_dir = cluster_->shared_dir();
    o.run.partition = testing::SlurmCluster::kPartition;
    o.run.job_name_prefix = prefix_;
    o.run.poll_seconds = 0.1;
    o.client.slurm_conf = cluster_->conf();
    return o;
  }
  std::unique_ptr<SlurmExecutor> Make() const {
    StatusOr<std::unique_ptr<SlurmExecutor>> e =
        SlurmExecutor::Create(Options());
    EXPECT_TRUE(e.ok()) << e.status().message();
    return e.ok() ? std::move(*e) : nullptr;
  }
  // A shell command in a fresh work dir on the shared filesystem.
  sandbox::Options Shell(const std::string& name, const std::string& script) {
    const std::string work = cluster_->shared_dir() + "/" + prefix_ + name;
    fs::create_directories(work);
    sandbox::Options o;
    o.argv = {"/bin/sh", "-c", script};
    o.work_dir = work;
    o.limits.wall_seconds = 120;
    return o;
  }
  RunLabel Label(int64_t job, int seq) const {
    return RunLabel{
        .job_id = job, .attempt = 1, .seq = seq, .store = store_.get()};
  }
  // The record of `name` once it has a Slurm id and `state` (up to 60 s).
  SlurmJobRecord WaitForRecord(const std::string& name,
                               const std::string& state) {
    for (int i = 0; i < 600; ++i) {
      // A connection of this thread's own: the store's is the runner's.
      StatusOr<std::unique_ptr<Store>> s =
          Store::Open(store_dir_->path() + "/store.db", StoreOptions());
      if (s.ok()) {
        StatusOr<std::optional<SlurmJobRecord>> r =
            GetJobRecord(s->get(), name);
        if (r.ok() && r->has_value() && (*r)->slurm_id &&
            (*r)->state == state) {
          return **r;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "no record of " << name << " in state " << state;
    return {};
  }
  // The record of `name` once its job runs and the program itself has
  // started (written its first line to work_dir/starts).
  SlurmJobRecord WaitForProgram(const std::string& name,
                                const std::string& work_dir) {
    SlurmJobRecord rec = WaitForRecord(name, "RUNNING");
    for (int i = 0;
         i < 600 && rec.slurm_id && !fs::exists(work_dir + "/starts"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return rec;
  }
  // What a daemon killed by SIGKILL leaves for run 0 of queue job `job`:
  // the request, the record, and its Slurm job submitted (the id recorded
  // when `record_id`). Returns the job's name.
  std::string LeaveJob(int64_t job, const sandbox::Options& o, bool record_id) {
    const SlurmExecutorOptions opts = Options();
    const std::string name = prefix_ + "-j" + std::to_string(job) + "-r0";
    const std::string dir = opts.run.shared_dir + "/runs/" + name;
    fs::create_directories(dir);
    EXPECT_TRUE(sandbox::WriteRunRequest(dir, o).ok());
    SlurmJobRecord rec{
        .name = name, .job_id = job, .attempt = 1, .submitted_ms = 1};
    EXPECT_TRUE(RecordSubmitting(store_.get(), rec).ok());
    StatusOr<int64_t> id =
        SlurmClient(opts.client).Submit(RunJobSpec(opts.run, o, name, dir));
    EXPECT_TRUE(id.ok()) << id.status().message();
    if (record_id && id.ok()) {
      EXPECT_TRUE(RecordSlurmId(store_.get(), name, *id).ok());
    }
    return name;
  }
  // A run of `echo start >> starts; sleep; echo done` whose first job was
  // lost in `lost_state`: submitted again once, and ended as it would have.
  void ExpectLostOnceThenDone(const SlurmExecutor& e,
                              const StatusOr<sandbox::Result>& r,
                              const sandbox::Options& o,
                              const std::string& name,
                              const std::string& lost_state) {
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->ok()) << r->Summary();
    EXPECT_EQ(r->stdout_data, "done\n");
    EXPECT_EQ(testing::ReadAll(o.work_dir + "/starts"), "start\nstart\n");
    const ExecutorStats stats = e.Stats();
    EXPECT_EQ(stats.requeued, 1);
    ASSERT_EQ(stats.runs_by_state.count(lost_state), 1u) << lost_state;
    EXPECT_EQ(stats.runs_by_state.at(lost_state), 1);
    EXPECT_EQ(stats.runs_by_state.at("COMPLETED"), 1);
    StatusOr<std::optional<SlurmJobRecord>> rec =
        GetJobRecord(store_.get(), name);
    ASSERT_TRUE(rec.ok() && rec->has_value());
    EXPECT_EQ((*rec)->requeues, 1);
    EXPECT_TRUE((*rec)->finished);
  }
  // Our jobs Slurm knows of (queued, running or recently ended).
  size_t JobsNamed(const std::string& name) {
    SlurmClient client(ClientOptions{.slurm_conf = cluster_->conf()});
    StatusOr<std::vector<JobInfo>> jobs = client.ListJobs(name);
    EXPECT_TRUE(jobs.ok()) << jobs.status().message();
    size_t n = 0;
    for (const JobInfo& j : jobs.ok() ? *jobs : std::vector<JobInfo>{}) {
      n += j.name == name;
    }
    return n;
  }

  static inline int counter_ = 0;
  std::unique_ptr<ScopedTempDir> store_dir_;
  std::unique_ptr<Store> store_;
  std::string prefix_;
};

TEST_F(SlurmClusterExecutorTest, ARunIsAJobWithItsIdStoredAndTheLocalResult) {
  std::unique_ptr<SlurmExecutor> e = Make();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->kind(), "slurm");
  StatusOr<sandbox::Result> r =
      e->Run(Shell("plain", "echo out; echo err >&2; exit 7"), Label(41, 0));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->exited);
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_EQ(r->stdout_data, "out\n");
  StatusOr<std::optional<SlurmJobRecord>> rec =
      GetJobRecord(store_.get(), prefix_ + "-j41-r0");
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_TRUE((*rec)->finished);
  EXPECT_EQ((*rec)->state, "COMPLETED");
  EXPECT_EQ((*rec)->job_id, 41);
  EXPECT_EQ((*rec)->attempt, 1);
  ASSERT_TRUE((*rec)->slurm_id.has_value());
  EXPECT_GT(*(*rec)->slurm_id, 0);
  const ExecutorStats s = e->Stats();
  EXPECT_EQ(s.kind, "slurm");
  EXPECT_EQ(s.runs_by_state.at("COMPLETED"), 1);
  EXPECT_EQ(s.queue_wait_count, 1);
  EXPECT_EQ(s.runtime_count, 1);
  EXPECT_EQ(e->total_runs(), 1);
  EXPECT_FALSE(e->MayHaveLiveRuns(41, store_.get()));
  // Its request and result files are gone; the work dir stays.
  EXPECT_FALSE(
      fs::exists(cluster_->shared_dir() + "/runs/" + prefix_ + "-j41-r0"));
  // A work dir outside the shared directory never reaches Slurm.
  sandbox::Options elsewhere = Shell("x", "true");
  elsewhere.work_dir = "/tmp";
  EXPECT_EQ(e->Run(elsewhere, Label(41, 1)).status().code(),
            StatusCode::kInvalidArgument);
}

// A sandboxed run as a job reports what the same run reports here,
// hostile parts included: it writes beside its work dir, and it tries to
// forge its own result and rewrite its request in the run's directory on
// the shared filesystem (root's, 0700: refused), which would make
// run-sandboxed, as root on the node, report or run something else.
TEST_F(SlurmClusterExecutorTest, AHostileRunAsAJobReportsTheLocalResult) {
  std::unique_ptr<SlurmExecutor> e = Make();
  ASSERT_NE(e, nullptr);
  const std::string run_dir =
      cluster_->shared_dir() + "/runs/" + prefix_ + "-j48-r0";
  auto options = [&](const std::string& name) {
    return Shell(name,
                 "echo x > ../escaped 2>/dev/null; "
                 "echo '{}' > " +
                     run_dir +
                     "/result.json 2>/dev/null; "
                     "echo '{}' > " +
                     run_dir +
                     "/request.json 2>/dev/null; "
                     "echo out; echo err >&2; "
                     "test -e ../escaped && exit 9; exit 7");
  };
  StatusOr<sandbox::Result> local = sandbox::Run(options("local"));
  ASSERT_TRUE(local.ok()) << local.status().message();
  StatusOr<sandbox::Result> remote = e->Run(options("remote"), Label(48, 0));
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  StatusOr<std::optional<SlurmJobRecord>> rec =
      GetJobRecord(store_.get(), prefix_ + "-j48-r0");
  ASSERT_TRUE(rec.ok() && rec->has_value() && (*rec)->slurm_id);
  EXPECT_GT(*(*rec)->slurm_id, 0);
  for (const sandbox::Result* r : {&*local, &*remote}) {
    EXPECT_TRUE(r->exited);
    EXPECT_EQ(r->exit_code, 7) << r->Summary();
    EXPECT_EQ(r->stdout_data, "out\n");
    EXPECT_TRUE(r->stderr_data.ends_with("err\n")) << r->stderr_data;
  }
  EXPECT_EQ(remote->stderr_data, local->stderr_data);  // The same refusals.
  EXPECT_EQ(remote->isolation, local->isolation);
  EXPECT_EQ(remote->namespaced, local->namespaced);
  EXPECT_FALSE(fs::exists(cluster_->shared_dir() + "/escaped"));
}

TEST_F(SlurmClusterExecutorTest, StartUpRefusesABadPartitionOrMissingCommands) {
  SlurmExecutorOptions o = Options();
  o.run.partition = "gpu-large";
  StatusOr<std::unique_ptr<SlurmExecutor>> bad = SlurmExecutor::Create(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(bad.status().message(),
            "executor slurm: Slurm partition 'gpu-large' does not exist "
            "(sinfo shows: trench)");
  o = Options();
  o.client.bin_dir = "/nonexistent/slurm/bin";
  bad = SlurmExecutor::Create(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "executor slurm: sinfo not found in /nonexistent/slurm/bin "
            "(install slurm-client, or set executor.slurm_bin_dir)");
  o = Options();
  o.run.shared_dir = "/nonexistent/shared";
  bad = SlurmExecutor::Create(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("shared_dir /nonexistent/shared is "
                                        "not a directory"),
            std::string::npos)
      << bad.status().message();
}

// As when its node dies: the job is cancelled by someone else. The run is
// submitted again and ends as it would have; the step sees one result.
TEST_F(SlurmClusterExecutorTest, AJobCancelledOutsideIsRequeuedAndEndsTheSame) {
  std::unique_ptr<SlurmExecutor> e = Make();
  ASSERT_NE(e, nullptr);
  const std::string name = prefix_ + "-j42-r0";
  sandbox::Options o =
      Shell("requeue", "echo start >> starts; sleep 3; echo done");
  std::thread killer([&] {
    SlurmJobRecord rec = WaitForProgram(name, o.work_dir);
    if (!rec.slurm_id) return;
    SlurmClient client(ClientOptions{.slurm_conf = cluster_->conf()});
    EXPECT_TRUE(client.Cancel(*rec.slurm_id).ok());
  });
  StatusOr<sandbox::Result> r = e->Run(o, Label(42, 0));
  killer.join();
  ExpectLostOnceThenDone(*e, r, o, name, "CANCELLED");
}

// A node that fails under a running job (scontrol sets it DOWN, which
// kills the job as a dead node would): Slurm reports NODE_FAIL, the run is
// submitted again, waits for the node to come back, and ends as if nothing
// happened; the step's attempt is the same.
TEST_F(SlurmClusterExecutorTest, ANodeFailureRequeuesTheRunAndItEndsTheSame) {
  std::unique_ptr<SlurmExecutor> e = Make();
  ASSERT_NE(e, nullptr);
  const std::string name = prefix_ + "-j43-r0";
  sandbox::Options o =
      Shell("nodefail", "echo start >> starts; sleep 3; echo done");
  Status down = Status::Ok(), up = Status::Ok();
  std::thread failer([&] {
    if (!WaitForProgram(name, o.work_dir).slurm_id) return;
    down = cluster_->SetNodeState("DOWN");
    std::this_thread::sleep_for(std::chrono::seconds(2));
    up = cluster_->SetNodeState("RESUME");
  });
  StatusOr<sandbox::Result> r = e->Run(o, Label(43, 0));
  failer.join();
  ASSERT_TRUE(down.ok()) << down.message();
  ASSERT_TRUE(up.ok()) << up.message();
  ExpectLostOnceThenDone(*e, r, o, name, "NODE_FAIL");
}

// What a daemon killed by SIGKILL leaves: a request, a stored record, and
// its job running (or already ended). A new executor on the same store
// waits for that job instead of submitting the run again, also when the
// crash came between sbatch and the id's record.
TEST_F(SlurmClusterExecutorTest,
       ARestartedExecutorReattachesAndNeverResubmits) {
  const SlurmExecutorOptions opts = Options();
  SlurmClient client(opts.client);
  auto leave = [&](int64_t job, const sandbox::Options& o, bool record_id) {
    return LeaveJob(job, o, record_id);
  };
  // The runs' options as the executor would send them: with its defaults.
  auto as_sent = [](sandbox::Options o) {
    AddRunnerDefaults(ToolRunnerOptions(), &o);
    return o;
  };
  const sandbox::Options running =
      Shell("left-running", "echo run >> runs; sleep 3; echo finished");
  const sandbox::Options no_id =
      Shell("left-no-id", "echo run >> runs; sleep 2; echo finished");
  const sandbox::Options different =
      Shell("left-different", "echo old >> runs; sleep 60");
  const std::string a = leave(43, as_sent(running), true);
  const std::string b = leave(44, as_sent(no_id), false);
  const std::string c = leave(45, as_sent(different), true);
  std::unique_ptr<SlurmExecutor> e = Make();
  ASSERT_NE(e, nullptr);
  StatusOr<std::vector<std::string>> left = e->LeftByPreviousRun(store_.get());
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(left->size(), 3u);
  EXPECT_TRUE(e->MayHaveLiveRuns(43, store_.get()));
  for (auto [job, o] :
       {std::pair<int64_t, sandbox::Options>{43, running}, {44, no_id}}) {
    StatusOr<sandbox::Result> r = e->Run(o, Label(job, 0));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->stdout_data, "finished\n");
    EXPECT_EQ(testing::ReadAll(o.work_dir + "/runs"), "run\n")
        << "submitted twice";
  }
  EXPECT_EQ(JobsNamed(a), 1u);
  EXPECT_EQ(JobsNamed(b), 1u);
  // A left job for another request at the same place is the old daemon's:
  // it is cancelled, and the run asked for now is submitted.
  sandbox::Options now = Shell("left-different", "echo new >> runs");
  StatusOr<sandbox::Result> r = e->Run(now, Label(45, 0));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(JobsNamed(c), 2u);
  EXPECT_TRUE(e->LeftByPreviousRun(store_.get())->empty());
  // What /metrics shows of it (trench_executor_restart_runs_total).
  EXPECT_EQ(e->Stats().restart_runs,
            (std::map<std::string, int64_t>{{"changed", 1},
                                            {"finished", 0},
                                            {"reattached", 2},
                                            {"unreadable", 0},
                                            {"unsubmitted", 0}}));
}

// Jobs a killed daemon left for queue jobs that will not run again (done,
// or gone from the store) are cancelled at start-up, by id or, when the
// id was never recorded, by name; a job whose queue job is still queued
// is left to reattach.
TEST_F(SlurmClusterExecutorTest, JobsLeftForFinishedQueueJobsAreCancelled) {
  const SlurmExecutorOptions opts = Options();
  SlurmClient client(opts.client);
  JobQueue queue(store_.get());
  StatusOr<EnqueueResult> done = queue.Enqueue("fuzz", Json::MakeObject());
  StatusOr<EnqueueResult> waiting = queue.Enqueue("fuzz", Json::MakeObject());
  ASSERT_TRUE(done.ok() && waiting.ok());
  StatusOr<std::vector<Job>> leased = queue.Lease("old-daemon", 1, 60000);
  ASSERT_TRUE(leased.ok() && leased->size() == 1u);
  ASSERT_EQ((*leased)[0].id, done->id);
  ASSERT_TRUE(queue.Complete(LeaseOf((*leased)[0]), Json::MakeObject()).ok());
  auto leave = [&](int64_t job, bool record_id) {
    return LeaveJob(job, Shell("orphan" + std::to_string(job), "sleep 120"),
                    record_id);
  };
  const std::string of_done = leave(done->id, true);
  const std::string of_gone = leave(999, false);
  const std::string of_waiting = leave(waiting->id, true);
  std::unique_ptr<SlurmExecutor> e = Make();
  ASSERT_NE(e, nullptr);
  StatusOr<std::vector<std::string>> cancelled = e->CancelOrphans(store_.get());
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().message();
  EXPECT_EQ(std::set<std::string>(cancelled->begin(), cancelled->end()),
            (std::set<std::string>{of_done, of_gone}));
  StatusOr<std::vector<std::string>> left = e->LeftByPreviousRun(store_.get());
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(*left, std::vector<std::string>{of_waiting});
  auto state_of = [&](const std::string& name) {
    StatusOr<std::vector<JobInfo>> jobs = client.ListJobs(name);
    return jobs.ok() && jobs->size() == 1u ? (*jobs)[0].state
                                           : JobState::kUnknown;
  };
  for (int i = 0; i < 100 && (state_of(of_done) != JobState::kCancelled ||
                              state_of(of_gone) != JobState::kCancelled);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(state_of(of_done), JobState::kCancelled);
  EXPECT_EQ(state_of(of_gone), JobState::kCancelled);
  EXPECT_NE(state_of(of_waiting), JobState::kCancelled);
  StatusOr<std::optional<SlurmJobRecord>> waiting_rec =
      GetJobRecord(store_.get(), of_waiting);
  ASSERT_TRUE(waiting_rec.ok() && waiting_rec->has_value());
  ASSERT_TRUE((*waiting_rec)->slurm_id.has_value());
  EXPECT_TRUE(client.Cancel(*(*waiting_rec)->slurm_id).ok());
}

// A campaign as 2 Slurm shards finds the signatures one job finds on the
// same seed, also when one shard's job is cancelled while it runs (as
// when its node dies): that shard is requeued and ends the same. The
// target is a script that crashes on programs with some opcodes, the
// opcode in its message (one signature per opcode).
TEST_F(SlurmClusterExecutorTest,
       TwoShardsFindTheSignaturesOfOneEvenIfOneIsLost) {
  std::unique_ptr<SlurmExecutor> e = Make();
  ASSERT_NE(e, nullptr);
  const std::string bin = TRENCH_BINARY_DIR;
  const std::string target_dir =
      cluster_->shared_dir() + "/" + prefix_ + "-target";
  fs::create_directories(target_dir);
  const std::string target = target_dir + "/hlo-run";
  std::ofstream(target)
      << "#!/bin/sh\n"
      << "op=$(grep -o -m1 -E ' (multiply|maximum|negate)\\(' \"$1\" | "
         "head -1 | tr -d ' (')\n"
      << "if [ -n \"$op\" ]; then echo \"internal error in $op\" >&2; "
         "kill -ABRT $$; fi\n"
      << "exec '" << bin << "/hlo-run' \"$@\"\n";
  ::chmod(target.c_str(), 0755);
  auto campaign = [&](const std::string& name, int k, int n) {
    sandbox::Options o = Shell(name, "");
    o.argv = {bin + "/hlo-fuzz",
              "--max-programs",
              "40",
              "--budget",
              "10m",
              "--jobs",
              "1",
              "--seed",
              "77",
              "--no-progress",
              "--out",
              o.work_dir + "/out",
              "--target",
              "hlo-run",
              "--hlo-run",
              target,
              "--focus",
              "ops:multiply,maximum,negate,add,abs"};
    o.read_only_paths = {bin, target_dir};
    if (n > 1) {
      o.argv.insert(o.argv.end(),
                    {"--shard", std::to_string(k) + "/" + std::to_string(n)});
    }
    return o;
  };
  auto summary = [](const StatusOr<sandbox::Result>& r) {
    EXPECT_TRUE(r.ok()) << r.status().message();
    StatusOr<Json> j = ParseJson(r.ok() ? r->stdout_data : "");
    EXPECT_TRUE(j.ok()) << (r.ok() ? r->stderr_data : "");
    return j.ok() ? *j : Json::MakeObject();
  };
  auto sigs = [](const Json& s) {
    std::set<std::string> out;
    if (const Json* f = s.Find("findings"); f && f->is_array()) {
      for (const Json& one : f->array()) {
        if (const Json* sig = one.Find("sig")) out.insert(sig->string_value());
      }
    }
    return out;
  };
  const Json one = summary(e->Run(campaign("one", 0, 1), Label(50, 0)));
  // Shard 1's job is cancelled from outside once it runs.
  std::thread killer([&] {
    SlurmJobRecord rec = WaitForRecord(prefix_ + "-j51-r1", "RUNNING");
    if (!rec.slurm_id) return;
    SlurmClient client(ClientOptions{.slurm_conf = cluster_->conf()});
    EXPECT_TRUE(client.Cancel(*rec.slurm_id).ok());
  });
  std::vector<Json> shards(2);
  std::vector<std::thread> runs;
  for (int k = 0; k < 2; ++k) {
    runs.emplace_back([&, k] {
      StatusOr<std::unique_ptr<Store>> own =
          Store::Open(store_dir_->path() + "/store.db", StoreOptions());
      ASSERT_TRUE(own.ok());
      RunLabel label = Label(51, k);
      label.store = own->get();
      shards[k] =
          summary(e->Run(campaign("shard" + std::to_string(k), k, 2), label));
    });
  }
  for (std::thread& t : runs) t.join();
  killer.join();
  StatusOr<Json> merged = MergeFuzzSummaries(shards);
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ((*merged)["programs"].int64_value(), 40);
  EXPECT_EQ(one.Find("programs")->int64_value(), 40);
  EXPECT_GT(sigs(one).size(), 1u) << one.Dump();
  EXPECT_EQ(sigs(*merged), sigs(one));
  EXPECT_EQ((*merged)["statuses"].Dump(), one.Find("statuses")->Dump());
  EXPECT_EQ(e->Stats().requeued, 1);
}

// A job still RUNNING past its run's wall limit plus the grace is
// cancelled by the executor and reported as timed out. (The node's sandbox
// normally ends the run at its wall limit first; a negative grace makes
// the executor act before it does.)
TEST_F(SlurmClusterExecutorTest, AJobRunningPastItsLimitIsCancelledAsATimeout) {
  SlurmExecutorOptions o = Options();
  o.timeout_grace_seconds = -2.5;
  StatusOr<std::unique_ptr<SlurmExecutor>> e = SlurmExecutor::Create(o);
  ASSERT_TRUE(e.ok()) << e.status().message();
  sandbox::Options run = Shell("past-limit", "sleep 60");
  run.limits.wall_seconds = 3;
  StatusOr<sandbox::Result> r = (*e)->Run(run, Label(47, 0));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->ok());
  EXPECT_LT(r->wall_seconds, 30);
  StatusOr<std::optional<SlurmJobRecord>> rec =
      GetJobRecord(store_.get(), prefix_ + "-j47-r0");
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_TRUE((*rec)->finished);
  EXPECT_EQ((*rec)->state, "CANCELLED");
  SlurmClient client(ClientOptions{.slurm_conf = cluster_->conf()});
  for (int i = 0; i < 100; ++i) {
    StatusOr<JobInfo> q = client.Query(*(*rec)->slurm_id);
    if (q.ok() && IsFinished(q->state)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(client.Query(*(*rec)->slurm_id)->state, JobState::kCancelled);
}

// Drain (KillAll) cancels the executor's own jobs, and only those.
TEST_F(SlurmClusterExecutorTest, DrainCancelsItsOwnJobsOnly) {
  SlurmClient client(ClientOptions{.slurm_conf = cluster_->conf()});
  JobSpec other;
  other.name = "someone-else-" + prefix_;
  other.partition = testing::SlurmCluster::kPartition;
  other.work_dir = cluster_->shared_dir();
  other.argv = {"/bin/sleep", "120"};
  other.time_limit_minutes = 5;
  StatusOr<int64_t> theirs = client.Submit(other);
  ASSERT_TRUE(theirs.ok()) << theirs.status().message();
  std::unique_ptr<SlurmExecutor> e = Make();
  ASSERT_NE(e, nullptr);
  const std::string name = prefix_ + "-j46-r0";
  StatusOr<sandbox::Result> r = IoError("not run");
  std::thread run(
      [&] { r = e->Run(Shell("drain", "sleep 120"), Label(46, 0)); });
  const SlurmJobRecord rec = WaitForRecord(name, "RUNNING");
  e->KillAll();
  run.join();
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition)
      << r.status().message();
  ASSERT_TRUE(rec.slurm_id.has_value());
  for (int i = 0; i < 100; ++i) {
    StatusOr<JobInfo> mine = client.Query(*rec.slurm_id);
    if (mine.ok() && IsFinished(mine->state)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(client.Query(*rec.slurm_id)->state, JobState::kCancelled);
  StatusOr<JobInfo> still = client.Query(*theirs);
  ASSERT_TRUE(still.ok());
  EXPECT_FALSE(IsFinished(still->state)) << JobStateName(still->state);
  EXPECT_EQ(e->Run(Shell("late", "true"), Label(46, 1)).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_TRUE(client.Cancel(*theirs).ok());
}

}  // namespace
}  // namespace trench::orchestrator::slurm
