// Normal runs, spawn errors, the async path, and result interpretation.
#include "sandbox/sandbox.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <fstream>

#include "sandbox/capabilities.h"
#include "tests/sandbox/hostile.h"

namespace trench::sandbox {
namespace {

using testing::HostileOptions;

class SandboxTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const auto& d : dirs_) testing::RemoveTree(d);
  }
  Options Track(Options o) {
    dirs_.push_back(o.work_dir);
    return o;
  }
  std::vector<std::string> dirs_;
};

TEST_F(SandboxTest, CapabilitiesAreDescribed) {
  const Capabilities& caps = DetectCapabilities();
  std::string d = caps.Describe();
  EXPECT_EQ(d.rfind(std::string("sandbox: runs use ") +
                        (caps.tier() == Isolation::kNone ? "NO isolation"
                         : caps.tier() == Isolation::kBwrap
                             ? "bwrap at " + caps.bwrap_path
                             : "builtin namespaces yes"),
                    0),
            0u)
      << d;
  EXPECT_EQ(caps.namespaces, caps.namespace_error.empty()) << d;
  EXPECT_EQ(caps.bwrap, !caps.bwrap_path.empty() && caps.bwrap_error.empty())
      << d;
  ::testing::Test::RecordProperty("capabilities", d);
  std::printf("%s\n", d.c_str());
}

TEST_F(SandboxTest, RunsAProgramInItsWorkDirAsAnotherUser) {
  Options o = Track(HostileOptions({"hello", "extra"}));
  StatusOr<Result> r = sandbox::Run(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->ok()) << r->Summary();
  const Capabilities& caps = DetectCapabilities();
  // Switched to (root), or mapped to inside a user namespace, or unchanged.
  bool mapped = caps.tier() == Isolation::kBuiltin
                    ? caps.user_namespace
                    : caps.tier() == Isolation::kBwrap && !caps.bwrap_setuid;
  uid_t uid = caps.can_set_uid || mapped ? o.uid : getuid();
  std::string real_dir = std::filesystem::canonical(o.work_dir).string();
  EXPECT_EQ(r->stdout_data, "uid=" + std::to_string(uid) + " cwd=" + real_dir +
                                " foo=bar args=3\n");
  EXPECT_EQ(r->isolation, caps.tier());
  EXPECT_EQ(r->namespaced, caps.tier() != Isolation::kNone);
  EXPECT_TRUE(std::filesystem::exists(o.work_dir + "/hello.txt"));
  EXPECT_EQ(r->limits_hit, 0u);
  EXPECT_EQ(r->Summary().rfind("exited 0 in ", 0), 0u) << r->Summary();
}

// Ordinary tooling still works under the read-only root and the filter:
// a shell pipeline (fork, pipes, /dev/null) and a private, writable /tmp.
TEST_F(SandboxTest, ShellPipelineWorks) {
  Options o = Track(HostileOptions({}));
  o.argv = {"/bin/sh", "-c",
            "echo a | cat > /dev/null && echo t > /tmp/f && cat /tmp/f && "
            "ls / | grep -c . > count.txt && echo done >&2"};
  StatusOr<Result> r = sandbox::Run(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->ok()) << r->Summary() << r->stderr_data;
  EXPECT_EQ(r->stdout_data, "t\n");
  EXPECT_EQ(r->stderr_data, "done\n");
  EXPECT_TRUE(std::filesystem::exists(o.work_dir + "/count.txt"));
}

// PID namespace: the run sees its own processes only (init, sh, ls, grep).
TEST_F(SandboxTest, SeesOnlyItsOwnProcesses) {
  if (!DetectCapabilities().namespaces) GTEST_SKIP() << "no namespaces";
  Options o = Track(HostileOptions({}));
  o.isolation = Isolation::kBuiltin;
  o.argv = {"/bin/sh", "-c", "ls /proc | grep -c '^[0-9]'; echo $$"};
  StatusOr<Result> r = sandbox::Run(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->ok()) << r->Summary() << r->stderr_data;
  int count = std::atoi(r->stdout_data.c_str());
  EXPECT_GE(count, 2) << r->stdout_data;
  EXPECT_LE(count, 4) << r->stdout_data;
  EXPECT_EQ(r->stdout_data.substr(r->stdout_data.find('\n') + 1), "2\n");
}

// The filter refuses new namespaces (clone/unshare flags), so a run cannot
// build itself a user namespace with root in it.
TEST_F(SandboxTest, NewNamespacesAreDenied) {
  if (!DetectCapabilities().seccomp) GTEST_SKIP() << "no seccomp";
  Options o = Track(HostileOptions({}));
  o.argv = {"/usr/bin/unshare", "--user", "--map-root-user", "id"};
  StatusOr<Result> r = sandbox::Run(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->exited) << r->Summary();
  EXPECT_NE(r->exit_code, 0) << r->stdout_data;
  EXPECT_NE(r->stderr_data.find("Operation not permitted"), std::string::npos)
      << r->stderr_data;
}

TEST_F(SandboxTest, ExitCodeIsReported) {
  StatusOr<Result> r = sandbox::Run(Track(HostileOptions({"exit", "3"})));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->exited);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->ok());
}

