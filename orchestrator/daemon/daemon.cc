#include "orchestrator/daemon/daemon.h"

#include <fcntl.h>
#include <git2.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <utility>
#include <vector>

#include "base/log_context.h"
#include "orchestrator/api/api_handlers.h"
#include "orchestrator/api/http_server.h"
#include "orchestrator/daemon/job_run.h"
#include "orchestrator/daemon/logging.h"
#include "orchestrator/daemon/repo_watcher.h"
#include "orchestrator/daemon/service_notify.h"
#include "orchestrator/notify/notifier.h"
#include "orchestrator/pipeline/agent_setup.h"
#include "orchestrator/pipeline/commit_tools.h"
#include "orchestrator/pipeline/pipeline.h"
#include "orchestrator/slurm/slurm_executor.h"
#include "sandbox/cgroup.h"
#include "sandbox/limited_dir.h"
#include "triage/case/target_flags.h"

namespace trench::orchestrator {
namespace fs = std::filesystem;
namespace asio = boost::asio;

namespace {

// Every lease of this daemon carries this owner; a restarted daemon takes
// back its dead incarnation's leases by it (one daemon per var dir: the
// lock file makes sure).
constexpr const char* kOwner = "daemon";

}  // namespace

struct Daemon::Impl {
  DaemonConfig config;
  DaemonPaths paths;
  BuildVolume builder_volume;  // Unmounted last (after the workers).
  std::string tools_dir;
  int lock_fd = -1;
  bool libgit2_held = false;
  ~Impl() {
    if (libgit2_held) git_libgit2_shutdown();
  }

  asio::io_context ioc;
  std::unique_ptr<Store> store;  // The loop thread's connection.
  std::unique_ptr<JobQueue> queue;
  std::unique_ptr<ApiHandlers> api;
  std::unique_ptr<HttpServer> http;
  std::unique_ptr<Executor> runner;  // Local or Slurm.
  std::unique_ptr<RepoWatcher> watcher;
  std::unique_ptr<Notifier> notifier;  // Null without a notify section.
  std::unique_ptr<asio::steady_timer> drain_timer;
  std::unique_ptr<asio::signal_set> signals;

  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::condition_variable wake;  // Workers idle on it.
  std::vector<std::thread> workers;
  std::atomic<int> live_workers{0};
  Status error = Status::Ok();

  explicit Impl(DaemonConfig c)
      : config(std::move(c)),
        paths(config.var_dir, config.executor.kind == "slurm"
                                  ? config.executor.shared_dir
                                  : std::string()) {}

  JobQueueOptions QueueOptions() const {
    JobQueueOptions o;
    o.max_crashes = config.max_crashes;
    return o;
  }

  StepContext LoopContext() {
    StepContext ctx;
    ctx.config = &config;
    ctx.paths = &paths;
    ctx.store = store.get();
    ctx.queue = queue.get();
    ctx.runner = runner.get();
    ctx.tools_dir = tools_dir;
    ctx.worker = "orchestrator";
    ctx.stopping = &stopping;
    return ctx;
  }

  void StartWorker(const std::string& role, int index) {
    std::vector<std::string> kinds = KindsOfWorker(role);
    if (kinds.empty()) return;
    ++live_workers;
    const std::string name = role + "#" + std::to_string(index);
    workers.emplace_back([this, name, kinds] {
      WorkerLoop(name, kinds);
      --live_workers;
    });
  }

  // A thread's own store connection, queue and step context.
  struct ThreadContext {
    std::unique_ptr<Store> store;
    std::unique_ptr<JobQueue> queue;
    StepContext ctx;
  };
  StatusOr<ThreadContext> OpenThreadContext(const std::string& name) {
    ThreadContext t;
    StoreOptions so;
    ASSIGN_OR_RETURN(t.store, Store::Open(paths.store, so));
    t.queue = std::make_unique<JobQueue>(t.store.get(), QueueOptions());
    t.ctx = LoopContext();
    t.ctx.store = t.store.get();
    t.ctx.queue = t.queue.get();
    t.ctx.worker = name;
    return t;
  }

