#include "orchestrator/pipeline/tool_runner.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>
#include <future>
#include <map>
#include <utility>

namespace trench::orchestrator {

SandboxReport DescribeSandbox(const sandbox::Capabilities& caps,
                              bool namespaces_enabled) {
  SandboxReport r;
  r.text = caps.Describe();
  r.warning = caps.tier() == sandbox::Isolation::kNone;
  if (!namespaces_enabled) {
    const std::string kPrefix = "sandbox: runs use ";
    std::string machine =
        r.text.rfind(kPrefix, 0) == 0 ? r.text.substr(kPrefix.size()) : r.text;
    r.text = kPrefix +
             "NO isolation (sandbox.namespaces is false in the config; "
             "lost: " +
             sandbox::FallbackLoss() + "); the machine offers: " + machine;
    r.warning = true;
  }
  return r;
}

SandboxReport DescribeScratch(const std::string& mount_error, uint64_t bytes,
                              uint64_t inodes, int stale) {
  if (!mount_error.empty()) {
    return {true,
            "scratch: tool runs' work dirs are NOT bounded in bytes or files "
            "(" +
                mount_error + ")"};
  }
  std::string text = "scratch: tool runs' work dirs are tmpfs mounts of " +
                     std::to_string(bytes) + " bytes and " +
                     std::to_string(inodes) + " files";
  if (stale > 0)
    text += " (" + std::to_string(stale) + " stale ones unmounted)";
  return {false, text};
}

StateDirPolicy StateDirPolicyFor(sandbox::Isolation tier) {
  StateDirPolicy p;
  const char* kHidden =
      "runs see none of var/ but their own dir and inputs (masked)";
  switch (tier) {
    case sandbox::Isolation::kBuiltin:
      p.report.text =
          std::string("state dir: var 0700, store 0600; ") + kHidden;
      break;
    case sandbox::Isolation::kBwrap:
      p.var_mode = 0711;
      p.report.text = std::string(
                          "state dir: var 0711 (bwrap resolves its "
                          "binds as the run's uid), store 0600; ") +
                      kHidden;
      break;
    default:
      p.var_mode = 0711;
      p.mask = false;
      p.report.warning = true;
      p.report.text =
          "state dir: var 0711, store 0600, not masked (no mount "
          "namespace): runs cannot list var/ or read the store, but can "
          "open the world-readable inputs (cases, builds) and guess other "
          "runs' paths";
      break;
  }
  return p;
}

ToolRunner::ToolRunner(boost::asio::io_context& ioc, int max_concurrent)
    : ToolRunner(ioc, [max_concurrent] {
        ToolRunnerOptions o;
        o.max_concurrent = max_concurrent;
        return o;
      }()) {}

ToolRunner::ToolRunner(boost::asio::io_context& ioc, ToolRunnerOptions options)
    : ioc_(ioc),
      options_(std::move(options)),
      max_concurrent_(std::max(1, options_.max_concurrent)),
      uid_used_(std::max(0, options_.uid_count), false) {}

namespace {

// Runs in flight on the same work dir (the builds share var/builder) share
// one uid of the range: each run chowns its work dir to its uid, so
// distinct uids would take each other's files (and git's owner check
// would refuse the mirror). Keyed by runner; guarded by the runner's mu_.
struct SharedDir {
  int index;  // Into the runner's uid range.
  int runs;
};
std::map<std::pair<const void*, std::string>, SharedDir>& SharedDirs() {
  static auto* dirs =
      new std::map<std::pair<const void*, std::string>, SharedDir>();
  return *dirs;
}
std::mutex shared_dirs_mu;

}  // namespace

int ToolRunner::FreeUid() const {
  for (size_t i = 0; i < uid_used_.size(); ++i) {
    if (!uid_used_[i]) return static_cast<int>(i);
  }
  return -1;
}

void AddRunnerDefaults(const ToolRunnerOptions& defaults,
                       sandbox::Options* options) {
  options->masked_paths.insert(options->masked_paths.end(),
                               defaults.masked_paths.begin(),
                               defaults.masked_paths.end());
  if (options->limits.memory_bytes == 0)
    options->limits.memory_bytes = defaults.memory_bytes;
  if (options->limits.total_processes == 0)
    options->limits.total_processes = defaults.processes;
}

StatusOr<sandbox::Result> ToolRunner::Run(const sandbox::Options& options,
                                          const RunLabel& label) {
  (void)label;
  return Run(options);
}

ExecutorStats ToolRunner::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  ExecutorStats s = stats_;
  s.kind = kind();
  s.runs_by_state["running"] = running_;
  return s;
}

