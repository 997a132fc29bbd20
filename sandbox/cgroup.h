// Per-run control groups: an aggregate memory bound and a process bound for
// the whole tree of a run, and the run's memory peak, from the kernel.
//
// Detected once (DetectCgroups()), like the isolation tier:
//  - kV2: the unified hierarchy (cgroup2 mounted at /sys/fs/cgroup) with
//    the memory and pids controllers. As root we create <mount>/trench and
//    enable both controllers in its subtree_control; where the mount's root
//    itself holds processes and refuses that (cgroup v2's rule: no
//    processes in a group that hands controllers down, true of a container's
//    namespace root), this process first moves into a leaf <mount>/
//    trench-daemon and retries.
//  - kV1: the legacy memory and pids hierarchies (each mounted on its own,
//    e.g. /sys/fs/cgroup/{memory,pids}); runs live in <hierarchy>/trench/.
//  - kNone: neither works (not root, no controllers, read-only cgroupfs):
//    runs keep only the per-process rlimits, and Describe() says what is
//    lost.
// Each run gets a group named "<our pid>-<n>" (RunCgroup), so that daemons
// and test processes sharing the machine never touch each other's groups;
// a start-up sweep (inside DetectCgroups) removes the groups of dead pids.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace trench::sandbox {

enum class CgroupMode { kNone, kV1, kV2 };

// "none", "v1" or "v2".
const char* CgroupModeName(CgroupMode mode);

struct CgroupSupport {
  CgroupMode mode = CgroupMode::kNone;
  std::string error;          // Why kNone.
  std::string v2_parent;      // kV2: <mount>/trench.
  std::string memory_parent;  // kV1: <memory hierarchy>/trench.
  std::string pids_parent;    // kV1: <pids hierarchy>/trench.
  bool v1_memsw = false;      // kV1: memory.memsw.* exists (swap bounded).
  int swept = 0;              // Stale groups of dead processes removed.

  // One line for the start-up log, e.g. "cgroups: v1 (memory at
  // /sys/fs/cgroup/memory/trench, pids at ...): runs get an aggregate
  // memory bound, a process bound and the memory peak" or, for kNone,
  // "cgroups: NONE (why); lost: ...".
  std::string Describe() const;
};

// Probes once (thread-safe): finds the hierarchies, creates the parents,
// and creates and removes one probe group with the limits set.
const CgroupSupport& DetectCgroups();

// The memory and process counts of a finished run.
struct CgroupUsage {
  uint64_t memory_peak_bytes = 0;  // v2 memory.peak, v1 max_usage_in_bytes.
  bool oom_killed = false;         // The kernel killed a process of the run
                                   // at the memory bound.
};

// One run's group(s). Create before the run's init starts; the init writes
// "0" to each of procs_fds() (async-signal-safe) to join them before it
// forks the target. Destroying it kills whatever is still in the groups
// and removes them.
class RunCgroup {
 public:
  // Creates the group(s) under `support` with memory.max = memory_bytes
  // (swap 0 where the kernel accounts it) and pids.max = processes; 0
  // leaves that bound off. Errors: FailedPrecondition when support is
  // kNone; IoError (naming the file) when the kernel refuses a step.
  static StatusOr<std::unique_ptr<RunCgroup>> Create(
      const CgroupSupport& support, uint64_t memory_bytes, uint64_t processes);
  ~RunCgroup();
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;

  // Open write fds (CLOEXEC) on the groups' cgroup.procs: one for v2, two
  // for v1 (memory, pids).
  const std::vector<int>& procs_fds() const { return procs_fds_; }
  // The peak and whether the OOM killer struck, read now.
  CgroupUsage Usage() const;
  // Process (and thread) ids currently in the run's group(s).
  std::vector<pid_t> Members() const;

 private:
  RunCgroup() = default;
  CgroupMode mode_ = CgroupMode::kNone;
  std::vector<std::string> dirs_;  // v2: one; v1: memory, pids.
  std::string memory_dir_;
  std::vector<int> procs_fds_;
};

}  // namespace trench::sandbox