  void WorkerLoop(const std::string& name,
                  const std::vector<std::string>& kinds) {
    StatusOr<ThreadContext> t = OpenThreadContext(name);
    if (!t.ok()) {
      spdlog::error("{}: cannot open the store: {}", name,
                    t.status().message());
      return;
    }
    StepContext& ctx = t->ctx;
    JobQueue& q = *t->queue;
    const int64_t lease_ms =
        static_cast<int64_t>((config.build_timeout_seconds * 4 + 3600) * 1000);
    while (!stopping) {
      StatusOr<std::vector<Job>> jobs = q.Lease(kOwner, 1, lease_ms, kinds);
      if (!jobs.ok()) {
        spdlog::error("{}: lease failed: {}", name, jobs.status().message());
      }
      if (!jobs.ok() || jobs->empty()) {
        std::unique_lock<std::mutex> lock(mu);
        wake.wait_for(lock, std::chrono::milliseconds(500),
                      [&] { return stopping.load(); });
        continue;
      }
      const Job& job = jobs->front();
      const StepKind* step = FindStep(job.kind);
      const StepHandler unknown = [](StepContext&, const Job& j) {
        return StatusOr<Json>(InvalidArgument("unknown job kind " + j.kind));
      };
      Status done = RunLeasedJob(ctx, q, job, step ? step->handler : unknown,
                                 name, stopping);
      if (!done.ok()) {
        spdlog::error("{}: job {}: {}", name, job.id, done.message());
      }
      wake.notify_all();  // Follow-up jobs may be ready.
    }
  }

  // The poller, on its own thread and store connection so that the API's
  // loop never waits for it: every poll_seconds, the repo watcher's new
  // commits, the reconciler, continuous fuzzing and expired leases.
  void PollerLoop() {
    StatusOr<ThreadContext> t = OpenThreadContext("orchestrator");
    if (!t.ok()) {
      spdlog::error("poller: cannot open the store: {}", t.status().message());
      return;
    }
    while (!stopping) {
      PollOnce(t->ctx);
      wake.notify_all();
      const auto next = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(
                            static_cast<int64_t>(config.poll_seconds * 1000));
      std::unique_lock<std::mutex> lock(mu);
      wake.wait_until(lock, next, [&] { return stopping.load(); });
    }
  }

  void PollOnce(StepContext& ctx) {
    StatusOr<std::vector<std::string>> landed = watcher->Poll(*ctx.store);
    if (!landed.ok()) {
      spdlog::warn("repo watcher: {}", landed.status().message());
    } else {
      for (const std::string& sha : *landed) {
        Json f = Json::MakeObject();
        f["commit"] = sha;
        LogScope scope(f);
        spdlog::info("commit_landed: {}", sha.substr(0, 12));
      }
      if (Status s = QueueLandedCommits(ctx, *landed); !s.ok()) {
        spdlog::error("queueing {} landed commits: {}", landed->size(),
                      s.message());
      } else if (!landed->empty()) {
        Status s = watcher->Commit(*ctx.store, landed->back());
        if (!s.ok()) spdlog::error("repo watcher: {}", s.message());
      }
    }
    if (Status s = Reconcile(ctx); !s.ok()) {
      spdlog::error("reconcile: {}", s.message());
    }
    if (StatusOr<bool> q = QueueIdleFuzz(ctx); !q.ok()) {
      spdlog::error("continuous fuzzing: {}", q.status().message());
    }
    if (StatusOr<int64_t> n = ctx.queue->RequeueExpired(); n.ok() && *n > 0) {
      Json f = Json::MakeObject();
      f["jobs"] = *n;
      LogWithFields(spdlog::level::warn,
                    "crash recovery: expired leases taken back", f);
    }
  }

