// The local executor (executor.h): runs sandboxed processes for the
// daemon's worker threads on the daemon's own host. Each run is spawned on
// the daemon's event loop (sandbox::Spawn: completion through a pidfd on
// that loop, no thread per child), under a global cap on concurrent runs,
// while the calling worker thread waits for its result.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "orchestrator/pipeline/executor.h"
#include "sandbox/capabilities.h"
#include "sandbox/sandbox.h"

namespace trench::orchestrator {

// The sandbox's start-up report for the daemon's log: the tier runs use
// and every probe's outcome (Capabilities::Describe()). `warning` is set
// when runs use the fallback (no namespaces), because the machine has no
// working tier or because `namespaces_enabled` (config sandbox.namespaces)
// is false; the text then names what is lost.
struct SandboxReport {
  bool warning = false;
  std::string text;
};
SandboxReport DescribeSandbox(const sandbox::Capabilities& caps,
                              bool namespaces_enabled);

// The start-up line on tool runs' scratch dirs (StepContext::Scratch):
// tmpfs mounts of `bytes` and `inodes` (`stale` left by a crash were
// unmounted), or, when `mount_error` is set, a warning that they are not
// bounded and why.
SandboxReport DescribeScratch(const std::string& mount_error, uint64_t bytes,
                              uint64_t inodes, int stale);

// How the daemon keeps runs of `tier` away from its state directory (var:
// store.db, other runs' dirs), with var's mode. Runs mask var (an empty
// tmpfs, their own dir and inputs bound back in) where they have a mount
// namespace: builtin keeps var 0700 (our init, root, binds the dirs in);
// bwrap needs 0711 (it resolves the binds as the run's uid). kNone cannot
// mask: var is 0711 (search, no listing) and the store 0600, and the
// report is a warning saying what stays reachable.
struct StateDirPolicy {
  mode_t var_mode = 0700;
  bool mask = true;
  SandboxReport report;
};
StateDirPolicy StateDirPolicyFor(sandbox::Isolation tier);

// What the runner adds to every run (the daemon's sandbox config).
struct ToolRunnerOptions {
  int max_concurrent = 2;  // Runs at once (at least 1).
  // Each run in flight gets a uid (and the same gid) of its own from
  // [uid_first, uid_first + uid_count), handed back when it ends, so that
  // RLIMIT_NPROC and file ownership never mix runs. 0: runs keep their
  // Options::uid/gid (single-uid mode). Fewer uids than max_concurrent
  // make runs wait for a uid as for a slot.
  uid_t uid_first = 0;
  int uid_count = 0;
  std::vector<std::string> masked_paths;  // Added to every run's.
  // Limits::memory_bytes and total_processes of runs that leave them 0.
  uint64_t memory_bytes = 0;
  uint64_t processes = 0;
};

// What every executor adds to a run's options: the masked paths, and the
// run's memory and process limits where the options leave them 0.
void AddRunnerDefaults(const ToolRunnerOptions& defaults,
                       sandbox::Options* options);

class ToolRunner : public Executor {
 public:
  // `ioc` must be run by a thread that outlives every run (the sandbox's
  // PR_SET_PDEATHSIG ties each run to the spawning thread).
  ToolRunner(boost::asio::io_context& ioc, int max_concurrent);
  ToolRunner(boost::asio::io_context& ioc, ToolRunnerOptions options);

  // Waits for a free slot (and uid), runs `options` with the runner's
  // additions on the loop, and waits for the end. REQUIRES: not called on
  // the loop's thread. Errors: Spawn's, and kFailedPrecondition "shutting
  // down" once KillAll() was called.
  StatusOr<sandbox::Result> Run(const sandbox::Options& options);
  // The same; local runs need no label.
  StatusOr<sandbox::Result> Run(const sandbox::Options& options,
                                const RunLabel& label) override;

  std::string kind() const override { return "local"; }
  bool RunsOnThisHost() const override { return true; }
  // Kills every run in flight and refuses new ones (graceful shutdown
  // after the drain time). Thread-safe.
  void KillAll() override;
  int running() const override;
  int64_t total_runs() const override;
  ExecutorStats Stats() const override;

 private:
  // A free uid's index, or -1 (none, or no range). REQUIRES: mu_ held.
  int FreeUid() const;

  boost::asio::io_context& ioc_;
  const ToolRunnerOptions options_;
  const int max_concurrent_;
  std::vector<bool> uid_used_;  // Per uid of the range.
  mutable std::mutex mu_;
  std::condition_variable slot_free_;
  int running_ = 0;
  int64_t total_runs_ = 0;
  ExecutorStats stats_;  // GUARDED_BY(mu_)
  bool killed_ = false;
  std::set<std::shared_ptr<sandbox::Process>> in_flight_;
};

}  // namespace trench::orchestrator
