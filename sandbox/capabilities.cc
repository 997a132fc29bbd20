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
  return caps;
}

}  // namespace

std::string Capabilities::Describe() const {
  std::string s = "sandbox: namespaces ";
  s += namespaces ? (user_namespace
                         ? "yes (user pid net mount ipc uts, read-only root)"
                         : "yes (pid net mount ipc uts, read-only root)")
                  : "NO (" + namespace_error +
                        "): fallback to subreaper init + process group, host "
                        "network, file system guarded by permissions only";
  s += can_set_uid      ? "; uid switch yes"
       : user_namespace ? "; uid mapped in the user namespace"
                        : "; uid switch NO (not root)";
  s += seccomp ? "; seccomp yes" : "; seccomp NO";
  s += bwrap_path.empty()
           ? "; bwrap not found (built-in namespaces)"
           : "; bwrap at " + bwrap_path + " (unused: built-in namespaces)";
  return s;
}

const Capabilities& DetectCapabilities() {
  static const Capabilities caps = Detect();
  return caps;
}

}  // namespace trench::sandbox