  // On the loop: stop taking work, then wait for the workers.
  void BeginStop() {
    if (stopping.exchange(true)) return;
    spdlog::info("shutting down: finishing running steps (up to {} s)",
                 config.drain_seconds);
    if (http) http->Stop();
    if (notifier) notifier->Stop();
    wake.notify_all();
    Notify("STOPPING=1\nSTATUS=draining running steps");
    drain_timer->expires_after(std::chrono::milliseconds(
        static_cast<int64_t>(config.drain_seconds * 1000)));
    drain_timer->async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      spdlog::warn("drain time over: killing running steps");
      runner->KillAll();
    });
    WaitForWorkers();
  }

  // Tells systemd (Type=notify) how the service stands; a failure is
  // logged, never fatal.
  static void Notify(std::string_view state) {
    if (Status s = NotifyService(state); !s.ok()) {
      spdlog::warn("service notification: {}", s.message());
    }
  }

  void WaitForWorkers() {
    if (live_workers == 0) {
      drain_timer->cancel();
      ioc.stop();
      return;
    }
    auto t = std::make_shared<asio::steady_timer>(ioc);
    t->expires_after(std::chrono::milliseconds(50));
    t->async_wait(
        [this, t](const boost::system::error_code&) { WaitForWorkers(); });
  }
};

Daemon::Daemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Daemon::~Daemon() {
  if (!impl_) return;
  impl_->stopping = true;
  impl_->wake.notify_all();
  if (impl_->notifier) impl_->notifier->Stop();
  if (impl_->runner) impl_->runner->KillAll();
  // Runs need the loop to finish; keep it turning while workers end.
  std::thread loop;
  if (impl_->ioc.stopped()) impl_->ioc.restart();
  auto guard = asio::make_work_guard(impl_->ioc);
  loop = std::thread([this] { impl_->ioc.run(); });
  for (std::thread& t : impl_->workers) t.join();
  guard.reset();
  impl_->ioc.stop();
  loop.join();
  sandbox::SweepLimitedDirs(impl_->paths.work);  // Scratch mounts left.
  if (impl_->lock_fd >= 0) ::close(impl_->lock_fd);
}

namespace {

// The Slurm executor of config.executor, checked: commands, partition,
// shared_dir.
StatusOr<std::unique_ptr<slurm::SlurmExecutor>> CreateSlurmExecutor(
    const DaemonConfig& config) {
  const ExecutorConfig& x = config.executor;
  slurm::SlurmExecutorOptions o;
  std::error_code ec;
  o.run.trench_binary = fs::read_symlink("/proc/self/exe", ec).string();
  o.run.shared_dir = x.shared_dir;
  o.run.partition = x.partition;
  o.run.account = x.account;
  o.run.extra_args = x.extra_args;
  o.run.job_name_prefix = slurm::DaemonJobPrefix(config.var_dir);
  o.run.poll_seconds = x.poll_seconds;
  o.client.bin_dir = x.slurm_bin_dir;
  o.client.slurm_conf = x.slurm_conf;
  o.max_jobs = x.max_jobs;
  o.time_limit_minutes = x.time_limit_minutes;
  return slurm::SlurmExecutor::Create(std::move(o));
}

}  // namespace

