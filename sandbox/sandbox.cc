// Spawn(): prepares the child's plan, starts the init, and follows the run
// on the io_context (pidfd for the end, the pipes for output, a timer for
// the wall clock).
#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "sandbox/bwrap.h"
#include "sandbox/capabilities.h"
#include "sandbox/cgroup.h"
#include "sandbox/child.h"

namespace trench::sandbox {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

std::string ErrnoText(int err) {
  return std::string(strerror(err)) + " (errno " + std::to_string(err) + ")";
}

StatusOr<std::string> ResolveProgram(const std::string& name) {
  std::string path = name;
  if (name.find('/') == std::string::npos) {
    const char* env = getenv("PATH");
    std::istringstream dirs(env ? env : "/usr/bin:/bin");
    std::string dir;
    path.clear();
    while (std::getline(dirs, dir, ':')) {
      std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
      if (access(candidate.c_str(), X_OK) == 0) {
        path = candidate;
        break;
      }
    }
    if (path.empty())
      return NotFound("sandbox: cannot run '" + name + "': not found in PATH");
  }
  std::error_code ec;
  path = fs::absolute(path, ec).string();
  struct stat st;
  if (ec || stat(path.c_str(), &st) != 0)
    return NotFound("sandbox: cannot run '" + name + "': " + ErrnoText(errno));
  return path;
}

Status ChownTree(const std::string& dir, uid_t uid, gid_t gid) {
  if (lchown(dir.c_str(), uid, gid) != 0)
    return IoError("sandbox: chown " + dir + ": " + ErrnoText(errno));
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (lchown(it->path().c_str(), uid, gid) != 0)
      return IoError("sandbox: chown " + it->path().string() + ": " +
                     ErrnoText(errno));
  }
  if (ec) return IoError("sandbox: walking " + dir + ": " + ec.message());
  return Status::Ok();
}

// Adds `resource` = min(value, our hard limit); `extra` raises the hard
// limit above the soft one (CPU: SIGXCPU first, SIGKILL a second later).
void AddLimit(int resource, uint64_t value, uint64_t extra,
              std::vector<internal::RlimitSetting>* out) {
  rlimit cur;
  if (getrlimit(resource, &cur) != 0) return;
  rlim_t soft = value, hard = value + extra;
  if (cur.rlim_max != RLIM_INFINITY) {
    soft = std::min<rlim_t>(soft, cur.rlim_max);
    hard = std::min<rlim_t>(hard, cur.rlim_max);
  }
  out->push_back({resource, {soft, hard}});
}

// The run in flight. Owns the fds; handlers hold it alive.
class Running : public Process, public std::enable_shared_from_this<Running> {
 public:
  Running(asio::io_context& ioc, pid_t pid, int pidfd, int out, int err,
          int report, const Options& o, Isolation tier,
          std::unique_ptr<RunCgroup> cgroup, DoneHandler done)
      : pid_(pid),
        pidfd_(ioc, pidfd),
        timer_(ioc),
        grace_(ioc),
        out_{asio::posix::stream_descriptor(ioc, out), o.limits.stdout_bytes},
        err_{asio::posix::stream_descriptor(ioc, err), o.limits.stderr_bytes},
        report_fd_(report),
        program_(o.argv[0]),
        limits_(o.limits),
        tier_(tier),
        namespaced_(tier == Isolation::kBuiltin),
        cgroup_(std::move(cgroup)),
        done_(std::move(done)) {}
  // Dropped unfinished (its io_context went away): the run must not
  // outlive us. The kill is immediate when our init is the PID namespace's
  // (kBuiltin) and bounded otherwise.
  ~Running() override {
    if (!finished_) {
      Send(namespaced_ ? SIGKILL : SIGTERM);
      while (waitpid(pid_, nullptr, __WALL) < 0 && errno == EINTR) {
      }
    }
    close(report_fd_);
  }

