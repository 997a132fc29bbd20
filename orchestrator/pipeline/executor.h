// Where the daemon's sandboxed runs execute (issue 22): one interface for
// every run a step makes (build, fuzz campaign or shard, reproduce,
// reduce, localize, bisect build, patch verification), with two kinds:
//
// - "local": the daemon's own host (ToolRunner, tool_runner.h);
// - "slurm": each run is a Slurm job running the same sandbox with the
//   same limits on a compute node (orchestrator/slurm/slurm_executor.h).
//
// Both give the same sandbox::Result for the same Options. A run carries
// its RunLabel: the queue job (and lease attempt) it belongs to and its
// place in that job's sequence of runs. An executor whose runs outlive the
// daemon (Slurm) names each run by the label, so that a daemon restarted
// after SIGKILL finds the run it had started for the same place of the
// same job and waits for it instead of starting it again.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/status.h"
#include "sandbox/sandbox.h"

namespace trench::orchestrator {

class Store;

// Which run of which queue job. job_id 0: a run outside the queue (no
// reattachment).
struct RunLabel {
  int64_t job_id = 0;
  int attempt = 0;         // The lease's attempt (fencing token).
  int seq = 0;             // The run's place among its job's runs (0, 1, ...).
  Store* store = nullptr;  // The calling thread's connection (may be null).
};

// Counters for /metrics, per executor.
struct ExecutorStats {
  std::string kind;  // "local", "slurm".
  // Runs by their last state: for Slurm its job states (PENDING, RUNNING,
  // COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...), for local runs
  // "running", "completed" (exited 0), "failed" (anything else).
  std::map<std::string, int64_t> runs_by_state;
  // From submission (local: asking for a slot) to start, and from start
  // to end, over the runs that started / ended.
  double queue_wait_seconds_sum = 0;
  int64_t queue_wait_count = 0;
  double runtime_seconds_sum = 0;
  int64_t runtime_count = 0;
  int64_t requeued = 0;  // Runs started again after a cluster failure.
  // Runs a previous daemon process had submitted, met again when their
  // step ran after a restart, by outcome: "reattached" (the job itself
  // was followed), "finished" (it had ended: the step asked again, a
  // second job), "changed" (the run asked for now differs: the old job
  // cancelled, a new one submitted), "unreadable" (its request could not
  // be read: the same), "unsubmitted" (the previous process died before
  // Slurm had it: submitted now). Slurm only; every outcome present, 0
  // included.
  std::map<std::string, int64_t> restart_runs;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // "local" or "slurm".
  virtual std::string kind() const = 0;
  // Whether runs execute on the daemon's own host (so that a work dir
  // there may be a tmpfs of this host's).
  virtual bool RunsOnThisHost() const = 0;
  // Runs `options` and waits for its end. REQUIRES: not on the daemon's
  // event loop thread. Errors: kFailedPrecondition "shutting down" after
  // KillAll(); the kind's own (transient ones retryable).
  virtual StatusOr<sandbox::Result> Run(const sandbox::Options& options,
                                        const RunLabel& label) = 0;
  // Ends every run in flight that this executor started (and only those)
  // and refuses new ones. Thread-safe.
  virtual void KillAll() = 0;
  // Whether runs of queue job `job_id` that a previous daemon started may
  // still be going on (their work dirs must be kept for reattachment).
  virtual bool MayHaveLiveRuns(int64_t job_id, Store* store) const {
    (void)job_id;
    (void)store;
    return false;
  }
  virtual int running() const = 0;
  virtual int64_t total_runs() const = 0;
  virtual ExecutorStats Stats() const = 0;
};

}  // namespace trench::orchestrator
