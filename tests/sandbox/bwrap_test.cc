// The bubblewrap tier, forced through Options::isolation: the same
// guarantees as the built-in namespaces, and the tier choice itself.
#include "sandbox/bwrap.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sandbox/capabilities.h"
#include "sandbox/sandbox.h"
#include "tests/sandbox/hostile.h"

namespace trench::sandbox {
namespace {

using testing::HostileOptions;

class BwrapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Capabilities& caps = DetectCapabilities();
    if (!caps.bwrap) {
      GTEST_SKIP() << "bwrap tier unavailable on this machine (install "
                      "bubblewrap to run these tests): "
                   << caps.Describe();
    }
  }
  void TearDown() override {
    for (const auto& d : dirs_) testing::RemoveTree(d);
  }
  Options Bwrap(const std::vector<std::string>& args) {
    Options o = HostileOptions(args);
    o.isolation = Isolation::kBwrap;
    dirs_.push_back(o.work_dir);
    return o;
  }
  // Runs `o`, then checks that nothing of it is left: no process of its
  // uid (or no more of ours, without a uid switch), no child of ours.
  Result RunContained(const Options& o) {
    Result r = testing::RunLeavingNothing(o);
    EXPECT_EQ(r.isolation, Isolation::kBwrap);
    EXPECT_TRUE(r.namespaced);
    return r;
  }

  std::vector<std::string> dirs_;
};

TEST_F(BwrapTest, RunsAProgramInItsWritableWorkDir) {
  Options o = Bwrap({"hello", "extra"});
  Result r = RunContained(o);
  EXPECT_TRUE(r.ok()) << r.Summary() << r.stderr_data;
  const Capabilities& caps = DetectCapabilities();
  // Switched to (root), or mapped by bwrap's user namespace.
  uid_t uid = caps.can_set_uid || !caps.bwrap_setuid ? o.uid : getuid();
  std::string real_dir = std::filesystem::canonical(o.work_dir).string();
  EXPECT_EQ(r.stdout_data, "uid=" + std::to_string(uid) + " cwd=" + real_dir +
                               " foo=bar args=3\n");
  EXPECT_TRUE(std::filesystem::exists(o.work_dir + "/hello.txt"));
  EXPECT_NE(r.Summary().find("; bwrap"), std::string::npos) << r.Summary();
}

TEST_F(BwrapTest, RunsAsTheSandboxUidWhenWeAreRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: no uid switch to check";
  Options o = Bwrap({"hello"});
  Result r = RunContained(o);
  ASSERT_TRUE(r.ok()) << r.Summary() << r.stderr_data;
  EXPECT_EQ(r.stdout_data.rfind("uid=" + std::to_string(o.uid) + " ", 0), 0u)
      << r.stdout_data;
  // The file it wrote belongs to that uid on the host too, not to root.
  struct stat st;
  ASSERT_EQ(stat((o.work_dir + "/hello.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, o.uid);
  EXPECT_NE(st.st_uid, 0u);
}

TEST_F(BwrapTest, WritesOutsideTheWorkDirFail) {
  testing::OutsideWrites w = testing::MakeOutsideWrites("bwrap");
  dirs_.insert(dirs_.end(), w.dirs.begin(), w.dirs.end());
  std::vector<std::string> args = w.args;
  args.push_back("/tmp/private.txt");
  Options o = Bwrap(args);
  Result r = RunContained(o);
  ASSERT_TRUE(r.exited) << r.Summary() << r.stderr_data;
  EXPECT_EQ(r.stdout_data, w.expected + "/tmp/private.txt: ok\n");
  EXPECT_FALSE(std::filesystem::exists(w.outside + "/x"));
  EXPECT_FALSE(std::filesystem::exists(w.host_tmp + "/x"));  // Private /tmp.
  EXPECT_FALSE(std::filesystem::exists("/tmp/private.txt"));
  EXPECT_TRUE(std::filesystem::exists(o.work_dir + "/inside.txt"));
}

TEST_F(BwrapTest, NetworkNamespaceCannotReachTheHost) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), len), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len), 0);
  Options o = Bwrap({"net", std::to_string(ntohs(a.sin_port))});
  o.seccomp = SeccompMode::kOff;  // Only the namespace stands in the way.
  Result r = RunContained(o);
  ASSERT_TRUE(r.exited) << r.Summary() << r.stderr_data;
  EXPECT_EQ(r.exit_code, 0) << "reached the host: " << r.stdout_data;
  // bwrap brings loopback up in the new namespace: nothing listens there.
  EXPECT_EQ(r.stdout_data, "connect: ECONNREFUSED\n");
  EXPECT_LT(accept(listener, nullptr, nullptr), 0);
  EXPECT_EQ(errno, EAGAIN);
  close(listener);
}

