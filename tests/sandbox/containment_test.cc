// Hostile programs: each is contained, reported, and leaves nothing behind.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "sandbox/capabilities.h"
#include "sandbox/sandbox.h"
#include "tests/sandbox/hostile.h"

namespace trench::sandbox {
namespace {

using testing::HostileOptions;

class ContainmentTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const auto& d : dirs_) testing::RemoveTree(d);
  }
  // Runs `o` and checks the aftermath: no process of the run's uid, no
  // child of ours (zombie or not) left, and a normal run still works.
  Result RunContained(const Options& o) {
    dirs_.push_back(o.work_dir);
    Result r = testing::RunLeavingNothing(o);
    Options normal = HostileOptions({"exit", "7"});
    dirs_.push_back(normal.work_dir);
    StatusOr<Result> after = sandbox::Run(normal);
    EXPECT_TRUE(after.ok() && after->exited && after->exit_code == 7)
        << (after.ok() ? after->Summary() : after.status().ToString());
    return r;
  }
  static bool Namespaces() { return DetectCapabilities().namespaces; }

  std::vector<std::string> dirs_;
};

TEST_F(ContainmentTest, ForkBombIsStoppedByTheWallClock) {
  Options o = HostileOptions({"forkbomb"});
  o.limits.wall_seconds = 1;
  o.limits.processes = 32;
  Result r = RunContained(o);
  EXPECT_TRUE(r.timed_out) << r.Summary();
  EXPECT_FALSE(r.exited);
  EXPECT_TRUE(r.limits_hit & kLimitWallTime);
}

TEST_F(ContainmentTest, MemoryHogRunsOutOfAddressSpace) {
  Options o = HostileOptions({"memhog"});
  o.limits.address_space_bytes = 128ull << 20;
  Result r = RunContained(o);
  ASSERT_TRUE(r.exited) << r.Summary();
  EXPECT_EQ(r.exit_code, 42);
  EXPECT_NE(r.stdout_data.find("malloc failed after"), std::string::npos);
  EXPECT_LT(r.max_rss_bytes, 128ull << 20);
  EXPECT_TRUE(r.limits_hit & kLimitMemory) << r.Summary();
}

TEST_F(ContainmentTest, InfiniteLoopHitsTheCpuLimit) {
  Options o = HostileOptions({"spin"});
  o.limits.cpu_seconds = 1;
  Result r = RunContained(o);
  EXPECT_FALSE(r.exited);
  EXPECT_EQ(r.signal, SIGXCPU) << r.Summary();
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(r.limits_hit & kLimitCpu);
  EXPECT_NE(r.Summary().find("killed by SIGXCPU"), std::string::npos);
}

TEST_F(ContainmentTest, InfiniteLoopHitsTheWallClock) {
  Options o = HostileOptions({"spin"});
  o.limits.wall_seconds = 1;
  Result r = RunContained(o);
  EXPECT_TRUE(r.timed_out) << r.Summary();
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_NE(r.Summary().find("wall timeout"), std::string::npos);
}

// A listening socket of ours on loopback: the sandbox must not reach it.
class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
        listen(fd_, 4) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      ADD_FAILURE() << "cannot listen on loopback";
    port_ = ntohs(a.sin_port);
  }
  ~Listener() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1, port_ = 0;
};

TEST_F(ContainmentTest, NetworkSocketIsDeniedBySeccomp) {
  Listener l;
  Result r = RunContained(HostileOptions({"net", std::to_string(l.port())}));
  ASSERT_TRUE(r.exited) << r.Summary();
  EXPECT_EQ(r.exit_code, 0) << "reached the host: " << r.stdout_data;
  if (DetectCapabilities().seccomp) {
    EXPECT_EQ(r.stdout_data, "socket: EPERM\n");
  }
}

TEST_F(ContainmentTest, NetworkNamespaceHasNoRoute) {
  if (!Namespaces()) GTEST_SKIP() << DetectCapabilities().Describe();
  Listener l;
  Options o = HostileOptions({"net", std::to_string(l.port())});
  o.isolation = Isolation::kBuiltin;  // bwrap brings loopback up.
  o.seccomp = SeccompMode::kOff;
  Result r = RunContained(o);
  ASSERT_TRUE(r.exited) << r.Summary();
  EXPECT_EQ(r.exit_code, 0) << "reached the host: " << r.stdout_data;
  EXPECT_EQ(r.stdout_data, "connect: ENETUNREACH\n");
}

