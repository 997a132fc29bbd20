// Everything here runs in a child cloned from a possibly multithreaded
// process: only system calls, no allocation, no locks, no glibc wrappers
// that synchronize threads (setuid & co. go through syscall() directly,
// because glibc's versions signal every thread of the parent's image).
#include "sandbox/child.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

namespace trench::sandbox::internal {
namespace {

constexpr unsigned long kNamespaceFlags =
    CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS;

// Forks like fork(2) but without glibc's atfork handlers and locks.
pid_t RawFork(unsigned long flags) {
  return static_cast<pid_t>(syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0));
}

void WriteReport(int fd, const Report& r) {
  ssize_t n;
  do {
    n = write(fd, &r, sizeof r);
  } while (n < 0 && errno == EINTR);
}

[[noreturn]] void Fail(int fd, Stage stage) {
  Report r;
  r.kind = Report::kSetupFailed;
  r.stage = stage;
  r.error = errno;
  WriteReport(fd, r);
  _exit(127);
}

void ResetSignals() {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &sa, nullptr);
  }
  sigset_t empty;
  sigemptyset(&empty);
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty, nullptr, NSIG / 8);
}

// mkdir -p for a path that is missing in the new view (it lived under the
// host's /tmp, now covered by the private one).
void MakeDirs(const char* path) {
  char buf[PATH_MAX];
  size_t n = strlen(path);
  if (n >= sizeof buf) return;
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    char saved = buf[i];
    buf[i] = '\0';
    mkdir(buf, 0755);  // EEXIST and EROFS are fine; move_mount decides.
    buf[i] = saved;
  }
}

int OpenTree(const char* path) {
  return static_cast<int>(
      syscall(SYS_open_tree, AT_FDCWD, path,
              OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
}

int SetAttr(int dfd, const char* path, unsigned flags, uint64_t set) {
  mount_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.attr_set = set;
  return static_cast<int>(
      syscall(SYS_mount_setattr, dfd, path, flags, &attr, sizeof attr));
}

int MoveInto(int tree_fd, const char* path) {
  struct stat st;
  if (stat(path, &st) != 0) MakeDirs(path);
  return static_cast<int>(syscall(SYS_move_mount, tree_fd, "", AT_FDCWD, path,
                                  MOVE_MOUNT_F_EMPTY_PATH));
}

void WriteFile(const char* path, const char* text, int report_fd) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) Fail(report_fd, kIdMap);
  size_t n = strlen(text);
  if (write(fd, text, n) != static_cast<ssize_t>(n)) Fail(report_fd, kIdMap);
  close(fd);
}

// Unprivileged: map the run's uid/gid to ours. As the creator of the user
// namespace the init holds every capability in it (until the target's
// execve as a non-root uid drops them), enough for the mounts.
void SetUpUserNamespace(const ChildPlan& p) {
  WriteFile("/proc/self/setgroups", p.setgroups_text, p.report_fd);
  WriteFile("/proc/self/uid_map", p.uid_map_text, p.report_fd);
  WriteFile("/proc/self/gid_map", p.gid_map_text, p.report_fd);
}

// The mount namespace: everything read-only and nosuid, except the work dir
// (and a private /tmp); the read-only paths re-appear if /tmp hid them.
void SetUpMounts(const ChildPlan& p) {
  int fd = p.report_fd;
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    Fail(fd, kMountPrivate);
  // Detached copies, taken before / turns read-only (they keep rw).
  int work = OpenTree(p.work_dir);
  if (work < 0) Fail(fd, kOpenTree);
  int ro[kMaxReadOnlyPaths];
  size_t num_ro = p.num_read_only_paths < kMaxReadOnlyPaths
                      ? p.num_read_only_paths
                      : kMaxReadOnlyPaths;
  for (size_t i = 0; i < num_ro; ++i) {
    ro[i] = OpenTree(p.read_only_paths[i]);
    if (ro[i] < 0) Fail(fd, kOpenTree);
  }
  const uint64_t kRoAttrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID;
  if (SetAttr(AT_FDCWD, "/", AT_RECURSIVE, kRoAttrs) != 0) Fail(fd, kReadOnly);
  for (size_t i = 0; i < num_ro; ++i) {
    if (SetAttr(ro[i], "", AT_EMPTY_PATH | AT_RECURSIVE, kRoAttrs) != 0)
      Fail(fd, kReadOnly);
  }
  if (SetAttr(work, "", AT_EMPTY_PATH | AT_RECURSIVE,
              MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) != 0)
    Fail(fd, kReadOnly);
  if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, p.tmpfs_options) !=
      0)
    Fail(fd, kTmpfs);
  // A /proc that shows only this PID namespace. Best effort: where proc
  // cannot be mounted the host's stays, read-only.
  mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
  size_t num_masked = p.num_masked_paths < kMaxMaskedPaths ? p.num_masked_paths
                                                           : kMaxMaskedPaths;
  for (size_t i = 0; i < num_masked; ++i) {
    struct stat st;
    if (stat(p.masked_paths[i], &st) != 0) MakeDirs(p.masked_paths[i]);
    if (mount("tmpfs", p.masked_paths[i], "tmpfs",
              MS_NOSUID | MS_NODEV | MS_NOEXEC, p.mask_options) != 0)
      Fail(fd, kMask);
  }
  for (size_t i = 0; i < num_ro; ++i) {
    if (MoveInto(ro[i], p.read_only_paths[i]) != 0) Fail(fd, kBind);
    close(ro[i]);
  }
  if (MoveInto(work, p.work_dir) != 0) Fail(fd, kBind);
  close(work);
  // The masks' mount points are made; nothing more is written there.
  for (size_t i = 0; i < num_masked; ++i) {
    if (SetAttr(AT_FDCWD, p.masked_paths[i], 0,
                MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                    MOUNT_ATTR_NOEXEC) != 0)
      Fail(fd, kMask);
  }
}

