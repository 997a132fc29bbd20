// Runs sandboxed processes for the daemon's worker threads: each run is
// spawned on the daemon's event loop (sandbox::Spawn: completion through a
// pidfd on that loop, no thread per child), under a global cap on
// concurrent runs, while the calling worker thread waits for its result.
#pragma once

#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "base/status.h"
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

class ToolRunner {
 public:
  // `ioc` must be run by a thread that outlives every run (the sandbox's
  // PR_SET_PDEATHSIG ties each run to the spawning thread).
  ToolRunner(boost::asio::io_context& ioc, int max_concurrent);

  // Waits for a free slot, runs `options` on the loop, and waits for the
  // end. REQUIRES: not called on the loop's thread. Errors: Spawn's, and
  // kFailedPrecondition "shutting down" once KillAll() was called.
  StatusOr<sandbox::Result> Run(const sandbox::Options& options);

  // Kills every run in flight and refuses new ones (graceful shutdown
  // after the drain time). Thread-safe.
  void KillAll();
  int running() const;
  int64_t total_runs() const;

 private:
  boost::asio::io_context& ioc_;
  const int max_concurrent_;
  mutable std::mutex mu_;
  std::condition_variable slot_free_;
  int running_ = 0;
  int64_t total_runs_ = 0;
  bool killed_ = false;
  std::set<std::shared_ptr<sandbox::Process>> in_flight_;
};

}  // namespace trench::orchestrator