TEST_F(SandboxTest, MissingProgramNamesTheBinary) {
  Options o = Track(HostileOptions({}));
  o.argv = {"/nonexistent/trench-prog"};
  StatusOr<Result> r = sandbox::Run(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/trench-prog"),
            std::string::npos);
  o.argv = {"trench-no-such-program-in-path"};
  r = sandbox::Run(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not found in PATH"), std::string::npos);
}

TEST_F(SandboxTest, NonExecutableProgramReportsErrno) {
  Options o = Track(HostileOptions({}));
  const std::string file = testing::UseNonExecutableProgram(o);
  StatusOr<Result> r = sandbox::Run(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(file), std::string::npos);
  EXPECT_NE(r.status().message().find("execve"), std::string::npos);
  EXPECT_NE(r.status().message().find("errno 13"), std::string::npos)
      << r.status().ToString();
}

TEST_F(SandboxTest, BadWorkDirIsInvalid) {
  Options o = Track(HostileOptions({"exit", "0"}));
  o.work_dir = "/nonexistent/work";
  StatusOr<Result> r = sandbox::Run(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  o.argv.clear();
  EXPECT_EQ(sandbox::Run(o).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SandboxTest, ProgramUnderHiddenTmpNeedsReadOnlyPaths) {
  if (!DetectCapabilities().namespaces) GTEST_SKIP() << "no namespaces";
  Options o = Track(HostileOptions({"exit", "0"}));
  o.isolation = Isolation::kBuiltin;
  o.read_only_paths.clear();
  StatusOr<Result> r = sandbox::Run(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("read_only_paths"), std::string::npos);
}

TEST_F(SandboxTest, ConcurrentRunsOnOneIoContext) {
  boost::asio::io_context ioc;
  constexpr int kRuns = 5;
  int calls[kRuns] = {};
  StatusOr<Result> results[kRuns] = {Internal("-"), Internal("-"),
                                     Internal("-"), Internal("-"),
                                     Internal("-")};
  std::vector<std::shared_ptr<Process>> procs;
  for (int i = 0; i < kRuns; ++i) {
    Options o = Track(HostileOptions({"exit", std::to_string(10 + i)}));
    if (i == 3) o.argv = {o.argv[0], "flood", "300000"};
    if (i == 4) o.argv = {o.argv[0], "sleep"};  // Killed below.
    o.uid = o.gid = o.uid + i;
    auto p = Spawn(ioc, o, [&, i](StatusOr<Result> r) {
      ++calls[i];
      results[i] = std::move(r);
    });
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    procs.push_back(*p);
  }
  // Kill the sleeper once the others are done: nothing but the loop waits.
  while (calls[0] + calls[1] + calls[2] + calls[3] < 4) ioc.run_one();
  EXPECT_EQ(calls[4], 0);
  procs[4]->Kill();
  ioc.run();
  for (int i = 0; i < kRuns; ++i) {
    EXPECT_EQ(calls[i], 1) << i;
    ASSERT_TRUE(results[i].ok()) << results[i].status().ToString();
  }
  for (int i = 0; i < 3; ++i) EXPECT_EQ(results[i]->exit_code, 10 + i);
  EXPECT_EQ(results[3]->stdout_data.size(), 300000u);
  EXPECT_EQ(results[3]->stderr_data.size(), 300000u);
  EXPECT_EQ(results[4]->signal, SIGKILL);
  EXPECT_FALSE(results[4]->timed_out);
  EXPECT_EQ(testing::ChildrenOfSelf(), 0);
}

// One io_context reused for run after run (the daemon's loop): each run
// ends only when its process does, with all of its output. The reactor
// once woke the pidfd wait of every other run at once, which lost the
// output and the wall time.
TEST_F(SandboxTest, SequentialRunsOnOneReusedIoContext) {
  boost::asio::io_context ioc;
  for (int i = 0; i < 12; ++i) {
    Options o = Track(HostileOptions({}));
    o.argv = {"/bin/sh", "-c", "sleep 0.02; echo run" + std::to_string(i)};
    StatusOr<Result> result = Internal("not done");
    auto p = Spawn(ioc, o, [&](StatusOr<Result> r) { result = std::move(r); });
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    ioc.restart();
    ioc.run();
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->stdout_data, "run" + std::to_string(i) + "\n") << i;
    EXPECT_GE(result->wall_seconds, 0.02) << i;
  }
}

TEST(ClassifyLimitsTest, SignalsAndUsageMapToLimits) {
  Limits l;
  l.cpu_seconds = 2;
  l.address_space_bytes = 100;
  Result r;
  r.signal = SIGXCPU;
  EXPECT_EQ(ClassifyLimits(r, l), unsigned{kLimitCpu});
  r.signal = SIGKILL;
  r.cpu_seconds = 2.5;  // The hard CPU limit.
  EXPECT_EQ(ClassifyLimits(r, l), unsigned{kLimitCpu});
  r.cpu_seconds = 0.1;
  r.timed_out = true;
  EXPECT_EQ(ClassifyLimits(r, l), unsigned{kLimitWallTime});
  Result hog;
  hog.exited = true;
  hog.exit_code = 1;
  hog.max_rss_bytes = 60;
  EXPECT_EQ(ClassifyLimits(hog, l), unsigned{kLimitMemory});
  hog.exit_code = 0;
  EXPECT_EQ(ClassifyLimits(hog, l), 0u);
  Result big;
  big.signal = SIGXFSZ;
  big.stderr_truncated = 1;
  EXPECT_EQ(ClassifyLimits(big, l), unsigned{kLimitFileSize | kLimitOutput});
  EXPECT_EQ(SignalName(SIGXFSZ), "SIGXFSZ");
}

}  // namespace
}  // namespace trench::sandbox