StatusOr<sandbox::Result> ToolRunner::Run(const sandbox::Options& given) {
  sandbox::Options options = given;
  const auto asked = std::chrono::steady_clock::now();
  const auto dir_key =
      std::make_pair(static_cast<const void*>(this), given.work_dir);
  auto shared = [&] {
    std::lock_guard<std::mutex> l(shared_dirs_mu);
    return SharedDirs().count(dir_key) > 0;
  };
  bool uses_uid = false;
  {
    std::unique_lock<std::mutex> lock(mu_);
    slot_free_.wait(lock, [&] {
      return killed_ || (running_ < max_concurrent_ &&
                         (uid_used_.empty() || FreeUid() >= 0 || shared()));
    });
    if (killed_) return FailedPrecondition("shutting down: run refused");
    ++running_;
    ++total_runs_;
    stats_.queue_wait_seconds_sum +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - asked)
            .count();
    ++stats_.queue_wait_count;
    if (!uid_used_.empty()) {
      std::lock_guard<std::mutex> l(shared_dirs_mu);
      auto [it, added] = SharedDirs().try_emplace(dir_key, SharedDir{-1, 0});
      if (added) {
        it->second.index = FreeUid();
        uid_used_[it->second.index] = true;
      }
      ++it->second.runs;
      uses_uid = true;
      options.uid = options.gid = options_.uid_first + it->second.index;
    }
  }
  AddRunnerDefaults(options_, &options);
  auto promise = std::make_shared<std::promise<StatusOr<sandbox::Result>>>();
  std::future<StatusOr<sandbox::Result>> done = promise->get_future();
  boost::asio::post(ioc_, [this, options, promise] {
    auto slot = std::make_shared<std::shared_ptr<sandbox::Process>>();
    StatusOr<std::shared_ptr<sandbox::Process>> p = sandbox::Spawn(
        ioc_, options, [this, promise, slot](StatusOr<sandbox::Result> r) {
          {
            std::lock_guard<std::mutex> lock(mu_);
            in_flight_.erase(*slot);
          }
          promise->set_value(std::move(r));
        });
    if (!p.ok()) {
      promise->set_value(p.status());
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    *slot = *p;
    in_flight_.insert(*p);
    if (killed_) (*p)->Kill();
  });
  StatusOr<sandbox::Result> r = done.get();
  {
    std::lock_guard<std::mutex> lock(mu_);
    --running_;
    ++stats_.runs_by_state[r.ok() && r->ok() ? "completed" : "failed"];
    if (r.ok()) {
      stats_.runtime_seconds_sum += r->wall_seconds;
      ++stats_.runtime_count;
    }
    if (uses_uid) {
      std::lock_guard<std::mutex> l(shared_dirs_mu);
      auto it = SharedDirs().find(dir_key);
      if (--it->second.runs == 0) {
        uid_used_[it->second.index] = false;
        SharedDirs().erase(it);
      }
    }
  }
  slot_free_.notify_all();
  return r;
}

void ToolRunner::KillAll() {
  std::set<std::shared_ptr<sandbox::Process>> runs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    killed_ = true;
    runs = in_flight_;
  }
  slot_free_.notify_all();
  // Process::Kill is used on the loop's thread, as the sandbox requires.
  boost::asio::post(ioc_, [runs] {
    for (const auto& p : runs) p->Kill();
  });
}

int ToolRunner::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

int64_t ToolRunner::total_runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_runs_;
}

}  // namespace trench::orchestrator