StatusOr<std::unique_ptr<Daemon>> Daemon::Create(const DaemonConfig& config) {
  auto impl = std::make_unique<Impl>(config);
  const DaemonPaths& p = impl->paths;
  // The mirror under var/builder may belong to another uid (older daemons
  // let the sandbox's uid own it), so libgit2's owner check (git's
  // safe.directory) would refuse it to us. The check guards repository
  // discovery in directories other users control; the daemon opens only
  // the paths its config names, so it is off for this process (kept off
  // by holding one libgit2 initialization for the daemon's lifetime).
  git_libgit2_init();
  impl->libgit2_held = true;
  git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
  std::error_code ec;
  // Slurm: checked before anything is created under shared_dir.
  std::unique_ptr<slurm::SlurmExecutor> slurm_executor;
  if (config.executor.kind == "slurm") {
    ASSIGN_OR_RETURN(slurm_executor, CreateSlurmExecutor(impl->config));
    if (impl->config.builder_disk_bytes > 0) {
      spdlog::info(
          "builder: a plain directory on the shared filesystem (the "
          "builder.disk_bytes image is not used with the Slurm executor: a "
          "loop mount on this host is not seen by the nodes)");
      impl->config.builder_disk_bytes = 0;
    }
  }
  for (const std::string& dir :
       {p.var, p.cases, p.builder, p.build_cache, p.work}) {
    fs::create_directories(dir, ec);
    if (ec) return IoError("cannot create " + dir + ": " + ec.message());
    ::chmod(dir.c_str(), 0755);  // The sandbox's uid reads cases, builds.
  }
  // Probed now, not at the first run, so that the log says from the start
  // how runs are isolated (and warns when they are not).
  const sandbox::Capabilities& caps = sandbox::DetectCapabilities();
  const StateDirPolicy var_policy = StateDirPolicyFor(
      config.sandbox_namespaces ? caps.tier() : sandbox::Isolation::kNone);
  ::chmod(p.var.c_str(), var_policy.var_mode);
  ::chmod(p.work.c_str(), 0711);  // Runs reach their dirs, never list them.
  impl->lock_fd = ::open((p.var + "/daemon.lock").c_str(),
                         O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (impl->lock_fd < 0 || ::flock(impl->lock_fd, LOCK_EX | LOCK_NB) != 0) {
    if (impl->lock_fd >= 0) ::close(impl->lock_fd);
    return FailedPrecondition("another trench daemon runs on " + p.var);
  }
  ASSIGN_OR_RETURN(impl->builder_volume, SetUpBuilder(impl->config, p));
  impl->tools_dir =
      config.tools_dir.empty() ? hlo_diff::ExecutableDir() : config.tools_dir;
  for (const char* tool :
       {"hlo-diff", "hlo-reduce", "hlo-bisect", "hlo-fuzz"}) {
    if (::access((impl->tools_dir + "/" + tool).c_str(), X_OK) != 0) {
      return FailedPrecondition("tool " + impl->tools_dir + "/" + tool +
                                " is missing (set tools_dir)");
    }
  }
  // The sandbox shows these read-only: a typo would otherwise surface
  // only when the first campaign or verification runs.
  std::vector<std::pair<std::string, std::string>> inputs;
  if (!config.fuzz_corpus.empty()) {
    inputs.emplace_back("fuzz.corpus", config.fuzz_corpus);
  }
  for (const std::string& dir : config.regression) {
    inputs.emplace_back("regression", dir);
  }
  for (const auto& [key, path] : inputs) {
    if (!fs::exists(path, ec)) {
      return FailedPrecondition("config " + key + ": " + path +
                                ": no such file or directory");
    }
  }
  // Every role with an LLM brain: its API key and its prompt, now.
  RETURN_IF_ERROR(CheckAgentSetUp(config));
  // The notifications' secrets: an unset variable stops the start too.
  std::optional<NotifySetup> notify;
  if (config.notify.enabled()) {
    ASSIGN_OR_RETURN(NotifySetup resolved, ResolveNotifyConfig(config.notify));
    notify = std::move(resolved);
  }
  ASSIGN_OR_RETURN(impl->watcher,
                   RepoWatcher::Create(config.repo, config.branch));
  StoreOptions so;
  ASSIGN_OR_RETURN(impl->store, Store::Open(p.store, so));
  // SQLite gives -wal and -shm the database file's mode.
  for (const char* suffix : {"", "-wal", "-shm"}) {
    ::chmod((p.store + suffix).c_str(), 0600);
  }
  impl->queue =
      std::make_unique<JobQueue>(impl->store.get(), impl->QueueOptions());
  // A restart after a crash: the dead incarnation's leases go back.
  ASSIGN_OR_RETURN(int64_t taken, impl->queue->RequeueOwner(kOwner));
  if (taken > 0) {
    Json f = Json::MakeObject();
    f["jobs"] = taken;
    LogWithFields(spdlog::level::warn,
                  "crash recovery: the previous run's jobs queued again", f);
  }

  // Notifications: on a store connection of their own.
  if (notify) {
    NotifierOptions no;
    no.setup = *std::move(notify);
    ASSIGN_OR_RETURN(impl->notifier, Notifier::Open(p.store, std::move(no)));
  }

  ApiOptions ao;
  if (const char* token = std::getenv(config.token_env.c_str())) {
    ao.token = token;
  }
  if (ao.token.empty()) {
    spdlog::warn("{} is not set: the API refuses every write",
                 config.token_env);
  }
  if (!config.read_token_env.empty()) {
    const char* read = std::getenv(config.read_token_env.c_str());
    if (read == nullptr || *read == '\0') {
      return FailedPrecondition(
          "http.read_token_env names " + config.read_token_env +
          ", which is not set: set it to the token reads need, or remove "
          "read_token_env to leave reads open");
    }
    ao.read_token = read;
  }
  ao.cases_dir = p.cases;
  ao.push_on_approve = config.review_on_approve == "push";
  ao.repo = config.repo;
  ao.git_dir = p.mirror;
  ao.branch = config.branch;
  ao.good_commit = config.good_commit;
  ao.swarm = config.swarm;
  {
    // dot reads DOT made from strangers' modules: it runs in the sandbox
    // as the tools do, with a directory of its own per render.
    sandbox::Options graph =
        impl->LoopContext().Sandboxed({}, p.work + "/graph", 20);
    if (var_policy.mask) graph.masked_paths = {p.var};
    graph.limits.memory_bytes = config.sandbox_run_memory_bytes;
    graph.limits.total_processes = config.sandbox_run_processes;
    ao.graph_sandbox =
        std::make_shared<const sandbox::Options>(std::move(graph));
  }
  impl->api = std::make_unique<ApiHandlers>(impl->store.get(), ao);
  HttpServerOptions ho;
  ho.address = config.http_address;
  ho.port = static_cast<uint16_t>(config.http_port);
  ho.body_limit = config.body_limit;
  ho.max_connections = static_cast<size_t>(config.http_max_connections);
  ApiHandlers* api = impl->api.get();
  ASSIGN_OR_RETURN(impl->http,
                   HttpServer::Start(impl->ioc, ho, [api](const ApiRequest& r) {
                     return api->Handle(r);
                   }));
  const sandbox::CgroupSupport& cgroups = sandbox::DetectCgroups();
  for (const SandboxReport& r :
       {DescribeSandbox(caps, config.sandbox_namespaces),
        SandboxReport{cgroups.mode == sandbox::CgroupMode::kNone,
                      cgroups.Describe()},
        slurm_executor
            ? SandboxReport{false,
                            "executor: Slurm partition '" +
                                config.executor.partition + "', shared_dir " +
                                config.executor.shared_dir +
                                " (cases, builds, scratch dirs), at most " +
                                std::to_string(config.executor.max_jobs) +
                                " jobs at once"}
            : DescribeScratch(sandbox::LimitedDirError(),
                              config.sandbox_scratch_bytes,
                              config.sandbox_scratch_inodes,
                              sandbox::SweepLimitedDirs(p.work)),
        var_policy.report}) {
    if (r.warning) {
      spdlog::warn("{}", r.text);
    } else {
      spdlog::info("{}", r.text);
    }
  }
  ToolRunnerOptions ro;
  ro.max_concurrent = config.max_concurrent_runs;
  if (caps.can_set_uid) {
    ro.uid_first = config.sandbox_uid_first;
    ro.uid_count = static_cast<int>(config.sandbox_uid_count);
  }
  if (var_policy.mask) ro.masked_paths = {p.var};
  ro.memory_bytes = config.sandbox_run_memory_bytes;
  ro.processes = config.sandbox_run_processes;
  if (slurm_executor) {
    slurm_executor->SetDefaults(std::move(ro));
    // Jobs left for queue jobs that will not run again are cancelled; a
    // Slurm that does not answer now only delays that to the next start.
    if (StatusOr<std::vector<std::string>> orphans =
            slurm_executor->CancelOrphans(impl->store.get());
        !orphans.ok()) {
      spdlog::warn("Slurm jobs of the previous run not checked: {}",
                   orphans.status().message());
    } else if (!orphans->empty()) {
      Json f = Json::MakeObject();
      f["jobs"] = static_cast<int64_t>(orphans->size());
      LogWithFields(spdlog::level::warn,
                    "Slurm jobs of the previous run whose queue job is over: "
                    "cancelled",
                    f);
    }
    ASSIGN_OR_RETURN(std::vector<std::string> left,
                     slurm_executor->LeftByPreviousRun(impl->store.get()));
    if (!left.empty()) {
      Json f = Json::MakeObject();
      f["jobs"] = static_cast<int64_t>(left.size());
      LogWithFields(spdlog::level::warn,
                    "Slurm jobs of the previous run: their steps reattach "
                    "to them, none is submitted again",
                    f);
    }
    impl->runner = std::move(slurm_executor);
  } else {
    impl->runner = std::make_unique<ToolRunner>(impl->ioc, std::move(ro));
  }
  impl->api->SetExecutor(impl->runner.get());  // Its counters in /metrics.
  impl->drain_timer = std::make_unique<asio::steady_timer>(impl->ioc);
  impl->signals =
      std::make_unique<asio::signal_set>(impl->ioc, SIGTERM, SIGINT);
  // Where clients (and tests) find the API when the port was 0.
  Json info = Json::MakeObject();
  info["pid"] = static_cast<int64_t>(::getpid());
  info["address"] = config.http_address;
  info["port"] = static_cast<int64_t>(impl->http->port());
  {
    const std::string tmp = p.var + "/daemon.json.tmp";
    std::ofstream out(tmp, std::ios::trunc);
    out << info.Dump() << "\n";
    if (!out.flush()) return IoError("cannot write " + tmp);
    fs::rename(tmp, p.var + "/daemon.json", ec);
    if (ec) return IoError("cannot write " + p.var + "/daemon.json");
  }
  spdlog::info("trench daemon: repo {} ({}), var {}, API on {}:{}", config.repo,
               config.branch, p.var, config.http_address, impl->http->port());
  return std::unique_ptr<Daemon>(new Daemon(std::move(impl)));
}

Status Daemon::Run() {
  Impl& d = *impl_;
  d.signals->async_wait([&d](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    spdlog::info("signal {}: stopping", sig);
    d.BeginStop();
  });
  d.StartWorker("orchestrator", 0);
  d.StartWorker("orchestrator", 1);
  for (const std::string& role : SwarmRoles()) {
    auto it = d.config.swarm.find(role);
    const int n = it == d.config.swarm.end() ? 1 : it->second.count;
    for (int i = 0; i < n; ++i) d.StartWorker(role, i);
  }
  ++d.live_workers;
  d.workers.emplace_back([&d] {
    d.PollerLoop();
    --d.live_workers;
  });
  if (d.notifier) {
    ++d.live_workers;
    d.workers.emplace_back([&d] {
      d.notifier->Run();
      --d.live_workers;
    });
  }
  // Ready once the loop runs: the API (bound in Create) is being served
  // and the workers lease jobs.
  asio::post(d.ioc, [&d] {
    Impl::Notify("READY=1\nSTATUS=serving the API on " + d.config.http_address +
                 ":" + std::to_string(d.http->port()));
  });
  d.ioc.run();
  for (std::thread& t : d.workers) t.join();
  d.workers.clear();
  spdlog::info("trench daemon stopped");
  return d.error;
}

void Daemon::RequestStop() {
  asio::post(impl_->ioc, [this] { impl_->BeginStop(); });
}

uint16_t Daemon::api_port() const { return impl_->http->port(); }

}  // namespace trench::orchestrator