  void Start() {
    auto self = shared_from_this();
    WaitForExit();
    Read(&out_);
    Read(&err_);
    if (limits_.wall_seconds > 0) {
      timer_.expires_after(
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
              std::chrono::duration<double>(
                  std::min(limits_.wall_seconds, 1e9))));
      timer_.async_wait([self](boost::system::error_code ec) {
        if (ec || self->exited_) return;
        self->timed_out_ = true;
        self->SignalInit();
      });
    }
  }

  void Kill() override {
    if (exited_) return;
    killed_ = true;
    SignalInit();
  }
  pid_t pid() const override { return pid_; }

 private:
  struct Stream {
    Stream(asio::posix::stream_descriptor d, uint64_t l)
        : desc(std::move(d)), limit(l) {}
    asio::posix::stream_descriptor desc;
    uint64_t limit;  // 0: keep everything.
    std::string data;
    uint64_t dropped = 0;
    bool reading = true;
    std::array<char, 65536> buf{};
  };

  // On SIGTERM the init kills and reaps its whole tree, keeping the CPU
  // accounting (it is root; the run's uid cannot signal it). With our own
  // namespaces a SIGKILL to the init is the backstop after a grace period:
  // its death kills the namespace, only the killed processes' CPU time is
  // lost. Otherwise (kNone, and kBwrap whose PID namespace belongs to
  // bwrap) there is no such backstop (orphans would go to our own reaper),
  // and the init's kill loop is bounded instead.
  void SignalInit() {
    Send(SIGTERM);
    if (!namespaced_ || grace_armed_) return;
    grace_armed_ = true;
    auto self = shared_from_this();
    grace_.expires_after(std::chrono::seconds(5));
    grace_.async_wait([self](boost::system::error_code ec) {
      if (!ec && !self->exited_) self->Send(SIGKILL);
    });
  }
  void Send(int sig) {
    syscall(SYS_pidfd_send_signal, pidfd_.native_handle(), sig, nullptr, 0);
  }

  void Append(Stream* s, size_t n) {
    uint64_t room = s->limit == 0               ? n
                    : s->data.size() < s->limit ? s->limit - s->data.size()
                                                : 0;
    size_t keep = std::min<uint64_t>(room, n);
    s->data.append(s->buf.data(), keep);
    s->dropped += n - keep;
  }

  void Read(Stream* s) {
    auto self = shared_from_this();
    s->desc.async_read_some(asio::buffer(s->buf),
                            [self, s](boost::system::error_code ec, size_t n) {
                              self->Append(s, n);
                              if (ec || self->exited_) {
                                s->reading = false;
                                self->MaybeFinish();
                                return;
                              }
                              self->Read(s);
                            });
  }

  // The pidfd turns readable when the init exits. The reactor can report
  // it early (seen on an io_context reused across runs: a wake-up with no
  // epoll event behind it), so readiness is checked with poll() before
  // the run counts as ended; otherwise the wait starts again.
  void WaitForExit() {
    auto self = shared_from_this();
    pidfd_.async_wait(asio::posix::stream_descriptor::wait_read,
                      [self](boost::system::error_code ec) {
                        if (ec == asio::error::operation_aborted) return;
                        pollfd pfd{self->pidfd_.native_handle(), POLLIN, 0};
                        if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN)) {
                          self->OnExit();
                        } else {
                          self->WaitForExit();
                        }
                      });
  }

  void OnExit() {
    exited_ = true;
    timer_.cancel();
    grace_.cancel();
    boost::system::error_code ignored;
    out_.desc.cancel(ignored);
    err_.desc.cancel(ignored);
    MaybeFinish();
  }

  // Every process of the run is gone, so what is left in the pipes is all
  // there will be: read it without waiting.
  void Drain(Stream* s) {
    boost::system::error_code ec;
    s->desc.non_blocking(true, ec);
    while (!ec) {
      size_t n = s->desc.read_some(asio::buffer(s->buf), ec);
      Append(s, n);
    }
  }

  void MaybeFinish() {
    if (!exited_ || out_.reading || err_.reading || finished_) return;
    finished_ = true;
    Drain(&out_);
    Drain(&err_);
    DoneHandler done = std::move(done_);
    done(Collect());
  }

  StatusOr<Result> Collect();

  pid_t pid_;
  asio::posix::stream_descriptor pidfd_;
  asio::steady_timer timer_, grace_;
  Stream out_, err_;
  int report_fd_;
  std::string program_;
  Limits limits_;
  Isolation tier_;
  bool namespaced_;  // Our init is PID 1 of the run's PID namespace.
  std::unique_ptr<RunCgroup> cgroup_;  // Null without cgroups.
  DoneHandler done_;
  std::chrono::steady_clock::time_point start_ =
      std::chrono::steady_clock::now();
  bool exited_ = false, finished_ = false, timed_out_ = false, killed_ = false;
  bool grace_armed_ = false;
};