// Moves the init into the run's cgroups (cgroup.h): "0" is the writer.
void JoinCgroups(const ChildPlan& p) {
  for (size_t i = 0; i < p.num_cgroup_fds && i < kMaxCgroupFds; ++i) {
    ssize_t n;
    do {
      n = write(p.cgroup_fds[i], "0", 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) Fail(p.report_fd, kCgroup);
    close(p.cgroup_fds[i]);
  }
}

void SetRlimits(const ChildPlan& p, int fd) {
  for (size_t i = 0; i < p.num_rlimits; ++i) {
    if (syscall(SYS_prlimit64, 0, p.rlimits[i].resource, &p.rlimits[i].limit,
                nullptr) != 0)
      Fail(fd, kRlimit);
  }
}

// The target, between fork and execve. Failures go to `fd` (CLOEXEC, so a
// successful execve closes it and the init reads EOF).
[[noreturn]] void ExecTarget(const ChildPlan& p, int fd) {
  ResetSignals();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (setsid() < 0) Fail(fd, kSetsid);
  if (dup2(p.stdin_fd, 0) < 0 || dup2(p.stdout_fd, 1) < 0 ||
      dup2(p.stderr_fd, 2) < 0)
    Fail(fd, kDup);
  syscall(SYS_close_range, 3, ~0u, CLOSE_RANGE_CLOEXEC);
  if (p.inherit_fd >= 0 && fcntl(p.inherit_fd, F_SETFD, 0) != 0) Fail(fd, kDup);
  if (chdir(p.work_dir) != 0) Fail(fd, kChdir);
  SetRlimits(p, fd);
  if (p.set_uid) {
    if (syscall(SYS_setgroups, 0, nullptr) != 0) Fail(fd, kSetgroups);
    if (syscall(SYS_setresgid, p.gid, p.gid, p.gid) != 0) Fail(fd, kSetgid);
    if (syscall(SYS_setresuid, p.uid, p.uid, p.uid) != 0) Fail(fd, kSetuid);
  }
  if (p.no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    Fail(fd, kNoNewPrivs);
  if (p.seccomp != nullptr &&
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, p.seccomp, 0, 0) != 0)
    Fail(fd, kSeccomp);
  execve(p.path, p.argv, p.envp);
  Fail(fd, kExec);
}

// Kills every descendant (without namespaces): orphans are reparented to
// us (a subreaper), so listing our children until none is left reaches all
// of them, however they setsid'd or double-forked.
void KillTree(pid_t target) {
  char path[64] = "/proc/self/task/";
  char num[24];
  int len = 0;
  for (long v = syscall(SYS_gettid); v > 0; v /= 10) num[len++] = '0' + v % 10;
  size_t at = strlen(path);
  while (len > 0) path[at++] = num[--len];
  memcpy(path + at, "/children", 10);
  for (int round = 0; round < 100000; ++round) {
    if (target > 0) kill(-target, SIGKILL);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      char buf[4096];
      long pid = 0;
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n; ++i) {
          if (buf[i] >= '0' && buf[i] <= '9') {
            pid = pid * 10 + (buf[i] - '0');
          } else if (pid > 0) {
            kill(static_cast<pid_t>(pid), SIGKILL);
            pid = 0;
          }
        }
      }
      if (pid > 0) kill(static_cast<pid_t>(pid), SIGKILL);
      close(fd);
    }
    while (waitpid(-1, nullptr, WNOHANG | __WALL) > 0) {
    }
    if (waitpid(-1, nullptr, WNOHANG | __WALL) < 0 && errno == ECHILD) return;
    timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
  }
}

