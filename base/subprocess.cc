#include "base/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

extern char** environ;

namespace trench::hlo_diff {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// argv/envp as the C arrays execve wants, built before fork (the child may
// only call async-signal-safe functions).
struct ExecArrays {
  std::vector<std::string> env_strings;
  std::vector<char*> argv, envp;

  explicit ExecArrays(const ProcessSpec& spec) {
    for (char** e = environ; e && *e; ++e) {
      std::string s(*e);
      bool overridden = false;
      for (const auto& [k, v] : spec.env) {
        if (s.rfind(k + "=", 0) == 0) overridden = true;
      }
      if (!overridden) env_strings.push_back(std::move(s));
    }
    for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
    for (const std::string& a : spec.argv) {
      argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    for (std::string& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
  }
};

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Forks; the child gets `in` (or /dev/null), `out`, `err` as 0, 1, 2, a
// process group of its own, and execs. Returns the pid or -1.
pid_t Spawn(const ExecArrays& a, int in, int out, int err) {
  pid_t pid = ::fork();
  if (pid != 0) {
    if (pid > 0) ::setpgid(pid, pid);
    return pid;
  }
  ::setpgid(0, 0);
  if (in < 0) in = ::open("/dev/null", O_RDONLY);
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  ::execve(a.argv[0], a.argv.data(), a.envp.data());
  // target_runner.cc recognizes this line (with exit code 127).
  const char msg[] = "hlo-diff: cannot execute the target program: ";
  ssize_t n = ::write(2, msg, sizeof(msg) - 1);
  n = ::write(2, a.argv[0], ::strlen(a.argv[0]));
  n = ::write(2, "\n", 1);
  (void)n;
  ::_exit(127);
}

void DecodeWait(int wstatus, ProcessResult* r) {
  if (WIFEXITED(wstatus)) r->exit_code = WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) r->signal = WTERMSIG(wstatus);
}

// Reads what is available on fd into cap; closes fd at end of file.
void Drain(int& fd, BoundedCapture* cap) {
  char buf[8192];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n > 0) {
    cap->Append(buf, n);
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    CloseFd(fd);
  }
}

}  // namespace

void BoundedCapture::Append(const char* data, size_t size) {
  const size_t half = limit_ / 2;
  while (size > 0 && head_.size() < half) {
    head_ += *data++;
    --size;
  }
  tail_.append(data, size);
  if (tail_.size() > half) {
    dropped_ += tail_.size() - half;
    tail_.erase(0, tail_.size() - half);
  }
}

std::string BoundedCapture::str() const {
  if (dropped_ == 0) return head_ + tail_;
  return head_ + "\n[... " + std::to_string(dropped_) +
         " bytes dropped ...]\n" + tail_;
}

std::string BoundedCapture::LastLine() const {
  const std::string all = dropped_ > 0 ? tail_ : head_ + tail_;
  size_t end = all.find_last_not_of("\r\n \t");
  if (end == std::string::npos) return "";
  size_t start = all.find_last_of('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return all.substr(start, end - start + 1);
}

std::string FindProgram(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) {
    return ::access(name.c_str(), X_OK) == 0 ? name : "";
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    const std::string dir = dirs.substr(start, colon - start);
    if (!dir.empty()) {
      const std::string candidate = dir + "/" + name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    start = colon + 1;
  }
  return "";
}

namespace {

// The time a run could use a CPU: its wall time minus the time it was
// runnable but waited for one. The kernel's run-queue wait
// (/proc/PID/schedstat) is only booked when the task next runs, which a
// starved task rarely does; so the clock samples the task's state
// (/proc/PID/stat: 'R' is running or runnable) at each check and takes
// the runnable time minus the CPU time it got (schedstat's first field)
// as the wait.
class RunClock {
 public:
  RunClock(pid_t pid, Clock::time_point start)
      : pid_(pid), start_(start), last_(start), cpu0_(CpuSeconds()) {}

  // Whether the deadline of `timeout` seconds passed, and whether the run
  // was starved then (see kMaxTimeoutStretch). Call it often (each poll).
  struct Deadline {
    bool passed = false;
    bool starved = false;
  };
  Deadline Check(double timeout) {
    const Clock::time_point now = Clock::now();
    if (Runnable()) {
      runnable_ += std::chrono::duration<double>(now - last_).count();
    }
    last_ = now;
    Deadline d;
    if (timeout <= 0) return d;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (elapsed <= timeout) return d;
    const double cpu = CpuSeconds() - cpu0_;
    const double waited = cpu >= 0 ? std::max(0.0, runnable_ - cpu) : 0;
    if (elapsed - waited > timeout) {
      d.passed = true;
    } else if (elapsed > timeout * kMaxTimeoutStretch) {
      d.passed = true;
      d.starved = true;
    }
    return d;
  }

 private:
  // CPU seconds of the task so far; -1 when the kernel does not say.
  double CpuSeconds() const {
    std::ifstream f("/proc/" + std::to_string(pid_) + "/schedstat");
    unsigned long long run_ns = 0;
    if (!(f >> run_ns)) return -1;
    return static_cast<double>(run_ns) / 1e9;
  }
  bool Runnable() const {
    std::ifstream f("/proc/" + std::to_string(pid_) + "/stat");
    std::string text((std::istreambuf_iterator<char>(f)), {});
    const size_t paren = text.rfind(')');
    return paren != std::string::npos && paren + 2 < text.size() &&
           text[paren + 2] == 'R';
  }

  pid_t pid_;
  Clock::time_point start_, last_;
  double cpu0_;
  double runnable_ = 0;
};

}  // namespace

StatusOr<ProcessResult> RunProcess(const ProcessSpec& spec) {
  if (spec.argv.empty()) return InvalidArgument("RunProcess: empty argv");
  ExecArrays arrays(spec);
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return Internal("pipe failed");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return Internal("pipe failed");
  }
  const auto start = Clock::now();
  pid_t pid = Spawn(arrays, -1, out_pipe[1], err_pipe[1]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  int out_fd = out_pipe[0], err_fd = err_pipe[0];
  if (pid < 0) {
    CloseFd(out_fd);
    CloseFd(err_fd);
    return Internal(std::string("fork failed: ") + std::strerror(errno));
  }
  ProcessResult r;
  BoundedCapture out(spec.capture_bytes), err(spec.capture_bytes);
  int wstatus = 0;
  bool exited = false;
  RunClock clock(pid, start);
  while (!exited) {
    if (const RunClock::Deadline d = clock.Check(spec.timeout_seconds);
        d.passed) {
      ::kill(-pid, SIGKILL);
      r.timed_out = true;
      r.starved = d.starved;
      break;
    }
    pollfd fds[2];
    int n = 0;
    if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
    if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
    if (n > 0 && ::poll(fds, n, 20) > 0) {
      for (int i = 0; i < n; ++i) {
        if (fds[i].revents == 0) continue;
        if (fds[i].fd == out_fd)
          Drain(out_fd, &out);
        else
          Drain(err_fd, &err);
      }
    } else if (n == 0) {
      ::usleep(5000);
    }
    // Not reaped yet (WNOWAIT): while the zombie exists its pid and group
    // id cannot be reused, so killing the group below is safe.
    siginfo_t info{};
    exited = ::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
             info.si_pid == pid;
  }
  if (exited) {
    // Leftover members of its group (a script's children) go too.
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, &wstatus, 0);
    for (int fd : {out_fd, err_fd}) {
      if (fd >= 0) ::fcntl(fd, F_SETFL, O_NONBLOCK);
    }
    while (out_fd >= 0) Drain(out_fd, &out);
    while (err_fd >= 0) Drain(err_fd, &err);
    DecodeWait(wstatus, &r);
  } else {
    ::waitpid(pid, &wstatus, 0);
    DecodeWait(wstatus, &r);
  }
  CloseFd(out_fd);
  CloseFd(err_fd);
  r.seconds = SecondsSince(start);
  r.out = out.str();
  r.err = err.str();
  r.err_last_line = err.LastLine();
  return r;
}