StatusOr<Result> Running::Collect() {
  Result r;
  r.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count();
  int status = 0;
  rusage ru{};
  while (wait4(pid_, &status, __WALL, &ru) < 0 && errno == EINTR) {
  }
  if (cgroup_) {
    // Read, then removed (killing whatever a kNone or kBwrap run left).
    const CgroupUsage usage = cgroup_->Usage();
    r.memory_peak_bytes = usage.memory_peak_bytes;
    r.oom_killed = usage.oom_killed;
    cgroup_.reset();
  }
  internal::Report report;
  fcntl(report_fd_, F_SETFL, O_NONBLOCK);
  if (read(report_fd_, &report, sizeof report) != sizeof report)
    report.kind = 0;
  if (report.kind == internal::Report::kSetupFailed) {
    std::string msg =
        "sandbox: cannot start '" + program_ + "' (" +
        internal::StageName(static_cast<internal::Stage>(report.stage)) +
        "): " + ErrnoText(report.error);
    if (report.error == ENOENT) {
      return NotFound(msg + "; paths under /tmp must be in read_only_paths");
    }
    return FailedPrecondition(msg);
  }
  r.timed_out = timed_out_;
  r.isolation = tier_;
  r.namespaced = tier_ != Isolation::kNone;
  if (report.kind == internal::Report::kExited) {
    r.exited = WIFEXITED(report.status);
    r.exit_code = r.exited ? WEXITSTATUS(report.status) : -1;
    r.signal = WIFSIGNALED(report.status) ? WTERMSIG(report.status) : 0;
  } else if (report.kind == internal::Report::kTerminated || timed_out_ ||
             killed_) {
    r.signal = SIGKILL;
  } else {
    return Internal("sandbox: the init of '" + program_ +
                    "' died without a report, wait status " +
                    std::to_string(status));
  }
  r.cpu_seconds = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                  ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  r.max_rss_bytes = static_cast<uint64_t>(ru.ru_maxrss) * 1024;
  r.stdout_data = std::move(out_.data);
  r.stderr_data = std::move(err_.data);
  r.stdout_truncated = out_.dropped;
  r.stderr_truncated = err_.dropped;
  if (tier_ == Isolation::kBwrap)
    RETURN_IF_ERROR(internal::ReadBwrapOutcome(program_, &r));
  r.limits_hit = ClassifyLimits(r, limits_);
  return r;
}

// Owns the strings (and the seccomp pipe) the child's plan points into.
struct Prepared {
  Prepared() = default;
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;
  ~Prepared() {
    if (seccomp_fd >= 0) close(seccomp_fd);
  }
  std::string path, work_dir, tmpfs_options;
  std::vector<std::string> strings, bwrap_argv;
  std::vector<char*> argv, envp;
  std::vector<const char*> read_only;
  std::vector<std::string> masked_strings;
  std::vector<const char*> masked;
  std::vector<internal::RlimitSetting> rlimits;
  std::vector<sock_filter> filter;
  sock_fprog prog{};
  int seccomp_fd = -1;  // kBwrap: the filter, for --seccomp.
};

// kBwrap: the target execs bwrap, which runs the program (bwrap.h).
Status PrepareBwrap(const Options& o, const Capabilities& caps, Prepared* p) {
  internal::BwrapSpec spec;
  spec.bwrap_path = caps.bwrap_path;
  spec.setuid = caps.bwrap_setuid;
  spec.map_uid = !caps.can_set_uid;
  spec.uid = o.uid;
  spec.gid = o.gid;
  spec.work_dir = p->work_dir;
  spec.read_only_paths = p->strings;
  spec.masked_paths = p->masked_strings;
  spec.tmp_size_bytes = o.tmp_size_bytes;
  if (!p->filter.empty()) {
    ASSIGN_OR_RETURN(p->seccomp_fd, internal::FilterPipe(p->filter));
    spec.seccomp_fd = p->seccomp_fd;
  }
  spec.program = p->path;
  spec.args.assign(o.argv.begin() + 1, o.argv.end());
  p->bwrap_argv = internal::BwrapArgv(spec);
  p->argv.clear();
  for (std::string& s : p->bwrap_argv) p->argv.push_back(s.data());
  p->argv.push_back(nullptr);
  p->path = caps.bwrap_path;
  return Status::Ok();
}

bool Contains(const std::string& dir, const std::string& path) {
  return path == dir || path.rfind(dir + "/", 0) == 0;
}