// Closes every fd >= 3 but the plan's: a concurrent spawn's init must not
// hold our pipes open (CLOEXEC does not help, the init never execs).
void CloseOtherFds(const ChildPlan& p) {
  int keep[] = {p.stdin_fd, p.stdout_fd, p.stderr_fd, p.report_fd,
                p.inherit_fd};
  constexpr int kNum = sizeof keep / sizeof keep[0];
  for (int i = 1; i < kNum; ++i) {  // Insertion sort, no allocation.
    for (int j = i; j > 0 && keep[j - 1] > keep[j]; --j) {
      int t = keep[j];
      keep[j] = keep[j - 1];
      keep[j - 1] = t;
    }
  }
  unsigned next = 3;
  for (int fd : keep) {
    if (fd < static_cast<int>(next)) continue;
    if (static_cast<unsigned>(fd) > next)
      syscall(SYS_close_range, next, static_cast<unsigned>(fd) - 1, 0);
    next = static_cast<unsigned>(fd) + 1;
  }
  syscall(SYS_close_range, next, ~0u, 0);
}

// Kills every other process of our PID namespace (we are its init, so
// kill(-1) reaches exactly those) and reaps them ourselves: the kernel's own
// teardown at our exit would auto-reap them and lose their CPU time.
void KillNamespace() {
  if (getpid() != 1) return;  // Never kill(-1) outside our own namespace.
  for (int round = 0; round < 100000; ++round) {
    kill(-1, SIGKILL);
    while (waitpid(-1, nullptr, WNOHANG | __WALL) > 0) {
    }
    if (waitpid(-1, nullptr, WNOHANG | __WALL) < 0 && errno == ECHILD) return;
    timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
  }
}

[[noreturn]] void InitMain(const ChildPlan& p) {
  const int fd = p.report_fd;
  JoinCgroups(p);
  CloseOtherFds(p);
  ResetSignals();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (!p.namespaces) prctl(PR_SET_CHILD_SUBREAPER, 1);
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGCHLD);
  sigaddset(&waited, SIGTERM);
  sigprocmask(SIG_BLOCK, &waited, nullptr);
  if (p.user_namespace) SetUpUserNamespace(p);
  if (p.namespaces) SetUpMounts(p);
  if (p.probe) _exit(0);

  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) Fail(fd, kPipe);
  pid_t target = RawFork(0);
  if (target < 0) Fail(fd, kFork);
  if (target == 0) {
    close(exec_pipe[0]);
    ExecTarget(p, exec_pipe[1]);
  }
  close(exec_pipe[1]);
  close(p.stdin_fd);
  close(p.stdout_fd);
  close(p.stderr_fd);
  Report failure;
  ssize_t n;
  do {
    n = read(exec_pipe[0], &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof failure)) {
    WriteReport(fd, failure);
    if (p.namespaces) {
      KillNamespace();
    } else {
      KillTree(target);
    }
    _exit(127);
  }

  Report r;
  for (;;) {
    siginfo_t info;
    int sig = sigwaitinfo(&waited, &info);
    if (sig == SIGTERM) {
      r.kind = Report::kTerminated;
      break;
    }
    if (sig != SIGCHLD) continue;
    int status;
    pid_t pid;
    bool target_done = false;
    while ((pid = waitpid(-1, &status, WNOHANG | __WALL)) > 0) {
      if (pid == target) {
        target_done = true;
        r.kind = Report::kExited;
        r.status = status;
      }
    }
    if (target_done) break;
  }
  if (p.namespaces) {
    KillNamespace();
  } else {
    KillTree(target);
  }
  WriteReport(fd, r);
  _exit(0);
}

}  // namespace

IdMaps::IdMaps(uid_t uid, gid_t gid)
    : uid_map(std::to_string(uid) + " " + std::to_string(geteuid()) + " 1\n"),
      gid_map(std::to_string(gid) + " " + std::to_string(getegid()) + " 1\n") {}

void IdMaps::Apply(ChildPlan* plan) const {
  plan->user_namespace = true;
  plan->setgroups_text = "deny";
  plan->uid_map_text = uid_map.c_str();
  plan->gid_map_text = gid_map.c_str();
}

const char* StageName(Stage stage) {
  switch (stage) {
#define TRENCH_STAGE_NAME(e, name) \
  case e:                          \
    return name;
    TRENCH_SANDBOX_STAGES(TRENCH_STAGE_NAME)
#undef TRENCH_STAGE_NAME
  }
  return "unknown step";
}

pid_t StartInit(const ChildPlan& plan) {
  unsigned long flags = plan.namespaces ? kNamespaceFlags : 0;
  if (plan.namespaces && plan.user_namespace) flags |= CLONE_NEWUSER;
  pid_t pid = RawFork(flags);
  if (pid < 0) return -errno;
  if (pid == 0) InitMain(plan);
  return pid;
}

}  // namespace trench::sandbox::internal
