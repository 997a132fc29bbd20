// systemd readiness (issue 19, "The unit"): the notification itself over a
// real Unix datagram socket, and `trench serve` run as a child process
// telling READY=1 once its API answers and STOPPING=1 on SIGTERM.
#include "orchestrator/daemon/service_notify.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "agents/http_client.h"
#include "git/git_repo.h"
#include "tests/orchestrator/daemon/daemon_test_util.h"

namespace trench::orchestrator::testing {
namespace {

// A datagram socket bound to `name` (a path, or "@abstract").
class NotifyReceiver {
 public:
  explicit NotifyReceiver(const std::string& name) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, name.data(), name.size());
    socklen_t len = offsetof(sockaddr_un, sun_path) + name.size();
    if (name[0] == '@') {
      addr.sun_path[0] = '\0';
    } else {
      ++len;
    }
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0;
  }
  ~NotifyReceiver() { ::close(fd_); }
  bool bound() const { return bound_; }

  // The next datagram, or "" when none came within `ms`.
  std::string Receive(int ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, ms) != 1) return "";
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, n) : "";
  }

 private:
  int fd_ = -1;
  bool bound_ = false;
};

std::string TempDir() {
  std::string t = ::testing::TempDir() + "trench-notify-XXXXXX";
  EXPECT_NE(::mkdtemp(t.data()), nullptr);
  ::chmod(t.c_str(), 0755);
  return t;
}

TEST(ServiceNotify, SendsTheStateToAPathSocket) {
  const std::string dir = TempDir();
  NotifyReceiver r(dir + "/notify");
  ASSERT_TRUE(r.bound());
  Status s = NotifyServiceAt(dir + "/notify", "READY=1\nSTATUS=up");
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.Receive(5000), "READY=1\nSTATUS=up");
  fs::remove_all(dir);
}

TEST(ServiceNotify, SendsToAnAbstractSocket) {
  const std::string name = "@trench-notify-test-" + std::to_string(::getpid());
  NotifyReceiver r(name);
  ASSERT_TRUE(r.bound());
  ASSERT_TRUE(NotifyServiceAt(name, "STOPPING=1").ok());
  EXPECT_EQ(r.Receive(5000), "STOPPING=1");
}

TEST(ServiceNotify, IsSilentWithoutNotifySocket) {
  ::unsetenv("NOTIFY_SOCKET");
  EXPECT_TRUE(NotifyService("READY=1").ok());
}

TEST(ServiceNotify, NamesABadSocket) {
  Status relative = NotifyServiceAt("run/notify", "READY=1");
  EXPECT_EQ(relative.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(relative.message().find("run/notify"), std::string::npos);
  Status missing = NotifyServiceAt("/nonexistent/trench/notify", "READY=1");
  EXPECT_EQ(missing.code(), StatusCode::kIoError);
  EXPECT_NE(missing.message().find("/nonexistent/trench/notify"),
            std::string::npos);
  EXPECT_EQ(NotifyServiceAt("/" + std::string(200, 'x'), "READY=1").code(),
            StatusCode::kInvalidArgument);
}

// `trench serve` under a fake systemd: READY=1 arrives, and by then the
// API answers; SIGTERM brings STOPPING=1 and a clean exit.
TEST(ServiceNotify, TheDaemonTellsReadyAndStopping) {
  const std::string dir = TempDir();
  StatusOr<std::unique_ptr<hlo_bisect::GitRepo>> repo =
      hlo_bisect::GitRepo::Init(dir + "/repo");
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  ASSERT_TRUE((*repo)
                  ->CommitFiles("", {{"README", std::string("target\n")}},
                                "first", "refs/heads/main")
                  .ok());
  Json c = Json::MakeObject();
  c["var_dir"] = dir + "/var";
  c["repo"] = dir + "/repo";
  c["tools_dir"] = TRENCH_BINARY_DIR;
  c["build_command"] = "exit 3";  // Builds fail; the service still serves.
  c["poll_seconds"] = 1;
  c["drain_seconds"] = 5;
  Json http = Json::MakeObject();
  http["port"] = 0;
  c["http"] = http;
  Json fuzz = Json::MakeObject();
  fuzz["continuous"] = false;
  c["fuzz"] = fuzz;
  const std::string config = dir + "/trench.json";
  std::ofstream(config) << c.DumpPretty();

  NotifyReceiver systemd(dir + "/notify");
  ASSERT_TRUE(systemd.bound());
  DaemonProcess daemon(config, dir + "/log");
  daemon.Start({"NOTIFY_SOCKET=" + dir + "/notify"});
  // A bound, not a speed: the daemon's start-up is a few hundred ms.
  const std::string ready = systemd.Receive(120000);
  ASSERT_EQ(ready.rfind("READY=1\nSTATUS=serving the API on 127.0.0.1:", 0), 0u)
      << ready << "\n"
      << ReadAll(dir + "/log");
  StatusOr<Json> info = ParseJson(ReadAll(dir + "/var/daemon.json"));
  ASSERT_TRUE(info.ok()) << ReadAll(dir + "/log");
  EXPECT_NE(ready.find(":" + std::to_string((*info)["port"].int64_value())),
            std::string::npos);
  agents::HttpRequest health;
  health.url =
      "http://127.0.0.1:" + std::to_string((*info)["port"].int64_value()) +
      "/healthz";
  StatusOr<agents::HttpResponse> answer = agents::HttpFetch(health);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->status, 200);

  const int status = daemon.Kill(SIGTERM);
  EXPECT_EQ(systemd.Receive(60000).rfind("STOPPING=1", 0), 0u)
      << ReadAll(dir + "/log");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << status << "\n"
      << ReadAll(dir + "/log");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trench::orchestrator::testing
