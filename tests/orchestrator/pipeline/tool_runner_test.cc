// The daemon's ToolRunner under hostile load: hostile programs run next to
// well-behaved ones on one event loop. Each is contained and reported, the
// loop keeps serving, and the global cap on concurrent runs holds.
#include "orchestrator/pipeline/tool_runner.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "orchestrator/pipeline/pipeline.h"
#include "sandbox/capabilities.h"
#include "sandbox/cgroup.h"
#include "sandbox/limited_dir.h"
#include "tests/sandbox/hostile.h"

namespace trench::orchestrator {
namespace {

namespace asio = boost::asio;
namespace sbx = trench::sandbox;
using sbx::testing::HostileOptions;

// The daemon's shape: one thread turns the loop (and spawns every run),
// worker threads call ToolRunner::Run().
class Loop {
 public:
  Loop()
      : guard_(asio::make_work_guard(ioc_)), thread_([this] { ioc_.run(); }) {}
  ~Loop() {
    guard_.reset();
    thread_.join();
  }
  asio::io_context& ioc() { return ioc_; }

 private:
  asio::io_context ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::thread thread_;
};

// Polls `done` every 10 ms, at most ~60 s: a guard against hanging, not a
// measurement. Returns whether `done` came true.
template <typename Pred>
bool PollUntil(Pred done) {
  for (int i = 0; i < 6000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

struct Case {
  std::string name;
  sbx::Options options;
  StatusOr<sbx::Result> result = Internal("not run");
};

class ToolRunnerHostileTest : public ::testing::TestWithParam<sbx::Isolation> {
 protected:
  void SetUp() override {
    StatusOr<sbx::Isolation> tier =
        sbx::DetectCapabilities().Resolve(GetParam());
    if (!tier.ok()) GTEST_SKIP() << tier.status().message();
    cases_.reserve(16);
  }
  void TearDown() override {
    for (const Case& c : cases_) sbx::testing::RemoveTree(c.options.work_dir);
  }
  // A run of the hostile program with a uid of its own (RLIMIT_NPROC and
  // the leftover check are per uid).
  sbx::Options& Add(const std::string& name,
                    const std::vector<std::string>& args) {
    sbx::Options o = HostileOptions(args);
    o.isolation = GetParam();
    o.uid = o.gid = o.uid + static_cast<uid_t>(cases_.size());
    cases_.push_back({name, o});
    return cases_.back().options;
  }
  const sbx::Result& ResultOf(const std::string& name) {
    for (const Case& c : cases_) {
      if (c.name != name) continue;
      EXPECT_TRUE(c.result.ok())
          << name << ": " << c.result.status().ToString();
      if (c.result.ok()) {
        std::printf("%-8s %s\n", name.c_str(), c.result->Summary().c_str());
        return *c.result;
      }
    }
    static const sbx::Result kNone;
    ADD_FAILURE() << "no result for " << name;
    return kNone;
  }

  std::vector<Case> cases_;
};

TEST_P(ToolRunnerHostileTest, HostileRunsAreContainedAndTheLoopKeepsServing) {
  const bool own_uid = !sbx::DetectCapabilities().can_set_uid;
  const int own_before = own_uid ? sbx::testing::ProcessesOfUid(getuid()) : 0;
  sbx::Options& bomb = Add("bomb", {"forkbomb"});
  bomb.limits.wall_seconds = 2;
  bomb.limits.processes = 32;
  Add("memhog", {"memhog"}).limits.address_space_bytes = 128ull << 20;
  Add("spin", {"spin"}).limits.cpu_seconds = 1;
  sbx::Options& flood = Add("flood", {"flood", std::to_string(20 << 20)});
  flood.limits.stdout_bytes = 64 << 10;
  flood.limits.stderr_bytes = 1000;
  Add("escapee", {"escape", "wait"}).limits.wall_seconds = 1;
  const std::string hello_dir = Add("hello", {"hello"}).work_dir;
  Add("exit7", {"exit", "7"});
  // Finishes only once the timer below has fired: that timer is served by
  // the loop while this run (and the hostile ones) are in flight.
  sbx::Options& gate = Add("gate", {});
  gate.argv = {"/bin/sh", "-c",
               "while [ ! -e go ]; do sleep 0.01; done; echo released"};

  Loop loop;
  ToolRunner runner(loop.ioc(), static_cast<int>(cases_.size()));
  std::vector<std::thread> workers;
  for (Case& c : cases_) {
    workers.emplace_back([&runner, &c] { c.result = runner.Run(c.options); });
  }
  EXPECT_TRUE(PollUntil(
      [&] { return runner.running() == static_cast<int>(cases_.size()); }));
  std::atomic<bool> fired{false};
  std::atomic<int> in_flight_at_fire{-1};
  const std::string go = gate.work_dir + "/go";
  asio::post(loop.ioc(), [&] {
    auto timer = std::make_shared<asio::steady_timer>(
        loop.ioc(), std::chrono::milliseconds(50));
    timer->async_wait([&, timer](boost::system::error_code ec) {
      in_flight_at_fire = runner.running();
      fired = !ec;
      std::ofstream(go) << "go\n";
    });
  });
  for (std::thread& t : workers) t.join();

  EXPECT_TRUE(fired);
  EXPECT_GE(in_flight_at_fire, 1);  // At least the gate was still running.
  const sbx::Result& b = ResultOf("bomb");
  EXPECT_TRUE(b.timed_out);
  EXPECT_FALSE(b.exited);
  EXPECT_TRUE(b.limits_hit & sbx::kLimitWallTime);
  const sbx::Result& m = ResultOf("memhog");
  EXPECT_TRUE(m.exited && m.exit_code == 42) << m.Summary();
  EXPECT_TRUE(m.limits_hit & sbx::kLimitMemory) << m.Summary();
  const sbx::Result& s = ResultOf("spin");
  EXPECT_EQ(s.signal, SIGXCPU) << s.Summary();
  EXPECT_FALSE(s.timed_out);
  EXPECT_TRUE(s.limits_hit & sbx::kLimitCpu);
  const sbx::Result& f = ResultOf("flood");
  EXPECT_TRUE(f.ok()) << f.Summary();
  EXPECT_EQ(f.stdout_data, std::string(64 << 10, 'o'));
  EXPECT_EQ(f.stdout_truncated, (20u << 20) - (64u << 10));
  EXPECT_EQ(f.stderr_truncated, (20u << 20) - 1000);
  EXPECT_TRUE(f.limits_hit & sbx::kLimitOutput);
  const sbx::Result& e = ResultOf("escapee");
  EXPECT_TRUE(e.timed_out) << e.Summary();
  EXPECT_EQ(e.signal, SIGKILL);
  EXPECT_EQ(e.stdout_data, "escaped\n");
  const sbx::Result& h = ResultOf("hello");
  EXPECT_TRUE(h.ok()) << h.Summary() << h.stderr_data;
  EXPECT_EQ(h.stdout_data.rfind("uid=", 0), 0u) << h.stdout_data;
  EXPECT_EQ(h.limits_hit, 0u);
  EXPECT_TRUE(std::filesystem::exists(hello_dir + "/hello.txt"));
  const sbx::Result& x = ResultOf("exit7");
  EXPECT_TRUE(x.exited && x.exit_code == 7) << x.Summary();
  const sbx::Result& g = ResultOf("gate");
  EXPECT_TRUE(g.ok()) << g.Summary() << g.stderr_data;
  EXPECT_EQ(g.stdout_data, "released\n");
  for (const Case& c : cases_) {
    EXPECT_EQ(c.result.ok() ? c.result->isolation : sbx::Isolation::kAuto,
              *sbx::DetectCapabilities().Resolve(GetParam()))
        << c.name;
  }

  // Nothing of any run is left, and the runner takes new work.
  if (own_uid) {
    EXPECT_EQ(sbx::testing::ProcessesOfUid(getuid()), own_before);
  } else {
    for (const Case& c : cases_) {
      EXPECT_EQ(sbx::testing::ProcessesOfUid(c.options.uid), 0) << c.name;
    }
  }
  EXPECT_EQ(sbx::testing::ChildrenOfSelf(), 0);
  sbx::Options after = Add("after", {"exit", "5"});
  StatusOr<sbx::Result> a = runner.Run(after);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->exited && a->exit_code == 5) << a->Summary();
  EXPECT_EQ(runner.running(), 0);
  EXPECT_EQ(runner.total_runs(), static_cast<int64_t>(cases_.size()));
}

INSTANTIATE_TEST_SUITE_P(
    Tiers, ToolRunnerHostileTest,
    ::testing::Values(sbx::Isolation::kBuiltin, sbx::Isolation::kBwrap,
                      sbx::Isolation::kNone),
    [](const ::testing::TestParamInfo<sbx::Isolation>& info) {
      return std::string(sbx::IsolationName(info.param));
    });

// The in.* files of `dir`: one per run between its start and its end.
std::set<std::string> RunningIds(const std::string& dir) {
  std::set<std::string> ids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("in.", 0) == 0) ids.insert(name.substr(3));
  }
  return ids;
}

// Each run marks itself in a shared directory and holds its slot until the
// test releases it, one at a time: the marks show how many runs overlap.
TEST(ToolRunnerTest, GlobalCapBoundsConcurrentRuns) {
  constexpr int kCap = 2, kRuns = 6;
  const std::string shared = sbx::testing::MakeTempDir("cap");
  chmod(shared.c_str(), 0777);
  std::vector<sbx::Options> options;
  for (int i = 0; i < kRuns; ++i) {
    sbx::Options o = HostileOptions({});
    sbx::testing::RemoveTree(o.work_dir);
    o.work_dir = shared;
    o.chown_work_dir = false;  // Shared: runs add and remove files in it.
    o.uid = o.gid = o.uid + i;
    o.argv = {"/bin/sh", "-c",
              "touch in.$1; while [ ! -e release.$1 ]; do sleep 0.01; done; "
              "rm in.$1",
              "sh", std::to_string(i)};
    options.push_back(o);
  }
  Loop loop;
  ToolRunner runner(loop.ioc(), kCap);
  std::vector<StatusOr<sbx::Result>> results(kRuns, Internal("not run"));
  std::vector<std::thread> workers;
  for (int i = 0; i < kRuns; ++i) {
    workers.emplace_back(
        [&, i] { results[i] = runner.Run(options[static_cast<size_t>(i)]); });
  }
  std::set<std::string> released;
  size_t max_marks = 0;
  int max_running = 0;
  for (int done = 0; done < kRuns; ++done) {
    // As many runs as the cap allows hold a slot (or all that are left).
    const size_t want = static_cast<size_t>(std::min(kCap, kRuns - done));
    std::string next;
    bool ok = PollUntil([&] {
      std::set<std::string> ids = RunningIds(shared);
      max_marks = std::max(max_marks, ids.size());
      max_running = std::max(max_running, runner.running());
      size_t unreleased = 0;
      for (const std::string& id : ids) {
        if (released.count(id)) continue;
        if (unreleased++ == 0) next = id;
      }
      return unreleased >= want;
    });
    if (!ok) {
      ADD_FAILURE() << "runs did not start; released " << released.size();
      for (int i = 0; i < kRuns; ++i)
        std::ofstream(shared + "/release." + std::to_string(i));
      break;
    }
    released.insert(next);
    std::ofstream(shared + "/release." + next);
  }
  for (std::thread& t : workers) t.join();
  for (int i = 0; i < kRuns; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status().ToString();
    EXPECT_TRUE(results[i]->ok()) << i << ": " << results[i]->Summary();
  }
  EXPECT_EQ(max_marks, static_cast<size_t>(kCap));  // Reached, never passed.
  EXPECT_LE(max_running, kCap);
  EXPECT_EQ(runner.total_runs(), kRuns);
  EXPECT_EQ(runner.running(), 0);
  EXPECT_TRUE(RunningIds(shared).empty());
  sbx::testing::RemoveTree(shared);
}

TEST(DescribeSandboxTest, FallbackIsAWarningNamingWhatIsLost) {
  sbx::Capabilities caps;
  caps.namespaces = true;
  caps.can_set_uid = true;
  caps.seccomp = true;
  SandboxReport r = DescribeSandbox(caps, /*namespaces_enabled=*/true);
  EXPECT_FALSE(r.warning) << r.text;
  EXPECT_EQ(r.text, caps.Describe());
  EXPECT_EQ(r.text.rfind("sandbox: runs use builtin", 0), 0u) << r.text;

  r = DescribeSandbox(caps, /*namespaces_enabled=*/false);
  EXPECT_TRUE(r.warning);
  EXPECT_NE(r.text.find("NO isolation (sandbox.namespaces is false"),
            std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find(sbx::FallbackLoss()), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("the machine offers: builtin namespaces yes"),
            std::string::npos)
      << r.text;

  caps.namespaces = false;
  caps.namespace_error = "clone with new namespaces: EPERM";
  r = DescribeSandbox(caps, /*namespaces_enabled=*/true);
  EXPECT_TRUE(r.warning);
  EXPECT_NE(r.text.find("lost: "), std::string::npos) << r.text;
  EXPECT_NE(r.text.find(caps.namespace_error), std::string::npos) << r.text;

  caps.bwrap_path = "/usr/bin/bwrap";
  caps.bwrap = true;
  r = DescribeSandbox(caps, /*namespaces_enabled=*/true);
  EXPECT_FALSE(r.warning) << r.text;
  EXPECT_EQ(r.text.rfind("sandbox: runs use bwrap at /usr/bin/bwrap", 0), 0u)
      << r.text;
}

}  // namespace
}  // namespace trench::orchestrator

