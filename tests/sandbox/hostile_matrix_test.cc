// Issue 18's attacks on the sandbox, per tier this machine has (builtin,
// bwrap, none): process and memory bombs against the run's cgroups, disk
// and inode bombs against a limited work dir, a connect() to a host unix
// socket, and a look at the daemon's state directory. Each test prints a
// "hostile-matrix | attack | tier | contained" line (bench/RESULTS.md).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "sandbox/capabilities.h"
#include "sandbox/cgroup.h"
#include "sandbox/limited_dir.h"
#include "sandbox/sandbox.h"
#include "tests/sandbox/hostile.h"

namespace trench::sandbox {
namespace {

namespace fs = std::filesystem;
using testing::HostileOptions;

// `seen`: what the run showed, for the matrix's last column.
void Matrix(const char* attack, Isolation tier, bool contained,
            const std::string& seen) {
  std::printf("hostile-matrix | %s | %s | %s | %s |\n", attack,
              IsolationName(tier), contained ? "yes" : "no", seen.c_str());
}

std::string FirstLine(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

class HostileMatrixTest : public ::testing::TestWithParam<Isolation> {
 protected:
  void SetUp() override {
    const Capabilities& caps = DetectCapabilities();
    if (GetParam() == Isolation::kBuiltin && !caps.namespaces)
      GTEST_SKIP() << "no builtin tier here: " << caps.Describe();
    if (GetParam() == Isolation::kBwrap && !caps.bwrap)
      GTEST_SKIP() << "no bwrap tier here: " << caps.Describe();
  }
  void TearDown() override {
    for (const auto& d : dirs_) testing::RemoveTree(d);
  }
  Options Hostile(const std::vector<std::string>& args) {
    Options o = HostileOptions(args);
    o.isolation = GetParam();
    dirs_.push_back(o.work_dir);
    return o;
  }
  static bool Cgroups() { return DetectCgroups().mode != CgroupMode::kNone; }

  std::vector<std::string> dirs_;
};

// A run forking without end next to a normal one: pids.max stops it even
// with RLIMIT_NPROC off, and a run of another uid still forks and execs.
TEST_P(HostileMatrixTest, ProcessHolderIsBoundedAndANeighbourStillForks) {
  if (!Cgroups()) GTEST_SKIP() << DetectCgroups().Describe();
  Options holder = Hostile({"procs", "1000"});
  holder.limits.processes = 0;  // Only the cgroup bounds it.
  holder.limits.total_processes = 200;
  holder.limits.wall_seconds = 60;
  boost::asio::io_context ioc;
  std::promise<StatusOr<Result>> done;
  StatusOr<std::shared_ptr<Process>> p =
      Spawn(ioc, holder,
            [&done](StatusOr<Result> r) { done.set_value(std::move(r)); });
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::thread loop([&ioc] { ioc.run(); });
  const std::string held = holder.work_dir + "/held";
  for (int i = 0; i < 3000 && !fs::exists(held); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  long count = -1;
  std::ifstream(held) >> count;

  Options normal = Hostile({"forkwork", "50"});
  normal.limits.processes = 256;
  normal.limits.total_processes = 256;
  StatusOr<Result> n = sandbox::Run(normal);
  boost::asio::post(ioc, [&p] { (*p)->Kill(); });
  StatusOr<Result> h = done.get_future().get();
  loop.join();
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  std::printf("holder: %s\nnormal: %s\n", h->Summary().c_str(),
              n->Summary().c_str());
  const bool contained =
      count > 0 && count < 200 && n->ok() && n->stdout_data == "ok 50\n";
  Matrix("1000-process holder next to a small build", GetParam(), contained,
         "holder forked " + std::to_string(count) +
             " (pids.max 200); neighbour: " + FirstLine(n->stdout_data));
  EXPECT_GT(count, 0) << h->stdout_data;
  EXPECT_LT(count, 200) << "pids.max did not hold";
  EXPECT_TRUE(n->ok()) << n->Summary() << " " << n->stdout_data;
  EXPECT_EQ(n->stdout_data, "ok 50\n");
  EXPECT_EQ(testing::ProcessesOfUid(holder.uid), 0);
}

// 6 children x 200 MiB under 512 MiB for the whole run: the kernel kills
// some, the run's peak comes from the cgroup and stays under the bound.
TEST_P(HostileMatrixTest, MemoryOfTheWholeRunIsBounded) {
  if (!Cgroups()) GTEST_SKIP() << DetectCgroups().Describe();
  Options o = Hostile({"memkids", "6", "200"});
  o.limits.address_space_bytes = 1ull << 30;  // Each child fits alone.
  o.limits.memory_bytes = 512ull << 20;
  Result r = testing::RunLeavingNothing(o);
  int touched = -1, killed = -1;
  std::sscanf(r.stdout_data.c_str(), "touched %d killed %d", &touched, &killed);
  const bool contained = r.oom_killed && touched >= 0 && touched < 6 &&
                         killed >= 1 && r.memory_peak_bytes <= (512ull << 20);
  char peak[32];
  std::snprintf(peak, sizeof peak, "%.1f", r.memory_peak_bytes / 1048576.0);
  Matrix("6 x 200 MiB children under a 512 MiB run bound", GetParam(),
         contained,
         FirstLine(r.stdout_data) + "; peak " + peak + " MiB" +
             (r.oom_killed ? ", OOM kill reported" : ""));
  EXPECT_TRUE(r.oom_killed) << r.Summary();
  EXPECT_TRUE(r.limits_hit & kLimitMemory) << r.Summary();
  EXPECT_GE(killed, 1) << r.stdout_data;
  EXPECT_LT(touched, 6) << r.stdout_data;
  EXPECT_GT(r.memory_peak_bytes, 256ull << 20) << r.Summary();
  EXPECT_LE(r.memory_peak_bytes, 512ull << 20) << r.Summary();
}

// A disk filler and a file-count bomb in a limited work dir: ENOSPC at the
// bounds, and the host's file system is untouched.
TEST_P(HostileMatrixTest, DiskAndInodeBombsStopInALimitedWorkDir) {
  if (!LimitedDirError().empty()) GTEST_SKIP() << LimitedDirError();
  for (const char* mode : {"fill", "files"}) {
    Options o = Hostile({mode});
    StatusOr<bool> mounted = MountLimitedDir(o.work_dir, 16 << 20, 500);
    ASSERT_TRUE(mounted.ok() && *mounted) << mounted.status().ToString();
    Result r = testing::RunLeavingNothing(o);
    long n = -1;
    char err[32] = "";
    std::sscanf(r.stdout_data.c_str(),
                mode == std::string("fill") ? "fill: %31s after %ld"
                                            : "files: %31s after %ld",
                err, &n);
    ASSERT_TRUE(UnmountLimitedDir(o.work_dir).ok());
    const bool empty_after = fs::is_empty(o.work_dir);
    const bool contained = std::string(err) == "ENOSPC" && n >= 0 &&
                           n <= (mode == std::string("fill") ? 16 : 500) &&
                           empty_after;
    Matrix(mode == std::string("fill") ? "disk filler in a tool's work dir"
                                       : "file-count bomb in a tool's work dir",
           GetParam(), contained,
           FirstLine(r.stdout_data) + (mode == std::string("fill")
                                           ? " (tmpfs 16 MiB)"
                                           : " (tmpfs 500 inodes)"));
    EXPECT_EQ(std::string(err), "ENOSPC") << r.stdout_data;
    EXPECT_GE(n, 0) << r.stdout_data;
    EXPECT_LE(n, mode == std::string("fill") ? 16 : 500) << r.stdout_data;
    EXPECT_TRUE(empty_after) << "the bomb's files reached the host";
  }
}

// A unix socket on the host, as /dev/log or the D-Bus bus would be.
class HostSocket {
 public:
  HostSocket() {
    dir_ = "/var/tmp/trench-sbx-unix-" + std::to_string(getpid());
    fs::create_directories(dir_);
    chmod(dir_.c_str(), 0777);
    path_ = dir_ + "/sock";
    unlink(path_.c_str());
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path_.c_str());
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        listen(fd_, 8) != 0)
      ADD_FAILURE() << "cannot listen on " << path_;
    chmod(path_.c_str(), 0777);
  }
  ~HostSocket() {
    close(fd_);
    testing::RemoveTree(dir_);
  }
  const std::string& path() const { return path_; }
  bool Accepted() {
    int c = accept(fd_, nullptr, nullptr);
    if (c >= 0) close(c);
    return c >= 0;
  }

 private:
  std::string dir_, path_;
  int fd_ = -1;
};

TEST_P(HostileMatrixTest, HostUnixSocketIsUnreachableButSocketpairWorks) {
  if (!DetectCapabilities().seccomp) GTEST_SKIP() << "no seccomp";
  HostSocket host;
  for (SeccompMode mode : {SeccompMode::kErrno, SeccompMode::kKill}) {
    Options o = Hostile({"unix", host.path()});
    o.seccomp = mode;
    Result r = testing::RunLeavingNothing(o);
    const bool reached = host.Accepted();
    const bool contained = !reached && r.ok() &&
                           r.stdout_data == "socket: EPERM\nsocketpair: ok\n";
    Matrix(mode == SeccompMode::kErrno
               ? "connect() to a host unix socket (seccomp errno)"
               : "connect() to a host unix socket (seccomp kill)",
           GetParam(), contained,
           FirstLine(r.stdout_data) + (reached ? "; host accepted" : ""));
    EXPECT_FALSE(reached);
    EXPECT_TRUE(r.ok()) << r.Summary();
    EXPECT_EQ(r.stdout_data, "socket: EPERM\nsocketpair: ok\n");
  }
}

// The daemon's layout in small: var/store.db, var/cases/ (an input),
// var/work/run (the run's own dir). Builtin masks var and can keep it
// 0700; bwrap masks it too but needs it searchable (bwrap resolves the
// bind sources as the run's uid); none relies on 0711 and 0600.
TEST_P(HostileMatrixTest, StateDirIsHiddenExceptTheRunsOwnDir) {
  if (!DetectCapabilities().can_set_uid)
    GTEST_SKIP() << "not root: the run is our own uid";
  const std::string var = "/var/tmp/trench-sbx-var-" + std::to_string(getpid());
  testing::RemoveTree(var);
  fs::create_directories(var + "/cases/c1");
  fs::create_directories(var + "/work/run");
  dirs_.push_back(var);
  std::ofstream(var + "/store.db") << "secret";
  std::ofstream(var + "/cases/c1/case.txt") << "input";
  chmod((var + "/store.db").c_str(), 0600);
  chmod(var.c_str(), GetParam() == Isolation::kBuiltin ? 0700 : 0711);
  chmod((var + "/work").c_str(), 0711);
  chmod((var + "/cases").c_str(), 0755);
  chmod((var + "/cases/c1").c_str(), 0755);

  Options o = Hostile({"read", var + "/store.db", var + "/cases/c1/case.txt",
                       var + "/work/run/../../store.db"});
  o.work_dir = var + "/work/run";
  o.read_only_paths.push_back(var + "/cases");
  o.masked_paths = {var};
  Result read = testing::RunLeavingNothing(o);
  o.argv = {testing::HostileBinary(), "list", var};
  Result list = testing::RunLeavingNothing(o);
  o.argv = {testing::HostileBinary(), "hello"};
  Result own = testing::RunLeavingNothing(o);

  const bool store_read =
      read.stdout_data.find("store.db: ok") != std::string::npos;
  const bool store_listed =
      list.stdout_data.find("store.db") != std::string::npos;
  const bool input_read =
      read.stdout_data.find("case.txt: ok") != std::string::npos;
  Matrix("read var/store.db or list var/ from a run", GetParam(),
         !store_read && !store_listed && input_read && own.ok(),
         FirstLine(read.stdout_data).substr(var.size() + 1) + "; " +
             (GetParam() == Isolation::kNone ? FirstLine(list.stdout_data)
                                             : "var/ lists only the run's "
                                               "mount points"));
  EXPECT_FALSE(store_read) << read.stdout_data;
  EXPECT_FALSE(store_listed) << list.stdout_data;
  EXPECT_TRUE(input_read) << read.stdout_data;
  EXPECT_TRUE(own.ok()) << own.Summary() << own.stderr_data;
  EXPECT_TRUE(fs::exists(var + "/work/run/hello.txt"));
  if (GetParam() == Isolation::kNone) {
    EXPECT_EQ(list.stdout_data, "list: EACCES\n");
  } else {
    EXPECT_EQ(read.stdout_data.find(var + "/store.db: ENOENT"), 0u)
        << read.stdout_data;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, HostileMatrixTest,
                         ::testing::Values(Isolation::kBuiltin,
                                           Isolation::kBwrap, Isolation::kNone),
                         [](const ::testing::TestParamInfo<Isolation>& info) {
                           return std::string(IsolationName(info.param));
                         });

TEST(CgroupTest, DescribeNamesTheModeOrWhatIsLost) {
  CgroupSupport none;
  none.error = "no cgroup hierarchy with memory and pids is mounted";
  EXPECT_EQ(none.Describe().rfind("cgroups: NONE (no cgroup hierarchy", 0), 0u);
  EXPECT_NE(none.Describe().find("lost: the aggregate memory bound"),
            std::string::npos);
  const CgroupSupport& here = DetectCgroups();
  std::printf("%s\n", here.Describe().c_str());
  EXPECT_EQ(here.Describe().find(std::string("cgroups: ") +
                                 (here.mode == CgroupMode::kNone
                                      ? "NONE"
                                      : CgroupModeName(here.mode))),
            0u);
}

TEST(CgroupTest, ARunWithoutBoundsStillReportsItsPeak) {
  if (DetectCgroups().mode == CgroupMode::kNone)
    GTEST_SKIP() << DetectCgroups().Describe();
  Options o = HostileOptions({"memkids", "2", "40"});
  o.limits.address_space_bytes = 1ull << 30;
  Result r = testing::RunLeavingNothing(o);
  testing::RemoveTree(o.work_dir);
  EXPECT_EQ(r.stdout_data, "touched 2 killed 0\n");
  EXPECT_FALSE(r.oom_killed);
  // Both children's 40 MiB at once: more than either process's own RSS.
  EXPECT_GE(r.memory_peak_bytes, 80ull << 20) << r.Summary();
  EXPECT_GT(r.memory_peak_bytes, r.max_rss_bytes) << r.Summary();
}

}  // namespace
}  // namespace trench::sandbox
