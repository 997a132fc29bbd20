// Internal: the kBwrap tier (see capabilities.h).
//
// Our init runs as in the fallback (a subreaper killing its whole tree, no
// namespaces of its own). Its target applies the rlimits, the uid switch
// (as root) and no_new_privs as always, then execs bwrap with the program
// as bwrap's command:
//   bwrap [--unshare-user [--uid U --gid G]] --unshare-pid --unshare-net
//         --unshare-ipc --unshare-uts --die-with-parent --new-session
//         --ro-bind / / --dev /dev --proc /proc --perms 1777 --size N
//         --tmpfs /tmp [--tmpfs M]... [--ro-bind P P]... --bind WORK WORK
//         [--remount-ro M]... --chdir WORK [--seccomp FD] -- PROGRAM ARGS...
// (M: the masked paths, P: the read-only paths.)
// As root the target is already the run's uid: bwrap runs unprivileged and
// maps that uid to itself in a user namespace. Not root, --uid/--gid map
// the run's ids to ours. A setuid bwrap gets neither --unshare-user nor
// no_new_privs before it (that would void its setuid bit); bwrap sets
// no_new_privs itself before the program in every case.
//
// What differs from kBuiltin, as the program sees it:
//  - the seccomp filter is installed by bwrap just before it execs the
//    program: our filter denies the mounts and namespaces bwrap needs, so
//    it cannot come earlier. It reaches bwrap via --seccomp FD, a pipe
//    holding the compiled BPF program;
//  - loopback is up in the new network namespace (bwrap brings it up), so
//    a connect to a host port fails with ECONNREFUSED, not ENETUNREACH;
//  - /dev is bwrap's minimal one (null, zero, full, random, urandom, tty);
//  - argv[0] is the resolved path; bwrap's own init is PID 1, the program
//    PID 2;
//  - bwrap reports a program killed by signal N as exit status 128+N:
//    ReadBwrapOutcome maps 129..192 back to the signal, so a program that
//    exits with such a code itself reads as killed by that signal;
//  - bwrap's own failures (mounts, execvp of the program) are exit 1 with
//    "bwrap: ..." first on stderr: they read as set-up errors, so a program
//    that prints that and exits 1 itself is misreported the same way.
#pragma once

#include <linux/filter.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "sandbox/capabilities.h"
#include "sandbox/sandbox.h"

namespace trench::sandbox::internal {

struct BwrapSpec {
  std::string bwrap_path;
  bool setuid = false;   // bwrap is setuid root.
  bool map_uid = false;  // Not root: map uid/gid to ours (--uid, --gid).
  uid_t uid = 65534;
  gid_t gid = 65534;
  std::string work_dir;                      // Canonical.
  std::vector<std::string> read_only_paths;  // Canonical.
  std::vector<std::string> masked_paths;     // Canonical.
  uint64_t tmp_size_bytes = 64 << 20;
  int seccomp_fd = -1;            // -1: no filter.
  std::string program;            // Absolute path.
  std::vector<std::string> args;  // argv[1..].
};

// bwrap's argv (argv[0] = spec.bwrap_path) for `spec`, as in the header
// comment.
std::vector<std::string> BwrapArgv(const BwrapSpec& spec);

// A pipe holding `filter` with its write end closed; returns the read end
// (CLOEXEC, numbered 3 or above) for --seccomp. The filter must fit in the
// pipe buffer (it is a few hundred bytes). Errors: IoError.
StatusOr<int> FilterPipe(const std::vector<sock_filter>& filter);

// Turns bwrap's exit, as collected in `r` (exit, stderr), into the
// program's: 128+N becomes signal N. Returns FailedPrecondition (NotFound
// for a missing path, with the read_only_paths hint) with bwrap's message
// when bwrap itself failed, naming `program`.
Status ReadBwrapOutcome(const std::string& program, Result* r);

// sandbox::Run() with `caps` in place of DetectCapabilities(): the bwrap
// probe runs through the real kBwrap path before detection is done.
// Defined in sandbox.cc.
StatusOr<Result> RunWith(const Options& options, const Capabilities& caps);

}  // namespace trench::sandbox::internal
