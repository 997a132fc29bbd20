// Runs an untrusted binary with limits, and reports how it ended.
//
// Each run gets (where the machine allows it: the tiers of capabilities.h;
// the kBwrap tier builds the same view with bubblewrap, see bwrap.h):
//  - a tiny init process of ours as PID 1 of a new PID namespace, with new
//    network (loopback only, down), mount, IPC and UTS namespaces (and a
//    user namespace when we are not root). At the end, or on timeout, the
//    init kill(-1)s and reaps the namespace; its death is the backstop.
//    Nothing of the run survives it, however it forked or setsid'd.
//    Without namespaces the init is a PR_SET_CHILD_SUBREAPER and kills its
//    whole tree itself (orphans are reparented to it, so setsid and
//    double-forks cannot escape either);
//  - the program in its own session and process group, stdin /dev/null;
//  - a read-only view of the whole file system (recursive, nosuid) except
//    its work directory, a private tmpfs /tmp and a fresh /proc;
//  - uid/gid `uid`/`gid` (not root) with no supplementary groups and
//    no_new_privs; as root the work directory is chowned to it first;
//  - rlimits (address space, CPU, file size, open files, processes, no core
//    dumps), a wall-clock timeout, and an optional seccomp filter;
//  - where the machine has them (cgroup.h), cgroups of its own: a bound on
//    the memory of the whole tree (swap 0) and on its processes, and the
//    run's memory peak as the kernel counts it;
//  - masked_paths hidden under empty read-only tmpfs mounts, except the
//    work directory and read-only paths below them (namespaced tiers);
//  - stdout/stderr drained continuously: the first N bytes are kept, the
//    rest counted, so a flood never blocks the child.
//
// Completion comes back on a Boost.Asio io_context through a pidfd (no
// thread per child). Run() is the synchronous form for tools and tests.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "sandbox/capabilities.h"
#include "sandbox/seccomp.h"

namespace trench::sandbox {

// 0 means "no limit" for every field. The rlimits apply per process (a
// fork bomb spreads its CPU over many): the wall clock bounds the tree.
struct Limits {
  double wall_seconds = 60;                   // Kills the whole tree.
  uint64_t cpu_seconds = 60;                  // RLIMIT_CPU: SIGXCPU, then KILL.
  uint64_t address_space_bytes = 4ull << 30;  // RLIMIT_AS, per process.
  uint64_t file_size_bytes = 1ull << 30;      // RLIMIT_FSIZE: SIGXFSZ.
  uint64_t open_files = 256;                  // RLIMIT_NOFILE.
  // RLIMIT_NPROC counts every process of the uid on the machine, so
  // concurrent runs that must not starve each other use distinct uids.
  // Without a uid switch (not root) the caller's own processes and threads
  // count too: keep it well above them.
  uint64_t processes = 256;
  // The whole run, where cgroups exist (cgroup.h; else ignored): memory of
  // every process together, page cache and the private /tmp included
  // (memory.max, swap 0: the kernel's OOM killer ends a process of the run
  // past it), and processes and threads (pids.max: fork fails with EAGAIN
  // past it, whatever the uid).
  uint64_t memory_bytes = 0;
  uint64_t total_processes = 0;
  uint64_t stdout_bytes = 1 << 20;  // Kept; the rest is counted.
  uint64_t stderr_bytes = 1 << 20;
};

struct Options {
  // argv[0] is the program: a path, or a name looked up in this process's
  // PATH. The program must be readable and executable by `uid`.
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "KEY=value"; the child gets exactly this.
  // Existing directory other than /: the child's cwd and its only writable
  // place (besides the private /tmp). Visible at the same path inside the
  // sandbox. Its parents must be searchable by `uid`.
  std::string work_dir;
  // Extra paths made visible read-only at the same place, needed when they
  // live under /tmp (hidden by the private /tmp). At most 64.
  std::vector<std::string> read_only_paths;
  // Existing directories hidden from the run (kBuiltin and kBwrap: each is
  // an empty read-only tmpfs inside the sandbox), with work_dir and the
  // read_only_paths below them bound back in at their places. Neither the
  // work dir nor a read-only path may contain a masked path. kNone cannot
  // mask (no mount namespace): there, only permissions guard them. At
  // most 16.
  std::vector<std::string> masked_paths;
  Limits limits;
  // As root: switched to. Not root: the id inside the user namespace,
  // mapped to ours (or unchanged when there are no namespaces).
  uid_t uid = 65534;  // nobody.
  gid_t gid = 65534;
  bool chown_work_dir = true;  // As root; recursively, not following links.
  bool use_namespaces = true;  // false forces the fallback (kNone).
  // The tier (capabilities.h). kAuto takes the best this machine has; a
  // forced tier it lacks makes Spawn fail with FailedPrecondition.
  Isolation isolation = Isolation::kAuto;
  uint64_t tmp_size_bytes = 64 << 20;  // Size of the private /tmp.
  SeccompMode seccomp = SeccompMode::kErrno;
};

// Limits the run ran into, as far as the exit tells. kMemory is certain
// when the run's cgroup saw an OOM kill, and otherwise a guess: an
// abnormal exit with a peak RSS of at least half the address-space limit
// (allocation failures are not visible from outside).
enum LimitHit : unsigned {
  kLimitWallTime = 1u << 0,
  kLimitCpu = 1u << 1,       // SIGXCPU, or SIGKILL at the hard CPU limit.
  kLimitFileSize = 1u << 2,  // SIGXFSZ.
  kLimitMemory = 1u << 3,
  kLimitOutput = 1u << 4,   // stdout or stderr truncated.
  kLimitSeccomp = 1u << 5,  // SIGSYS (seccomp kill mode).
};

struct Result {
  bool exited = false;  // Normal exit: exit_code is valid.
  int exit_code = -1;
  int signal = 0;  // The signal that ended it, when !exited.
  bool timed_out = false;
  unsigned limits_hit = 0;  // LimitHit bits.
  double wall_seconds = 0;
  double cpu_seconds = 0;      // User + system, of every process of the run.
  uint64_t max_rss_bytes = 0;  // Of the largest single process (rusage).
  // With a cgroup (cgroup.h): the peak of the whole run's memory, page
  // cache and /tmp included (0 without), and whether the kernel's OOM
  // killer ended a process of the run at Limits::memory_bytes.
  uint64_t memory_peak_bytes = 0;
  bool oom_killed = false;
  std::string stdout_data, stderr_data;                 // The first N bytes.
  uint64_t stdout_truncated = 0, stderr_truncated = 0;  // Bytes dropped.
  bool namespaced = false;  // Ran with namespaces (kBuiltin or kBwrap).
  Isolation isolation = Isolation::kNone;  // The tier it ran in.