TEST_F(BwrapTest, SeccompFilterIsInstalledInside) {
  if (!DetectCapabilities().seccomp) GTEST_SKIP() << "no seccomp";
  Result r = RunContained(Bwrap({"ptrace"}));
  ASSERT_TRUE(r.exited) << r.Summary() << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "ptrace: EPERM\n");
  Options o = Bwrap({});
  o.argv = {"/usr/bin/unshare", "--user", "--map-root-user", "id"};
  Result u = RunContained(o);
  EXPECT_TRUE(u.exited) << u.Summary();
  EXPECT_NE(u.exit_code, 0) << u.stdout_data;
  EXPECT_NE(u.stderr_data.find("Operation not permitted"), std::string::npos)
      << u.stderr_data;
}

TEST_F(BwrapTest, SeccompKillModeIsReportedAsSigsys) {
  if (!DetectCapabilities().seccomp) GTEST_SKIP() << "no seccomp";
  Options o = Bwrap({"ptrace"});
  o.seccomp = SeccompMode::kKill;
  Result r = RunContained(o);
  EXPECT_FALSE(r.exited) << r.Summary();
  EXPECT_EQ(r.signal, SIGSYS) << r.Summary();
  EXPECT_TRUE(r.limits_hit & kLimitSeccomp);
}

// bwrap's init is PID 1 of the namespace, the program PID 2.
TEST_F(BwrapTest, SeesOnlyItsOwnProcesses) {
  Options o = Bwrap({});
  o.argv = {"/bin/sh", "-c", "ls /proc | grep -c '^[0-9]'; echo $$"};
  Result r = RunContained(o);
  ASSERT_TRUE(r.ok()) << r.Summary() << r.stderr_data;
  int count = std::atoi(r.stdout_data.c_str());
  EXPECT_GE(count, 2) << r.stdout_data;
  EXPECT_LE(count, 4) << r.stdout_data;
  EXPECT_EQ(r.stdout_data.substr(r.stdout_data.find('\n') + 1), "2\n");
}

TEST_F(BwrapTest, TimeoutKillsTheWholeTree) {
  Options o = Bwrap({"escape", "wait"});
  o.limits.wall_seconds = 1;
  Result r = RunContained(o);
  EXPECT_TRUE(r.timed_out) << r.Summary();
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.stdout_data, "escaped\n");
  EXPECT_TRUE(r.limits_hit & kLimitWallTime);
}

TEST_F(BwrapTest, ForkBombIsStoppedByTheWallClock) {
  Options o = Bwrap({"forkbomb"});
  o.limits.wall_seconds = 1;
  o.limits.processes = 32;
  Result r = RunContained(o);
  EXPECT_TRUE(r.timed_out) << r.Summary();
  EXPECT_FALSE(r.exited);
}

TEST_F(BwrapTest, SetsidEscapeeDiesWhenTheProgramExits) {
  Result r = RunContained(Bwrap({"escape", "exit"}));
  ASSERT_TRUE(r.exited) << r.Summary() << r.stderr_data;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data, "escaped\n");
}

// bwrap reports death by signal N as exit 128+N; the run reads as killed.
TEST_F(BwrapTest, CpuLimitIsReportedAsTheSignal) {
  Options o = Bwrap({"spin"});
  o.limits.cpu_seconds = 1;
  Result r = RunContained(o);
  EXPECT_FALSE(r.exited) << r.Summary();
  EXPECT_EQ(r.signal, SIGXCPU) << r.Summary();
  EXPECT_TRUE(r.limits_hit & kLimitCpu);
}

TEST_F(BwrapTest, MemoryHogRunsOutOfAddressSpace) {
  Options o = Bwrap({"memhog"});
  o.limits.address_space_bytes = 128ull << 20;
  Result r = RunContained(o);
  ASSERT_TRUE(r.exited) << r.Summary() << r.stderr_data;
  EXPECT_EQ(r.exit_code, 42);
  EXPECT_TRUE(r.limits_hit & kLimitMemory) << r.Summary();
}

