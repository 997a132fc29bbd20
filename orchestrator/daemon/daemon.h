// `trench serve`: the daemon (DESIGN.md "The daemon").
//
// One Boost.Asio event loop carries the HTTP API, the signals and the
// completions of the sandboxed tool runs (builds, fuzzing, hlo-diff /
// hlo-reduce / hlo-bisect). The store-bound work runs off the loop, each
// thread on its own store connection, so that the API never waits for it:
// a poller thread (every poll_seconds: the repo watcher, the reconciler,
// continuous fuzzing, expired leases) and the swarm's worker threads (one
// per role instance, plus the orchestrator's own), which lease the steps
// and wait for their tool runs. Jobs live in the store's durable queue
// (job_queue.h); each pipeline step is one job kind, and its completion is one
// of the events
//   commit_landed, build_ready, finding, report_received, reproduced,
//   minimized, localized, culprit_found, patch_drafted, patch_verified,
//   reviewed, fix_verified
// logged (spdlog) and recorded as an event row: a bug's state change, or
// for commit_landed / build_ready the commit's (Store::RecordCommitEvent,
// once per commit across crashes and restarts).
//
// Shutdown: SIGTERM / SIGINT (or RequestStop()) stops taking work, lets
// the running steps finish within `drain_seconds` (then kills them and
// gives their jobs back to the queue), and returns. A kill -9 loses
// nothing: on start the daemon takes back its previous incarnation's
// leases (RequeueOwner) and re-runs them.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "orchestrator/config/daemon_config.h"

namespace trench::orchestrator {

class Daemon {
 public:
  // Opens the store under config.var_dir (creating the layout), binds the
  // API, checks the repo and the tools, and writes var/daemon.json
  // {"pid", "address", "port"} (the bound port). One daemon per var dir
  // (var/daemon.lock). Errors name what is wrong.
  static StatusOr<std::unique_ptr<Daemon>> Create(const DaemonConfig& config);
  ~Daemon();

  // Runs the event loop until a stop is requested (signal or RequestStop)
  // and the drain is over. Returns the error that stopped it, if any.
  Status Run();
  // Thread-safe; async-signal-unsafe (use SIGTERM for signals).
  void RequestStop();
  uint16_t api_port() const;  // The bound port (config may say 0).

 private:
  struct Impl;
  explicit Daemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace trench::orchestrator
