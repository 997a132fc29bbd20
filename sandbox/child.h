// Internal: the code that runs between clone() and execve().
//
// StartInit() clones our init process (PID 1 of new namespaces when asked),
// which sets up the mounts, forks the target, applies the limits, uid and
// seccomp filter in it, execs it, reaps every process of the run and reports
// to the parent through `report_fd`. Everything it uses is prepared by the
// parent in a ChildPlan beforehand: after clone() the child of a
// multithreaded process may only make system calls (no malloc, no locks).
#pragma once

#include <linux/filter.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace trench::sandbox::internal {

// Steps of the set-up, in order. A failure reports the step and errno.
#define TRENCH_SANDBOX_STAGES(X)                   \
  X(kClone, "clone")                               \
  X(kCgroup, "join the run's cgroup")              \
  X(kIdMap, "write the user namespace id maps")    \
  X(kMountPrivate, "make mounts private")          \
  X(kOpenTree, "clone a mount (open_tree)")        \
  X(kReadOnly, "make / read-only (mount_setattr)") \
  X(kTmpfs, "mount a private /tmp")                \
  X(kMask, "mount a tmpfs over a masked path")     \
  X(kBind, "mount a path into the sandbox")        \
  X(kPipe, "pipe")                                 \
  X(kFork, "fork")                                 \
  X(kSetsid, "setsid")                             \
  X(kDup, "redirect stdio")                        \
  X(kChdir, "chdir to the work dir")               \
  X(kRlimit, "setrlimit")                          \
  X(kSetgroups, "setgroups")                       \
  X(kSetgid, "setresgid")                          \
  X(kSetuid, "setresuid")                          \
  X(kNoNewPrivs, "PR_SET_NO_NEW_PRIVS")            \
  X(kSeccomp, "install the seccomp filter")        \
  X(kExec, "execve")

enum Stage : int32_t {
#define TRENCH_STAGE_ENUM(e, name) e,
  TRENCH_SANDBOX_STAGES(TRENCH_STAGE_ENUM)
#undef TRENCH_STAGE_ENUM
};
const char* StageName(Stage stage);

// What the init writes to the report pipe (one record, atomically).
struct Report {
  enum Kind : int32_t { kSetupFailed = 1, kExited = 2, kTerminated = 3 };
  int32_t kind = 0;
  int32_t stage = 0;   // kSetupFailed: a Stage.
  int32_t error = 0;   // kSetupFailed: errno.
  int32_t status = 0;  // kExited: the target's wait status.
};

struct RlimitSetting {
  int resource;
  rlimit limit;
};

constexpr size_t kMaxReadOnlyPaths = 64;
constexpr size_t kMaxMaskedPaths = 16;
constexpr size_t kMaxCgroupFds = 2;

struct ChildPlan {
  const char* path = nullptr;  // Absolute path of the program.
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* work_dir = nullptr;  // Absolute, canonical.
  const char* const* read_only_paths = nullptr;
  size_t num_read_only_paths = 0;  // At most kMaxReadOnlyPaths.
  // With namespaces: each covered by an empty read-only tmpfs (mounted
  // with `mask_options`) before work_dir and the read-only paths under it
  // are bound back in.
  const char* const* masked_paths = nullptr;
  size_t num_masked_paths = 0;  // At most kMaxMaskedPaths.
  const char* mask_options = nullptr;
  // The init writes "0" to each (the run's cgroup.procs files, cgroup.h)
  // before anything else, so that all of the run is in its groups.
  const int* cgroup_fds = nullptr;
  size_t num_cgroup_fds = 0;  // At most kMaxCgroupFds.
  bool namespaces = false;
  // With namespaces, also a user namespace (we are not root): the init
  // writes these three files of /proc/self first (all prepared by the
  // parent: "deny", "<uid> <our uid> 1", "<gid> <our gid> 1").
  bool user_namespace = false;
  const char* setgroups_text = nullptr;
  const char* uid_map_text = nullptr;
  const char* gid_map_text = nullptr;
  bool probe = false;  // Set up the namespaces, then exit 0 (no target).
  const char* tmpfs_options = nullptr;  // For the private /tmp.
  bool set_uid = false;
  uid_t uid = 0;
  gid_t gid = 0;
  const RlimitSetting* rlimits = nullptr;
  size_t num_rlimits = 0;
  const sock_fprog* seccomp = nullptr;  // Null: no filter.
  // Off only before a setuid bwrap, which sets it itself (bwrap.h).
  bool no_new_privs = true;
  // An fd the target keeps across its execve (bwrap's --seccomp FD), or -1.
  int inherit_fd = -1;
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  int report_fd = -1;  // Write end of the report pipe.
};

// The id-map texts of a user namespace mapping (uid, gid) inside to our
// effective ids; Apply() points a plan at them (they must outlive the
// StartInit call).
struct IdMaps {
  IdMaps(uid_t uid, gid_t gid);
  void Apply(ChildPlan* plan) const;
  std::string uid_map, gid_map;
};

// Clones the init (with the namespaces when plan.namespaces). Returns its
// pid, or -errno when clone fails. The parent's fds are untouched.
pid_t StartInit(const ChildPlan& plan);

}  // namespace trench::sandbox::internal