  bool ok() const { return exited && exit_code == 0 && !timed_out; }
  // One line, e.g. "exited 0 in 0.02s (cpu 0.01s, rss 3.1 MiB)" or
  // "killed by SIGKILL: wall timeout 1s ...".
  std::string Summary() const;
};

// A run in flight. Thread-compatible: use it on its io_context's thread.
class Process {
 public:
  virtual ~Process() = default;
  // Kills the whole tree now; the completion handler still runs once, with
  // the signal recorded. No-op once finished.
  virtual void Kill() = 0;
  virtual pid_t pid() const = 0;  // Of our init, in our PID namespace.
};

using DoneHandler = std::function<void(StatusOr<Result>)>;

// Starts `options` and returns at once. `done` is called exactly once, on
// `ioc`, when every process of the run has ended and the output is drained.
// Destroying `ioc` with the run in flight kills the run (and waits for its
// init) instead of calling `done`.
// Errors: InvalidArgument (empty argv, bad work dir), NotFound (program not
// in PATH), IoError (fork/pipe failures), FailedPrecondition (a forced
// isolation tier this machine lacks). A program that cannot be executed
// (set-up or execve failure inside the child) is reported through `done` as
// an error naming the binary and errno (with kBwrap: bwrap's message, see
// bwrap.h). `done` is not called when Spawn
// itself fails.
// REQUIRES: the calling thread outlives the run (the init gets
// PR_SET_PDEATHSIG from it, so that a dead daemon leaves no runs behind).
StatusOr<std::shared_ptr<Process>> Spawn(boost::asio::io_context& ioc,
                                         const Options& options,
                                         DoneHandler done);

// Spawn() on a private io_context, waiting for the end. Same errors.
StatusOr<Result> Run(const Options& options);

// The LimitHit bits that `r` (exit, signal, usage, truncation) shows under
// `limits`. Spawn fills Result::limits_hit with it.
unsigned ClassifyLimits(const Result& r, const Limits& limits);

// "SIGKILL", "SIGXCPU", ... or "signal N".
std::string SignalName(int sig);

}  // namespace trench::sandbox