LineProcess::~LineProcess() { Kill(); }

Status LineProcess::Start(const ProcessSpec& spec) {
  Kill();
  ::signal(SIGPIPE, SIG_IGN);  // A dead worker must not kill us on write.
  ExecArrays arrays(spec);
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) return Internal("pipe failed");
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    return Internal("pipe failed");
  }
  pid_ = Spawn(arrays, in_pipe[0], out_pipe[1], err_pipe[1]);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  in_fd_ = in_pipe[1];
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  err_ = BoundedCapture(spec.capture_bytes);
  pending_.clear();
  last_exit_ = ProcessResult();
  if (pid_ < 0) {
    Kill();
    return Internal(std::string("fork failed: ") + std::strerror(errno));
  }
  return Status();
}

void LineProcess::Reap(bool timed_out, bool starved) {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    int wstatus = 0;
    ::waitpid(pid_, &wstatus, 0);
    last_exit_ = ProcessResult();
    last_exit_.timed_out = timed_out;
    last_exit_.starved = starved;
    DecodeWait(wstatus, &last_exit_);
  }
  if (err_fd_ >= 0) {
    ::fcntl(err_fd_, F_SETFL, O_NONBLOCK);
    while (err_fd_ >= 0) Drain(err_fd_, &err_);
  }
  last_exit_.err = err_.str();
  last_exit_.err_last_line = err_.LastLine();
  pid_ = -1;
  CloseFd(in_fd_);
  CloseFd(out_fd_);
  CloseFd(err_fd_);
}

bool LineProcess::Alive() {
  if (pid_ <= 0) return false;
  siginfo_t info{};
  if (::waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
      info.si_pid == pid_) {
    Reap(false);
    return false;
  }
  return true;
}

void LineProcess::Kill() {
  if (pid_ > 0 || in_fd_ >= 0) Reap(false);
}

StatusOr<std::string> LineProcess::Request(const std::string& line,
                                           double timeout_seconds) {
  if (pid_ <= 0) return FailedPrecondition("worker not running");
  const auto start = Clock::now();
  RunClock clock(pid_, start);
  std::string msg = line + "\n";
  for (size_t done = 0; done < msg.size();) {
    ssize_t n = ::write(in_fd_, msg.data() + done, msg.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Reap(false);
      return IoError("worker closed its input");
    }
    done += n;
  }
  while (true) {
    size_t nl = pending_.find('\n');
    if (nl != std::string::npos) {
      std::string answer = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return answer;
    }
    if (const RunClock::Deadline d = clock.Check(timeout_seconds); d.passed) {
      Reap(true, d.starved);
      return Status(StatusCode::kDeadlineExceeded,
                    d.starved ? "worker starved of CPU (the machine is busy)"
                              : "worker timed out");
    }
    if (out_fd_ < 0) {
      Reap(false);
      return IoError("worker ended without answering");
    }
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    const int n = err_fd_ >= 0 ? 2 : 1;
    if (::poll(fds, n, 20) <= 0) continue;
    if (fds[0].revents != 0) {
      char buf[8192];
      ssize_t got = ::read(out_fd_, buf, sizeof buf);
      if (got > 0) pending_.append(buf, got);
      if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
        CloseFd(out_fd_);
      }
    }
    if (n == 2 && fds[1].revents != 0) Drain(err_fd_, &err_);
  }
}

}  // namespace trench::hlo_diff
