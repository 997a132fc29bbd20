// What isolation this machine gives us, probed once at start-up.
//
// Runs use one of three tiers (Options::isolation can force one):
//  - kBuiltin: our own namespaces (PID, network, mount, IPC, UTS; a user
//    namespace too when we are not root, mapping the run's uid to ours), a
//    read-only root with the work dir writable, a private /tmp. Needs
//    CAP_SYS_ADMIN or unprivileged user namespaces, and open_tree /
//    mount_setattr (Linux >= 5.12).
//  - kBwrap: the same view built by bubblewrap (bwrap.h), for machines
//    where our own probe fails but bwrap works (older kernels, or a setuid
//    bwrap where user namespaces are closed to us).
//  - kNone, the fallback: our subreaper init still kills the whole tree,
//    with process group, rlimits, uid switch (when root), no_new_privs and
//    seccomp, but the run shares the host's network, PIDs and a writable
//    file system (guarded only by the file permissions of its uid).
// Automatic choice: kBuiltin, else kBwrap, else kNone. Callers log
// Describe() once at start-up so that the tier, and a fallback, is visible.
#pragma once

#include <string>

#include "base/status.h"

namespace trench::sandbox {

enum class Isolation {
  kAuto,     // The best tier this machine has (Capabilities::tier()).
  kBuiltin,  // Our own namespaces.
  kBwrap,    // Namespaces through bubblewrap.
  kNone,     // The fallback: no namespaces.
};

// "auto", "builtin", "bwrap" or "none".
const char* IsolationName(Isolation isolation);

// What runs lose on the fallback (kNone), for warnings: "PID, network, ...".
const char* FallbackLoss();

struct Capabilities {
  bool namespaces = false;      // kBuiltin works.
  std::string namespace_error;  // Why not, when !namespaces.
  // Namespaces need a user namespace of their own (we are not root); the
  // run's uid is then mapped to ours instead of switched to.
  bool user_namespace = false;
  bool can_set_uid = false;   // We are root: runs switch to Options::uid.
  bool seccomp = false;       // The kernel takes seccomp filters.
  std::string bwrap_path;     // Where bwrap is, or empty.
  bool bwrap_setuid = false;  // bwrap is setuid root (no user namespace).
  bool bwrap = false;         // kBwrap works: the probe run exited 0.
  std::string bwrap_error;    // Why not, when found but !bwrap.

  // The tier kAuto runs use: kBuiltin, else kBwrap, else kNone.
  Isolation tier() const;
  // The tier a run asking for `requested` uses. kAuto and kNone always
  // resolve; a forced kBuiltin or kBwrap that this machine lacks is
  // FailedPrecondition, naming why.
  StatusOr<Isolation> Resolve(Isolation requested) const;
  // One line naming the tier runs use and every probe's outcome, e.g.
  // "sandbox: runs use builtin namespaces (...); bwrap at /usr/bin/bwrap
  // works (unused); uid switch yes; seccomp yes". On the fallback it starts
  // "sandbox: runs use NO isolation (fallback)" and names what is lost.
  std::string Describe() const;
};

// Probes once (thread-safe) and returns the cached answer afterwards. The
// built-in probe clones a child into new namespaces that sets up the mounts
// on a temporary directory and exits; when bwrap is in PATH, it is probed
// by a real run of /bin/true through the kBwrap path (same flags, same
// seccomp filter, uid 65534 when root).
const Capabilities& DetectCapabilities();

}  // namespace trench::sandbox