TEST_F(BwrapTest, ExitCodeAndOutputArePassedThrough) {
  Result r = RunContained(Bwrap({"exit", "3"}));
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 3);
  Options o = Bwrap({"flood", "100000"});
  o.limits.stderr_bytes = 1000;
  Result f = RunContained(o);
  ASSERT_TRUE(f.exited) << f.Summary();
  EXPECT_EQ(f.stdout_data, std::string(100000, 'o'));
  EXPECT_EQ(f.stderr_truncated, 100000u - 1000);
}

TEST_F(BwrapTest, SetUpFailuresNameTheProgram) {
  Options o = Bwrap({});
  const std::string file = testing::UseNonExecutableProgram(o);
  StatusOr<Result> r = sandbox::Run(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find(file), std::string::npos);
  EXPECT_NE(r.status().message().find("bwrap: "), std::string::npos)
      << r.status().ToString();
  Options hidden = Bwrap({"exit", "0"});
  hidden.read_only_paths.clear();  // The program lives under /tmp.
  r = sandbox::Run(hidden);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << r.status().ToString();
  EXPECT_NE(r.status().message().find("read_only_paths"), std::string::npos);
}

// The tier choice, on made-up machines (no probing).
TEST(IsolationTest, AutoPrefersBuiltinThenBwrapThenNone) {
  Capabilities c;
  c.namespace_error = "clone: EPERM";
  c.bwrap_path = "/usr/bin/bwrap";
  c.bwrap_error = "bwrap: No permissions";
  EXPECT_EQ(c.tier(), Isolation::kNone);
  EXPECT_EQ(*c.Resolve(Isolation::kAuto), Isolation::kNone);
  EXPECT_EQ(c.Resolve(Isolation::kBwrap).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_NE(
      c.Resolve(Isolation::kBwrap).status().message().find("No permissions"),
      std::string::npos);
  EXPECT_EQ(c.Resolve(Isolation::kBuiltin).status().code(),
            StatusCode::kFailedPrecondition);
  std::string d = c.Describe();
  EXPECT_EQ(d.rfind("sandbox: runs use NO isolation (fallback; lost: ", 0), 0u)
      << d;
  EXPECT_NE(d.find("bwrap at /usr/bin/bwrap fails"), std::string::npos) << d;
  c.bwrap = true;
  c.bwrap_error.clear();
  EXPECT_EQ(c.tier(), Isolation::kBwrap);
  EXPECT_EQ(*c.Resolve(Isolation::kNone), Isolation::kNone);
  d = c.Describe();
  EXPECT_EQ(d.rfind("sandbox: runs use bwrap at /usr/bin/bwrap works", 0), 0u)
      << d;
  EXPECT_NE(d.find("builtin namespaces NO (clone: EPERM)"), std::string::npos)
      << d;
  c.namespaces = true;
  c.namespace_error.clear();
  EXPECT_EQ(c.tier(), Isolation::kBuiltin);
  EXPECT_EQ(*c.Resolve(Isolation::kBwrap), Isolation::kBwrap);
  d = c.Describe();
  EXPECT_EQ(d.rfind("sandbox: runs use builtin namespaces yes", 0), 0u) << d;
  EXPECT_NE(d.find("works (unused)"), std::string::npos) << d;
}

// A forced tier the machine lacks fails the spawn; kAuto falls back.
TEST(IsolationTest, ForcingAMissingTierFailsTheSpawn) {
  Capabilities caps = DetectCapabilities();
  caps.bwrap = false;
  caps.bwrap_error = "pretend it failed";
  Options o = HostileOptions({"exit", "4"});
  o.isolation = Isolation::kBwrap;
  StatusOr<Result> r = internal::RunWith(o, caps);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("pretend it failed"), std::string::npos)
      << r.status().ToString();
  caps.namespaces = false;
  caps.namespace_error = "pretend";
  o.isolation = Isolation::kAuto;
  r = internal::RunWith(o, caps);
  testing::RemoveTree(o.work_dir);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->isolation, Isolation::kNone) << r->Summary();
  EXPECT_EQ(r->exit_code, 4);
}

}  // namespace
}  // namespace trench::sandbox
