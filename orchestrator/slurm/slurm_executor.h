// The Slurm executor (pipeline/executor.h, kind "slurm"): every sandboxed
// run of the daemon is a Slurm job that runs `trench run-sandboxed DIR` on
// a compute node, with the same sandbox and limits as a local run and the
// same Result (slurm_run.h).
//
// - Names: a run of queue job J at place S is the Slurm job
//   "<prefix>-j<J>-r<S>", its request and result in
//   <shared_dir>/runs/<name>/. The prefix is the daemon's own (one daemon
//   never touches another's jobs).
// - Records: the Slurm id goes into the store with the job and its lease
//   attempt (slurm_job_records.h) before the run is waited for.
// - Reattachment: a run whose record a previous daemon left unfinished,
//   with the same request, is not submitted again: the executor waits for
//   its job (still in Slurm's queue: squeue), or reads the result it left.
// - Requeue: a job that ends in NODE_FAIL, PREEMPTED or BOOT_FAIL, or that
//   someone else cancelled (as when its node is lost), is submitted again,
//   up to max_requeues times, inside the same step attempt: the step's
//   failure budget is not used. Beyond that the run fails as transient.
// - Cancellation: KillAll (drain) and a run that has been RUNNING longer
//   than its wall limit plus a grace scancel the jobs this executor
//   started, and only those.
// - At most max_jobs jobs are pending or running at once.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "orchestrator/pipeline/executor.h"
#include "orchestrator/pipeline/tool_runner.h"
#include "orchestrator/slurm/slurm_client.h"
#include "orchestrator/slurm/slurm_run.h"

namespace trench::orchestrator::slurm {

struct SlurmExecutorOptions {
  SlurmRunOptions run;  // trench binary, shared_dir, partition, ...
  ClientOptions client;
  int max_jobs = 16;
  int time_limit_minutes = 0;  // 0: each run's wall limit + 2 minutes.
  int max_requeues = 5;
  // A RUNNING job is cancelled this long after its wall limit.
  double timeout_grace_seconds = 60;
};

// The daemon's job name prefix: "trench-" and 8 hex digits of
// sha256(var_dir), so that daemons sharing a cluster keep apart.
std::string DaemonJobPrefix(const std::string& var_dir);

class SlurmExecutor : public Executor {
 public:
  // Checks what the daemon needs at start-up: sinfo, sbatch, squeue,
  // scontrol and scancel found; the partition exists and is up; shared_dir
  // is a writable directory; the trench binary is absolute. Errors:
  // kFailedPrecondition naming the problem.
  static StatusOr<std::unique_ptr<SlurmExecutor>> Create(
      SlurmExecutorOptions options);

  // What every run gets (masked paths, memory and process limits), as
  // the local executor adds them. Call before the first run.
  void SetDefaults(ToolRunnerOptions defaults) {
    defaults_ = std::move(defaults);
  }
  // The names of the jobs a previous daemon on this store started and did
  // not see end (their steps reattach when they run again).
  StatusOr<std::vector<std::string>> LeftByPreviousRun(Store* store) const;
  // Of those, the jobs whose queue job will not run again (done, failed,
  // parked by hand, or gone): cancelled (by id, or by their exact name when
  // the id was never recorded) and marked finished, so that nothing keeps
  // running for nobody. Returns their names. Errors: the store's, and
  // squeue's or scancel's (transient: the next start-up tries again).
  StatusOr<std::vector<std::string>> CancelOrphans(Store* store);

  std::string kind() const override { return "slurm"; }
  bool RunsOnThisHost() const override { return false; }
  StatusOr<sandbox::Result> Run(const sandbox::Options& options,
                                const RunLabel& label) override;
  void KillAll() override;
  bool MayHaveLiveRuns(int64_t job_id, Store* store) const override;
  int running() const override;
  int64_t total_runs() const override;
  ExecutorStats Stats() const override;

  const SlurmClient& client() const { return client_; }

 private:
  explicit SlurmExecutor(SlurmExecutorOptions options);

  // One job of a run: submitted (or found again) and waited for;
  // `requeue` set when the cluster lost it.
  StatusOr<sandbox::Result> RunOnce(const sandbox::Options& options,
                                    const RunLabel& label,
                                    const std::string& name,
                                    const std::string& dir, int requeues,
                                    bool* requeue);
  // The job a previous daemon left for `name` (queued, running, or ended
  // with its result in `dir`), when its request is `request` (else it is
  // cancelled); 0 when there is none. Errors: the store's and squeue's
  // (transient: the step retries).
  StatusOr<int64_t> FindLeftJob(Store* store, const std::string& name,
                                const std::string& dir,
                                const std::string& request);
  void Track(const std::string& name, int64_t id);
  void Untrack(const std::string& name);
  void Count(const std::string& final_state, double wait, double run);
  // One more run of a previous process met again (ExecutorStats).
  void CountRestart(const std::string& outcome);

  const SlurmExecutorOptions options_;
  // When this executor was made (ms): job records submitted up to then
  // are a previous process's; restart_runs counts only those (a step of
  // this process retried after a transient error meets its own).
  const int64_t started_ms_;
  ToolRunnerOptions defaults_;
  SlurmClient client_;
  mutable std::mutex mu_;
  std::condition_variable slot_free_;
  bool killed_ = false;
  int in_flight_ = 0;  // Runs holding a slot.
  int64_t total_runs_ = 0;
  int64_t adhoc_ = 0;  // Runs outside the queue, for their names.
  std::map<std::string, int64_t> jobs_;     // Name -> Slurm id, live.
  std::map<std::string, JobState> states_;  // Name -> last state seen.
  ExecutorStats stats_;
};

}  // namespace trench::orchestrator::slurm
