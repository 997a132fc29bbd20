// A hand-written seccomp-BPF filter for sandboxed programs.
//
// The filter denies the system calls an untrusted compiler or tool never
// needs and that could reach past the sandbox: socket() of every family
// (AF_UNIX too: a path-based connect reaches the host's /dev/log, journal
// or D-Bus; it fails with EPERM even in kill mode, socketpair() stays),
// ptrace, mounts and namespace changes, kernel modules, kexec, reboot, bpf,
// perf, keyrings, io_uring, cross-process memory access, and so on. Everything
// else is allowed. Foreign system call ABIs (x32, or an architecture other than
// the one we were compiled for) kill the process, so the numbers cannot be
// aliased.
#pragma once

#include <linux/filter.h>

#include <vector>

namespace trench::sandbox {

enum class SeccompMode {
  kOff,    // No filter.
  kErrno,  // Denied calls fail with EPERM (clone3 with ENOSYS, see .cc).
  kKill,   // Denied calls kill the whole process (SIGSYS).
};

// Returns the BPF program for `mode`. Empty for kOff, and empty when the
// build architecture is not one we have syscall tables for (x86_64, aarch64).
// The caller installs it with prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)
// after PR_SET_NO_NEW_PRIVS.
std::vector<sock_filter> BuildSeccompFilter(SeccompMode mode);

// "off", "errno" or "kill".
const char* SeccompModeName(SeccompMode mode);

}  // namespace trench::sandbox
