// What isolation this machine gives us, probed once at start-up.
//
// The namespace sandbox (what bubblewrap would set up: PID, network, mount,
// IPC and UTS namespaces, a read-only root with the work dir writable) is
// built in: bubblewrap is only reported when found, never required. As root
// it needs no user namespace; otherwise it adds one, mapping the run's uid
// to ours. When both probes fail (no CAP_SYS_ADMIN and no unprivileged user
// namespaces, or a kernel without open_tree/mount_setattr, < 5.12), runs
// fall back to: our
// subreaper init killing the whole tree, process group, rlimits, uid switch
// (when root), no_new_privs and seccomp, but with the host's network and a
// writable file system (guarded only by file permissions of the uid).
// Callers log Describe() once at start-up so the fallback is visible.
#pragma once

#include <string>

namespace trench::sandbox {

struct Capabilities {
  bool namespaces = false;
  std::string namespace_error;  // Why not, when !namespaces.
  // Namespaces need a user namespace of their own (we are not root); the
  // run's uid is then mapped to ours instead of switched to.
  bool user_namespace = false;
  bool can_set_uid = false;  // We are root: runs switch to Options::uid.
  bool seccomp = false;      // The kernel takes seccomp filters.
  std::string bwrap_path;    // Where bwrap is, or empty.

  // One line, e.g. "sandbox: namespaces yes (pid net mount ipc uts); ...".
  std::string Describe() const;
};

// Probes once (thread-safe) and returns the cached answer afterwards. The
// probe clones a child into new namespaces that sets up the mounts on a
// temporary directory and exits.
const Capabilities& DetectCapabilities();

}  // namespace trench::sandbox