TEST_F(ContainmentTest, WritesOutsideTheWorkDirFail) {
  if (!Namespaces()) GTEST_SKIP() << DetectCapabilities().Describe();
  testing::OutsideWrites w = testing::MakeOutsideWrites("builtin");
  dirs_.insert(dirs_.end(), w.dirs.begin(), w.dirs.end());
  Options o = HostileOptions(w.args);
  o.isolation = Isolation::kBuiltin;  // bwrap_test.cc has its own.
  Result r = RunContained(o);
  ASSERT_TRUE(r.exited) << r.Summary();
  EXPECT_EQ(r.stdout_data, w.expected);
  EXPECT_FALSE(std::filesystem::exists(w.outside + "/x"));
  EXPECT_FALSE(std::filesystem::exists(w.host_tmp + "/x"));  // Private /tmp.
  EXPECT_TRUE(std::filesystem::exists(o.work_dir + "/inside.txt"));
}

TEST_F(ContainmentTest, SetsidEscapeeDiesWhenTheProgramExits) {
  Result r = RunContained(HostileOptions({"escape", "exit"}));
  ASSERT_TRUE(r.exited) << r.Summary();
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data, "escaped\n");
}

TEST_F(ContainmentTest, SetsidEscapeeDiesOnTimeout) {
  Options o = HostileOptions({"escape", "wait"});
  o.limits.wall_seconds = 1;
  Result r = RunContained(o);
  EXPECT_TRUE(r.timed_out) << r.Summary();
  EXPECT_EQ(r.stdout_data, "escaped\n");
}

// The fallback (no namespaces): the subreaper init must catch escapees too.
TEST_F(ContainmentTest, SetsidEscapeeDiesWithoutNamespaces) {
  Options o = HostileOptions({"escape", "exit"});
  o.use_namespaces = false;
  Result r = RunContained(o);
  ASSERT_TRUE(r.exited) << r.Summary();
  EXPECT_FALSE(r.namespaced);
  EXPECT_EQ(r.stdout_data, "escaped\n");
}

TEST_F(ContainmentTest, SetsidEscapeeDiesOnTimeoutWithoutNamespaces) {
  Options o = HostileOptions({"escape", "wait"});
  o.use_namespaces = false;
  o.limits.wall_seconds = 1;
  Result r = RunContained(o);
  EXPECT_TRUE(r.timed_out) << r.Summary();
  EXPECT_EQ(r.signal, SIGKILL);
}

TEST_F(ContainmentTest, ForkBombWithoutNamespacesIsKilled) {
  Options o = HostileOptions({"forkbomb"});
  o.use_namespaces = false;
  o.limits.wall_seconds = 1;
  o.limits.processes = 32;
  Result r = RunContained(o);
  EXPECT_TRUE(r.timed_out) << r.Summary();
}

TEST_F(ContainmentTest, OutputFloodIsCappedAndCounted) {
  const uint64_t kEach = 20 << 20;
  Options o = HostileOptions({"flood", std::to_string(kEach)});
  o.limits.stdout_bytes = 64 << 10;
  o.limits.stderr_bytes = 1000;
  Result r = RunContained(o);
  ASSERT_TRUE(r.exited) << r.Summary();
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data, std::string(64 << 10, 'o'));
  EXPECT_EQ(r.stderr_data, std::string(1000, 'e'));
  EXPECT_EQ(r.stdout_truncated, kEach - (64 << 10));
  EXPECT_EQ(r.stderr_truncated, kEach - 1000);
  EXPECT_TRUE(r.limits_hit & kLimitOutput);
  EXPECT_NE(r.Summary().find("stdout truncated by"), std::string::npos);
}

TEST_F(ContainmentTest, BigFileHitsTheFileSizeLimit) {
  Options o = HostileOptions({"bigfile"});
  o.limits.file_size_bytes = 4 << 20;
  Result r = RunContained(o);
  EXPECT_EQ(r.signal, SIGXFSZ) << r.Summary();
  EXPECT_TRUE(r.limits_hit & kLimitFileSize);
  EXPECT_EQ(std::filesystem::file_size(o.work_dir + "/big.bin"), 4u << 20);
}

TEST_F(ContainmentTest, PtraceIsDenied) {
  Result r = RunContained(HostileOptions({"ptrace"}));
  ASSERT_TRUE(r.exited) << r.Summary();
  if (DetectCapabilities().seccomp) {
    EXPECT_EQ(r.stdout_data, "ptrace: EPERM\n");
  }
}

TEST_F(ContainmentTest, SeccompKillModeKillsTheProcess) {
  if (!DetectCapabilities().seccomp) GTEST_SKIP() << "no seccomp";
  Options o = HostileOptions({"ptrace"});
  o.seccomp = SeccompMode::kKill;
  Result r = RunContained(o);
  EXPECT_EQ(r.signal, SIGSYS) << r.Summary();
  EXPECT_TRUE(r.limits_hit & kLimitSeccomp);
}

}  // namespace
}  // namespace trench::sandbox
