#include "orchestrator/daemon/service_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace trench::orchestrator {

Status NotifyService(std::string_view state) {
  const char* name = std::getenv("NOTIFY_SOCKET");
  if (name == nullptr || *name == '\0') return Status::Ok();
  return NotifyServiceAt(name, state);
}

Status NotifyServiceAt(std::string_view socket_name, std::string_view state) {
  const std::string what = "NOTIFY_SOCKET " + std::string(socket_name);
  if (socket_name.empty() || (socket_name[0] != '/' && socket_name[0] != '@')) {
    return InvalidArgument(what +
                           ": expected an absolute path or an @abstract name");
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_name.size() >= sizeof(addr.sun_path)) {
    return InvalidArgument(what + ": longer than a socket address allows");
  }
  std::memcpy(addr.sun_path, socket_name.data(), socket_name.size());
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) +
                                         socket_name.size());
  if (addr.sun_path[0] == '@') {
    addr.sun_path[0] = '\0';  // Abstract: no terminating NUL counted.
  } else {
    len += 1;
  }
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError(what + ": socket: " + std::strerror(errno));
  ssize_t sent;
  do {
    sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                    reinterpret_cast<const sockaddr*>(&addr), len);
  } while (sent < 0 && errno == EINTR);
  const int err = errno;
  ::close(fd);
  if (sent < 0) return IoError(what + ": " + std::strerror(err));
  if (static_cast<size_t>(sent) != state.size()) {
    return IoError(what + ": the message was cut short");
  }
  return Status::Ok();
}

}  // namespace trench::orchestrator
