#include "sandbox/capabilities.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "sandbox/bwrap.h"
#include "sandbox/child.h"

namespace trench::sandbox {
namespace {

std::string FindInPath(const char* name) {
  const char* path = getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Runs the namespace set-up of a real run on a scratch directory.
std::string ProbeNamespaces(bool user_namespace) {
  char dir[] = "/tmp/trench-sandbox-probe-XXXXXX";
  if (mkdtemp(dir) == nullptr)
    return std::string("mkdtemp: ") + strerror(errno);
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    rmdir(dir);
    return std::string("pipe: ") + strerror(errno);
  }
  internal::ChildPlan plan;
  plan.work_dir = dir;
  plan.namespaces = true;
  plan.probe = true;
  plan.tmpfs_options = "size=1m,mode=1777";
  plan.report_fd = report[1];
  internal::IdMaps maps(65534, 65534);
  if (user_namespace) maps.Apply(&plan);
  pid_t pid = internal::StartInit(plan);
  close(report[1]);
  std::string error;
  if (pid < 0) {
    error = std::string("clone with new namespaces: ") + strerror(-pid);
  } else {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    internal::Report r;
    if (read(report[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r) &&
        r.kind == internal::Report::kSetupFailed) {
      error = std::string(
                  internal::StageName(static_cast<internal::Stage>(r.stage))) +
              ": " + strerror(r.error);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      error = "probe child failed with status " + std::to_string(status);
    }
  }
  close(report[0]);
  rmdir(dir);
  return error;
}

// A real run of /bin/true through the kBwrap path, as `caps` would run it.
std::string ProbeBwrap(const Capabilities& caps) {
  char dir[] = "/tmp/trench-sandbox-bwrap-probe-XXXXXX";
  if (mkdtemp(dir) == nullptr)
    return std::string("mkdtemp: ") + strerror(errno);
  Capabilities with_bwrap = caps;
  with_bwrap.bwrap = true;
  Options o;
  o.argv = {"true"};
  o.work_dir = dir;
  o.isolation = Isolation::kBwrap;
  o.limits.wall_seconds = 30;
  o.limits.processes = 0;  // Not root: our own threads count.
  o.tmp_size_bytes = 1 << 20;
  StatusOr<Result> r = internal::RunWith(o, with_bwrap);
  rmdir(dir);
  if (!r.ok()) return r.status().message();
  if (r->ok()) return "";
  std::string err = r->stderr_data.substr(0, r->stderr_data.find('\n'));
  return r->Summary() + (err.empty() ? "" : ": " + err);
}

Capabilities Detect() {
  Capabilities caps;
  caps.namespace_error = ProbeNamespaces(/*user_namespace=*/false);
  if (!caps.namespace_error.empty() && geteuid() != 0) {
    std::string user_error = ProbeNamespaces(/*user_namespace=*/true);
    caps.user_namespace = user_error.empty();
    caps.namespace_error +=
        user_error.empty() ? "" : "; with a user namespace: " + user_error;
    if (caps.user_namespace) caps.namespace_error.clear();
  }
  caps.namespaces = caps.namespace_error.empty();
  caps.can_set_uid = geteuid() == 0;
  caps.seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  caps.bwrap_path = FindInPath("bwrap");
  struct stat st;
  caps.bwrap_setuid = !caps.bwrap_path.empty() &&
                      stat(caps.bwrap_path.c_str(), &st) == 0 &&
                      (st.st_mode & S_ISUID) && st.st_uid == 0;
  if (!caps.bwrap_path.empty()) {
    caps.bwrap_error = ProbeBwrap(caps);
    caps.bwrap = caps.bwrap_error.empty();
  }
  return caps;
}

std::string BuiltinText(const Capabilities& c) {
  if (!c.namespaces) return "builtin namespaces NO (" + c.namespace_error + ")";
  return c.user_namespace ? "builtin namespaces yes (user pid net mount ipc "
                            "uts, read-only root)"
                          : "builtin namespaces yes (pid net mount ipc uts, "
                            "read-only root)";
}

std::string BwrapText(const Capabilities& c) {
  if (c.bwrap_path.empty()) return "bwrap not found";
  std::string s = "bwrap at " + c.bwrap_path;
  if (c.bwrap_setuid) s += " (setuid)";
  return c.bwrap ? s + " works" : s + " fails (" + c.bwrap_error + ")";
}

}  // namespace

const char* IsolationName(Isolation isolation) {
  switch (isolation) {
    case Isolation::kAuto:
      return "auto";
    case Isolation::kBuiltin:
      return "builtin";
    case Isolation::kBwrap:
      return "bwrap";
    case Isolation::kNone:
      return "none";
  }
  return "?";
}

const char* FallbackLoss() {
  return "PID, network, mount, IPC and UTS namespaces: the host network and "
         "a file system guarded by permissions only";
}

Isolation Capabilities::tier() const {
  if (namespaces) return Isolation::kBuiltin;
  return bwrap ? Isolation::kBwrap : Isolation::kNone;
}

StatusOr<Isolation> Capabilities::Resolve(Isolation requested) const {
  switch (requested) {
    case Isolation::kAuto:
      return tier();
    case Isolation::kBuiltin:
      if (!namespaces)
        return FailedPrecondition("sandbox: isolation builtin unavailable: " +
                                  namespace_error);
      return requested;
    case Isolation::kBwrap:
      if (!bwrap)
        return FailedPrecondition(
            "sandbox: isolation bwrap unavailable: " +
            (bwrap_path.empty() ? "bwrap not found in PATH" : bwrap_error));
      return requested;
    case Isolation::kNone:
      return requested;
  }
  return InvalidArgument("sandbox: unknown isolation");
}

std::string Capabilities::Describe() const {
  std::string s = "sandbox: runs use ";
  switch (tier()) {
    case Isolation::kBuiltin:
      s += BuiltinText(*this) + "; " + BwrapText(*this) + " (unused)";
      break;
    case Isolation::kBwrap:
      s += BwrapText(*this) +
           " (bwrap namespaces: user pid net mount ipc uts, read-only "
           "root); " +
           BuiltinText(*this);
      break;
    default:
      s += std::string("NO isolation (fallback; lost: ") + FallbackLoss() +
           "); " + BuiltinText(*this) + "; " + BwrapText(*this);
      break;
  }
  s += can_set_uid      ? "; uid switch yes"
       : user_namespace ? "; uid mapped in the user namespace"
                        : "; uid switch NO (not root)";
  s += seccomp ? "; seccomp yes" : "; seccomp NO";
  return s;
}

const Capabilities& DetectCapabilities() {
  static const Capabilities caps = Detect();
  return caps;
}

}  // namespace trench::sandbox