namespace trench::orchestrator {
namespace {

// Issue 18, item 1: every run used uid 65534, so one run holding ~1,000
// processes made a neighbour's fork fail with EAGAIN (RLIMIT_NPROC counts
// per uid). Both runs here ask for that same uid; the runner hands each a
// uid of its own from its range, and the neighbour's small build forks.
TEST(ToolRunnerUidTest, ConcurrentRunsGetUidsOfTheirOwn) {
  if (!sbx::DetectCapabilities().can_set_uid)
    GTEST_SKIP() << "not root: no uid switch";
  ToolRunnerOptions ro;
  ro.max_concurrent = 2;
  ro.uid_first = 250000 + static_cast<uid_t>(getpid() % 1000) * 4;
  ro.uid_count = 2;
  Loop loop;
  ToolRunner runner(loop.ioc(), ro);
  sbx::Options holder = HostileOptions({"procs", "1000"});
  sbx::Options build = HostileOptions({"forkwork", "50"});
  for (sbx::Options* o : {&holder, &build}) {
    o->uid = o->gid = 65534;     // What the daemon's steps ask for.
    o->limits.processes = 1024;  // Sandboxed()'s RLIMIT_NPROC.
    o->limits.wall_seconds = 60;
  }
  StatusOr<sbx::Result> held = Internal("not run");
  std::thread holding([&] { held = runner.Run(holder); });
  long count = -1;
  ASSERT_TRUE(PollUntil([&] {
    std::ifstream(holder.work_dir + "/held") >> count;
    return count >= 0;
  }));
  StatusOr<sbx::Result> built = runner.Run(build);
  runner.KillAll();  // Ends the holder.
  holding.join();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  std::printf("holder held %ld; build: %s %s", count, built->Summary().c_str(),
              built->stdout_data.c_str());
  EXPECT_EQ(count, 1000);
  EXPECT_TRUE(built->ok()) << built->Summary() << " " << built->stdout_data;
  EXPECT_EQ(built->stdout_data, "ok 50\n");
  EXPECT_EQ(runner.running(), 0);
  sbx::testing::RemoveTree(holder.work_dir);
  sbx::testing::RemoveTree(build.work_dir);
}

// Uids go back to the range when runs end, and a run reports the one it
// had; the runner's masked paths and cgroup bounds reach every run.
TEST(ToolRunnerUidTest, UidsAreReturnedAndTheRunnersAdditionsApply) {
  if (!sbx::DetectCapabilities().can_set_uid)
    GTEST_SKIP() << "not root: no uid switch";
  const std::string var = sbx::testing::MakeTempDir("runner-var");
  chmod(var.c_str(), 0711);
  std::ofstream(var + "/store.db") << "secret";
  chmod((var + "/store.db").c_str(), 0600);
  ToolRunnerOptions ro;
  ro.max_concurrent = 1;
  ro.uid_first = 260000 + static_cast<uid_t>(getpid() % 1000) * 4;
  ro.uid_count = 3;
  ro.masked_paths = {var};
  ro.memory_bytes = 64 << 20;
  Loop loop;
  ToolRunner runner(loop.ioc(), ro);
  for (int i = 0; i < 3; ++i) {
    sbx::Options o = HostileOptions({"hello"});
    o.read_only_paths.push_back(var);  // Refused: it contains a mask.
    StatusOr<sbx::Result> refused = runner.Run(o);
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    o.read_only_paths.pop_back();
    StatusOr<sbx::Result> r = runner.Run(o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(
        r->stdout_data.rfind("uid=" + std::to_string(ro.uid_first) + " ", 0),
        0u)
        << r->stdout_data;
    sbx::testing::RemoveTree(o.work_dir);
  }
  if (sbx::DetectCgroups().mode != sbx::CgroupMode::kNone) {
    sbx::Options o = HostileOptions({"memkids", "2", "48"});
    o.limits.address_space_bytes = 1ull << 30;
    StatusOr<sbx::Result> r = runner.Run(o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->oom_killed) << r->Summary();
    sbx::testing::RemoveTree(o.work_dir);
  }
  sbx::testing::RemoveTree(var);
}

// Issue 18, item 3: a tool run's scratch dir is a tmpfs of the configured
// size and file count, and the job's end unmounts it.
TEST(ScratchTest, ToolRunsFillOnlyTheirBoundedScratch) {
  if (!sbx::LimitedDirError().empty()) GTEST_SKIP() << sbx::LimitedDirError();
  const std::string dir = sbx::testing::MakeTempDir("scratch");
  chmod(dir.c_str(), 0755);
  DaemonConfig config;
  config.sandbox_scratch_bytes = 8 << 20;
  config.sandbox_scratch_inodes = 300;
  DaemonPaths paths(dir + "/var");
  std::filesystem::create_directories(paths.work);
  Loop loop;
  ToolRunner runner(loop.ioc(), 2);
  StepContext ctx;
  ctx.config = &config;
  ctx.paths = &paths;
  ctx.runner = &runner;
  for (const char* mode : {"fill", "files"}) {
    StatusOr<std::string> scratch = ctx.Scratch(7, mode);
    ASSERT_TRUE(scratch.ok()) << scratch.status().ToString();
    sbx::Options o = HostileOptions({mode});
    sbx::testing::RemoveTree(o.work_dir);
    o.work_dir = *scratch;
    StatusOr<sbx::Result> r = runner.Run(o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    long n = -1;
    char err[32] = "";
    std::sscanf(r->stdout_data.c_str(),
                mode == std::string("fill") ? "fill: %31s after %ld"
                                            : "files: %31s after %ld",
                err, &n);
    EXPECT_EQ(std::string(err), "ENOSPC") << r->stdout_data;
    EXPECT_LE(n, mode == std::string("fill") ? 8 : 300) << r->stdout_data;
  }
  ASSERT_TRUE(ReleaseScratches(paths, 7).ok());
  EXPECT_FALSE(std::filesystem::exists(paths.work + "/7-fill"));
  EXPECT_FALSE(std::filesystem::exists(paths.work + "/7-files"));
  std::ofstream(paths.work + "/after") << "the host still writes";
  EXPECT_TRUE(std::filesystem::exists(paths.work + "/after"));
  sbx::testing::RemoveTree(dir);
}

TEST(StateDirPolicyTest, MasksWhereANamespaceExistsAndWarnsElsewhere) {
  StateDirPolicy b = StateDirPolicyFor(sbx::Isolation::kBuiltin);
  EXPECT_EQ(b.var_mode, 0700u);
  EXPECT_TRUE(b.mask);
  EXPECT_FALSE(b.report.warning);
  StateDirPolicy w = StateDirPolicyFor(sbx::Isolation::kBwrap);
  EXPECT_EQ(w.var_mode, 0711u);
  EXPECT_TRUE(w.mask);
  StateDirPolicy n = StateDirPolicyFor(sbx::Isolation::kNone);
  EXPECT_EQ(n.var_mode, 0711u);
  EXPECT_FALSE(n.mask);
  EXPECT_TRUE(n.report.warning);
  EXPECT_NE(n.report.text.find("not masked"), std::string::npos);
}

}  // namespace
}  // namespace trench::orchestrator

namespace trench::orchestrator {
namespace {

TEST(DescribeScratchTest, NamesTheBoundsOrWarnsWhy) {
  SandboxReport ok = DescribeScratch("", 1 << 20, 100, 2);
  EXPECT_FALSE(ok.warning);
  EXPECT_EQ(ok.text,
            "scratch: tool runs' work dirs are tmpfs mounts of 1048576 bytes "
            "and 100 files (2 stale ones unmounted)");
  SandboxReport no =
      DescribeScratch("mount tmpfs: Operation not permitted", 1 << 20, 100, 0);
  EXPECT_TRUE(no.warning);
  EXPECT_NE(no.text.find("NOT bounded"), std::string::npos);
  EXPECT_NE(no.text.find("Operation not permitted"), std::string::npos);
}

}  // namespace
}  // namespace trench::orchestrator

namespace trench::orchestrator {
namespace {

// Concurrent runs on one work dir (the builds' var/builder) share a uid:
// each run chowns its work dir, so distinct uids would take each other's
// files away (seen: git refused the mirror as another uid's).
TEST(ToolRunnerUidTest, RunsSharingAWorkDirShareTheirUid) {
  if (!sbx::DetectCapabilities().can_set_uid)
    GTEST_SKIP() << "not root: no uid switch";
  ToolRunnerOptions ro;
  ro.max_concurrent = 2;
  ro.uid_first = 270000 + static_cast<uid_t>(getpid() % 1000) * 4;
  ro.uid_count = 2;
  Loop loop;
  ToolRunner runner(loop.ioc(), ro);
  const std::string shared = sbx::testing::MakeTempDir("shared-uid");
  std::vector<StatusOr<sbx::Result>> results(2, Internal("not run"));
  std::vector<std::thread> runs;
  for (int i = 0; i < 2; ++i) {
    runs.emplace_back([&, i] {
      sbx::Options o = HostileOptions({});
      sbx::testing::RemoveTree(o.work_dir);
      o.work_dir = shared;
      // Both in flight at once: each waits for the other's mark.
      o.argv = {"/bin/sh",
                "-c",
                "id -u > uid.$1; i=0; while [ ! -e uid.$2 ] && "
                "[ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; cat uid.$1",
                "sh",
                std::to_string(i),
                std::to_string(1 - i)};
      results[i] = runner.Run(o);
    });
  }
  for (std::thread& t : runs) t.join();
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->ok()) << r->Summary() << r->stderr_data;
  }
  EXPECT_EQ(results[0]->stdout_data, std::to_string(ro.uid_first) + "\n");
  EXPECT_EQ(results[1]->stdout_data, results[0]->stdout_data);
  sbx::testing::RemoveTree(shared);
}

}  // namespace
}  // namespace trench::orchestrator
