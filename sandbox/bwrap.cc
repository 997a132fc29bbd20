#include "sandbox/bwrap.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace trench::sandbox::internal {
namespace {

constexpr char kBwrapPrefix[] = "bwrap: ";

}  // namespace

std::vector<std::string> BwrapArgv(const BwrapSpec& s) {
  std::vector<std::string> a = {s.bwrap_path};
  if (!s.setuid) a.push_back("--unshare-user");
  if (!s.setuid && s.map_uid) {
    a.insert(a.end(),
             {"--uid", std::to_string(s.uid), "--gid", std::to_string(s.gid)});
  }
  a.insert(a.end(),
           {"--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
            "--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--size",
            std::to_string(s.tmp_size_bytes), "--tmpfs", "/tmp"});
  for (const std::string& m : s.masked_paths) {
    a.insert(a.end(), {"--tmpfs", m});
  }
  for (const std::string& p : s.read_only_paths) {
    a.insert(a.end(), {"--ro-bind", p, p});
  }
  a.insert(a.end(), {"--bind", s.work_dir, s.work_dir});
  for (const std::string& m : s.masked_paths) {
    a.insert(a.end(), {"--remount-ro", m});
  }
  a.insert(a.end(), {"--chdir", s.work_dir});
  if (s.seccomp_fd >= 0) {
    a.insert(a.end(), {"--seccomp", std::to_string(s.seccomp_fd)});
  }
  a.insert(a.end(), {"--", s.program});
  a.insert(a.end(), s.args.begin(), s.args.end());
  return a;
}

StatusOr<int> FilterPipe(const std::vector<sock_filter>& filter) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return IoError(std::string("sandbox: pipe: ") + strerror(errno));
  // Above stdio, so that the target's dup2 onto 0-2 cannot clobber it.
  if (fds[0] < 3) {
    int moved = fcntl(fds[0], F_DUPFD_CLOEXEC, 3);
    close(fds[0]);
    fds[0] = moved;
  }
  const size_t size = filter.size() * sizeof(sock_filter);
  ssize_t n = fds[0] < 0 ? -1 : write(fds[1], filter.data(), size);
  int err = errno;
  close(fds[1]);
  if (n != static_cast<ssize_t>(size)) {
    if (fds[0] >= 0) close(fds[0]);
    return IoError(std::string("sandbox: seccomp pipe for bwrap: ") +
                   strerror(err));
  }
  return fds[0];
}

Status ReadBwrapOutcome(const std::string& program, Result* r) {
  if (r->exited && r->exit_code == 1 &&
      r->stderr_data.rfind(kBwrapPrefix, 0) == 0) {
    std::string line = r->stderr_data.substr(0, r->stderr_data.find('\n'));
    std::string msg = "sandbox: cannot start '" + program + "' (" + line + ")";
    if (line.find(strerror(ENOENT)) != std::string::npos)
      return NotFound(msg + "; paths under /tmp must be in read_only_paths");
    return FailedPrecondition(msg);
  }
  if (r->exited && r->exit_code > 128 && r->exit_code <= 128 + 64) {
    r->signal = r->exit_code - 128;
    r->exited = false;
    r->exit_code = -1;
  }
  return Status::Ok();
}

}  // namespace trench::sandbox::internal
