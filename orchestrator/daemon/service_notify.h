// systemd's readiness protocol (sd_notify(3)), by hand: a unit of
// Type=notify passes the daemon $NOTIFY_SOCKET, a Unix datagram socket,
// and waits for "READY=1" before it calls the service started (and
// before units ordered After= it start). The daemon sends
//   READY=1     once the API listens and the workers run (Daemon::Run),
//   STATUS=...  a line `systemctl status trench` shows,
//   STOPPING=1  when a drain begins (SIGTERM).
// Without $NOTIFY_SOCKET (not under systemd, or Type=exec) nothing is sent.
// libsystemd is not linked for this: the protocol is one sendmsg.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace trench::orchestrator {

// Sends `state` (newline-separated VAR=value assignments, e.g.
// "READY=1\nSTATUS=serving on 127.0.0.1:7878") to the socket named by
// $NOTIFY_SOCKET: a filesystem path, or an abstract name when it starts
// with '@'. Returns Ok without sending when the variable is unset or
// empty. Errors: kInvalidArgument for a socket name that is neither an
// absolute path nor '@'-abstract, or too long for sockaddr_un;
// kIoError when the datagram cannot be sent ("NOTIFY_SOCKET /run/x:
// Connection refused"). The daemon logs these and goes on: a missing
// notification makes systemd time the start out, which it reports.
Status NotifyService(std::string_view state);

// The same, to the socket `socket_name` (as $NOTIFY_SOCKET would give it).
Status NotifyServiceAt(std::string_view socket_name, std::string_view state);

}  // namespace trench::orchestrator