// Canonical masked paths; none inside the work dir or a read-only path
// (whose bind, mounted after the masks, would uncover it).
Status PrepareMasks(const Options& o, Prepared* p) {
  if (o.masked_paths.size() > internal::kMaxMaskedPaths)
    return InvalidArgument("sandbox: more than " +
                           std::to_string(internal::kMaxMaskedPaths) +
                           " masked_paths");
  for (const auto& path : o.masked_paths) {
    std::error_code ec;
    std::string mask = fs::canonical(path, ec).string();
    if (ec || !fs::is_directory(mask) || mask == "/")
      return InvalidArgument("sandbox: masked path '" + path +
                             "' is not a directory (other than /)");
    if (Contains(p->work_dir, mask))
      return InvalidArgument("sandbox: masked path '" + path +
                             "' lies in the work dir");
    for (const std::string& ro : p->strings) {
      if (Contains(ro, mask))
        return InvalidArgument("sandbox: masked path '" + path +
                               "' lies in read-only path '" + ro + "'");
    }
    p->masked_strings.push_back(mask);
  }
  for (const auto& s : p->masked_strings) p->masked.push_back(s.c_str());
  return Status::Ok();
}

StatusOr<std::unique_ptr<Prepared>> Prepare(const Options& o,
                                            const Capabilities& caps,
                                            Isolation tier) {
  if (o.argv.empty()) return InvalidArgument("sandbox: empty argv");
  auto p = std::make_unique<Prepared>();
  ASSIGN_OR_RETURN(p->path, ResolveProgram(o.argv[0]));
  std::error_code ec;
  p->work_dir = fs::canonical(o.work_dir, ec).string();
  if (ec || !fs::is_directory(p->work_dir) || p->work_dir == "/")
    return InvalidArgument("sandbox: work dir '" + o.work_dir +
                           "' is not a directory (other than /)");
  if (o.read_only_paths.size() > internal::kMaxReadOnlyPaths)
    return InvalidArgument("sandbox: more than " +
                           std::to_string(internal::kMaxReadOnlyPaths) +
                           " read_only_paths");
  for (const auto& s : o.argv) p->argv.push_back(const_cast<char*>(s.c_str()));
  p->argv.push_back(nullptr);
  for (const auto& s : o.env) p->envp.push_back(const_cast<char*>(s.c_str()));
  p->envp.push_back(nullptr);
  for (const auto& path : o.read_only_paths) {
    p->strings.push_back(fs::canonical(path, ec).string());
    if (ec) return InvalidArgument("sandbox: no such path '" + path + "'");
  }
  for (const auto& s : p->strings) p->read_only.push_back(s.c_str());
  RETURN_IF_ERROR(PrepareMasks(o, p.get()));
  p->tmpfs_options = "size=" + std::to_string(o.tmp_size_bytes) + ",mode=1777";
  const Limits& l = o.limits;
  if (l.address_space_bytes)
    AddLimit(RLIMIT_AS, l.address_space_bytes, 0, &p->rlimits);
  if (l.cpu_seconds) AddLimit(RLIMIT_CPU, l.cpu_seconds, 1, &p->rlimits);
  if (l.file_size_bytes)
    AddLimit(RLIMIT_FSIZE, l.file_size_bytes, 0, &p->rlimits);
  if (l.open_files) AddLimit(RLIMIT_NOFILE, l.open_files, 0, &p->rlimits);
  // NPROC counts every process of the uid: without a uid switch that
  // includes the caller's own processes and threads (see sandbox.h).
  if (l.processes) AddLimit(RLIMIT_NPROC, l.processes, 0, &p->rlimits);
  AddLimit(RLIMIT_CORE, 0, 0, &p->rlimits);
  p->filter = BuildSeccompFilter(caps.seccomp ? o.seccomp : SeccompMode::kOff);
  p->prog.len = static_cast<unsigned short>(p->filter.size());
  p->prog.filter = p->filter.data();
  if (tier == Isolation::kBwrap)
    RETURN_IF_ERROR(PrepareBwrap(o, caps, p.get()));
  return p;
}

// Pipes for the child: [read, write], CLOEXEC both ends.
Status MakePipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0)
    return IoError("sandbox: pipe: " + ErrnoText(errno));
  return Status::Ok();
}

void CloseAll(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) close(fd);
}

// The plan for `tier` and `prep`; the caller adds the stdio and report fds
// and the user namespace's id maps.
internal::ChildPlan MakePlan(const Options& options, const Capabilities& caps,
                             Isolation tier, const Prepared& prep) {
  internal::ChildPlan plan;
  plan.path = prep.path.c_str();
  plan.argv = prep.argv.data();
  plan.envp = prep.envp.data();
  plan.work_dir = prep.work_dir.c_str();
  plan.read_only_paths = prep.read_only.data();
  plan.num_read_only_paths = prep.read_only.size();
  plan.namespaces = tier == Isolation::kBuiltin;
  plan.tmpfs_options = prep.tmpfs_options.c_str();
  if (plan.namespaces) {
    plan.masked_paths = prep.masked.data();
    plan.num_masked_paths = prep.masked.size();
    plan.mask_options = "size=64k,nr_inodes=1024,mode=0755";
  }
  plan.set_uid = caps.can_set_uid;
  plan.uid = options.uid;
  plan.gid = options.gid;
  plan.rlimits = prep.rlimits.data();
  plan.num_rlimits = prep.rlimits.size();
  // kBwrap: bwrap installs the filter (from the pipe) before the program.
  plan.seccomp =
      prep.filter.empty() || tier == Isolation::kBwrap ? nullptr : &prep.prog;
  plan.inherit_fd = prep.seccomp_fd;
  plan.no_new_privs = !(tier == Isolation::kBwrap && caps.bwrap_setuid);
  return plan;
}

StatusOr<std::shared_ptr<Process>> SpawnWith(asio::io_context& ioc,
                                             const Options& options,
                                             const Capabilities& caps,
                                             DoneHandler done) {
  ASSIGN_OR_RETURN(Isolation tier,
                   caps.Resolve(options.use_namespaces ? options.isolation
                                                       : Isolation::kNone));
  ASSIGN_OR_RETURN(std::unique_ptr<Prepared> prep,
                   Prepare(options, caps, tier));
  if (caps.can_set_uid && options.chown_work_dir)
    RETURN_IF_ERROR(ChownTree(prep->work_dir, options.uid, options.gid));
  std::unique_ptr<RunCgroup> cgroup;
  if (DetectCgroups().mode != CgroupMode::kNone) {
    ASSIGN_OR_RETURN(
        cgroup, RunCgroup::Create(DetectCgroups(), options.limits.memory_bytes,
                                  options.limits.total_processes));
  }
  int out[2] = {-1, -1}, err[2] = {-1, -1}, rep[2] = {-1, -1};
  Status s = MakePipe(out);
  if (s.ok()) s = MakePipe(err);
  if (s.ok()) s = MakePipe(rep);
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (s.ok() && null_fd < 0)
    s = IoError("sandbox: open /dev/null: " + ErrnoText(errno));
  if (!s.ok()) {
    CloseAll({out[0], out[1], err[0], err[1], rep[0], rep[1], null_fd});
    return s;
  }
  internal::ChildPlan plan = MakePlan(options, caps, tier, *prep);
  internal::IdMaps maps(options.uid, options.gid);
  if (plan.namespaces && caps.user_namespace) maps.Apply(&plan);
  plan.stdin_fd = null_fd;
  plan.stdout_fd = out[1];
  plan.stderr_fd = err[1];
  plan.report_fd = rep[1];
  if (cgroup) {
    plan.cgroup_fds = cgroup->procs_fds().data();
    plan.num_cgroup_fds = cgroup->procs_fds().size();
  }
  pid_t pid = internal::StartInit(plan);
  CloseAll({out[1], err[1], rep[1], null_fd});
  if (pid < 0) {
    CloseAll({out[0], err[0], rep[0]});
    return IoError("sandbox: cannot start '" + options.argv[0] +
                   "': clone: " + ErrnoText(-pid));
  }
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    int e = errno;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, __WALL);
    CloseAll({out[0], err[0], rep[0]});
    return IoError("sandbox: pidfd_open for '" + options.argv[0] +
                   "': " + ErrnoText(e));
  }
  auto run = std::make_shared<Running>(ioc, pid, pidfd, out[0], err[0], rep[0],
                                       options, tier, std::move(cgroup),
                                       std::move(done));
  run->Start();
  return std::shared_ptr<Process>(run);
}

}  // namespace

namespace internal {

StatusOr<Result> RunWith(const Options& options, const Capabilities& caps) {
  asio::io_context ioc;
  StatusOr<Result> result = Internal("sandbox: run did not complete");
  ASSIGN_OR_RETURN(auto process,
                   SpawnWith(ioc, options, caps, [&result](StatusOr<Result> r) {
                     result = std::move(r);
                   }));
  ioc.run();
  return result;
}

}  // namespace internal

StatusOr<std::shared_ptr<Process>> Spawn(asio::io_context& ioc,
                                         const Options& options,
                                         DoneHandler done) {
  return SpawnWith(ioc, options, DetectCapabilities(), std::move(done));
}

StatusOr<Result> Run(const Options& options) {
  return internal::RunWith(options, DetectCapabilities());
}

}  // namespace trench::sandbox
