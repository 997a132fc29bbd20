// The fuzz step on the target's coverage build flavour (fuzz.coverage
// "auto"; orchestrator/pipeline/commit_reach.h CoverageBinOf): the daemon
// builds the flavour of a landed commit itself, through the sandboxed
// `hlo-bisect build --flavour coverage`, under its own key and build
// directory, and runs the commit's unfocused campaign on it.
//  - CoverageFlavourTest: the build command writes wrappers of this build's
//    tools (as build_step_test.cc does), so the plumbing is checked fast;
//  - CoverageBuildFuzzStepTest (label "slow", with the CoverageBuild
//    suites): the flavour's hlo-run is the real coverage build
//    ($TRENCH_COVERAGE_BUILD_DIR, or <build>/coverage-target when
//    CoverageBuildTest built it), and the step reports the changed-line
//    reach of a commit changing a line of dce that every program runs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "orchestrator/pipeline/commit_reach.h"
#include "orchestrator/pipeline/step_util.h"
#include "tests/orchestrator/pipeline/step_test_fixture.h"

namespace trench::orchestrator {
namespace {

namespace fs = std::filesystem;

// A flavour build command: wrappers of this build's tools, a marker naming
// the build directory it ran in, and a count of its runs in W/flavour.txt.
std::string FakeFlavourBuild() {
  return std::string(
             "echo \"$TRENCH_COMMIT\" >> ../flavour.txt && "
             "mkdir -p \"$TRENCH_BUILD_DIR\" && "
             "basename \"$TRENCH_BUILD_DIR\" > \"$TRENCH_BUILD_DIR/dir.txt\" "
             "&& for t in hloc tpusim hlo-run; do "
             "printf '#!/bin/sh\\nexec %s/%s \"$@\"\\n' '") +
         TRENCH_BINARY_DIR +
         "' \"$t\" > \"$TRENCH_BUILD_DIR/$t\" && "
         "chmod +x \"$TRENCH_BUILD_DIR/$t\" || exit 1; done";
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class CoverageFlavourTest : public testing::StepTest {
 protected:
  void SetUp() override {
    StepTest::SetUp();
    base_ = Commit({{"compiler/passes/dce.cc", "// v1\n"}}, "base");
    changed_ = Commit({{"compiler/passes/dce.cc", "// v2\n"}}, "dce: v2");
    config_.fuzz_budget_seconds = 2;
    config_.fuzz_jobs = 1;
    config_.build_timeout_seconds = 120;
    config_.fuzz_coverage = "auto";
    ctx_.worker = "orchestrator";
  }

  StatusOr<Json> Fuzz(const std::string& commit) {
    Json payload = Json::MakeObject();
    payload["commit"] = commit;
    return RunFuzzStep(ctx_, MakeJob("fuzz", std::move(payload)));
  }

  std::string base_, changed_;
};

TEST_F(CoverageFlavourTest, TheStepBuildsTheFlavourOnceAndFuzzesOnIt) {
  config_.fuzz_coverage_build_command = FakeFlavourBuild();
  StatusOr<Json> out = Fuzz(changed_);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Json* note = out->Find("coverage_build");
  ASSERT_NE(note, nullptr) << out->Dump();
  EXPECT_EQ(*note->Find("key"), Json(changed_ + "-coverage")) << note->Dump();
  EXPECT_EQ(*note->Find("built"), Json(true)) << note->Dump();
  // Built in its own directory (the plain build's objects stay), and
  // installed under its own key.
  EXPECT_EQ(ReadText(paths_->worktree + "/build-coverage/dir.txt"),
            "build-coverage\n");
  EXPECT_FALSE(fs::exists(paths_->worktree + "/build/dir.txt"));
  EXPECT_TRUE(fs::exists(paths_->build_cache + "/" + changed_ +
                         "-coverage/bin/hlo-run"));
  // The campaign ran on it: this build is not instrumented, so the
  // campaign says it measured no reach (and still fuzzed).
  EXPECT_GT(out->Find("programs")->int64_value(), 0) << out->Dump();
  EXPECT_EQ(out->Find("reach"), nullptr) << out->Dump();

  // A second campaign of the commit takes the cached flavour.
  StatusOr<Json> again = Fuzz(changed_);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again->Find("coverage_build")->Find("cached"), Json(true))
      << again->Dump();
  EXPECT_EQ(ReadText(paths_->worktree + "/flavour.txt"), changed_ + "\n");
}

// The hung build's argv ("sleep", "61.25"), as /proc/PID/cmdline shows it.
const std::string kHungBuild(
    "sleep\0"
    "61.25",
    11);

// Whether a process whose command line holds `needle` (a NUL-separated
// argv, as /proc shows it) is alive.
bool ProcessWithArgv(const std::string& needle) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string cmdline = ReadText(e.path().string() + "/cmdline");
    if (cmdline.find(needle) != std::string::npos) return true;
  }
  return false;
}

// The daemon SIGKILLed while it builds the flavour of a commit (the step
// runs in a child process with its own loop, runner and store connection,
// as a daemon does): the build dies with it, and the restarted daemon
// builds the flavour again, whole, rather than taking a half-built
// directory or a failure from the cache.
TEST_F(CoverageFlavourTest, KilledDuringTheFlavourBuildItIsBuiltAgainWhole) {
  // A build that marks its start, leaves a half-built directory and hangs.
  config_.fuzz_coverage_build_command =
      "echo \"$TRENCH_COMMIT\" >> ../flavour.txt && "
      "mkdir -p \"$TRENCH_BUILD_DIR\" && "
      "echo half > \"$TRENCH_BUILD_DIR/hlo-run\" && exec sleep 61.25";
  Json payload = Json::MakeObject();
  payload["commit"] = changed_;
  const Job job = MakeJob("fuzz", payload);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    boost::asio::io_context ioc;
    auto guard = boost::asio::make_work_guard(ioc);
    std::thread loop([&] { ioc.run(); });
    ToolRunner runner(ioc, 2);
    StatusOr<Connection> own = OwnConnection();
    if (!own.ok()) _exit(2);
    own->ctx.runner = &runner;
    (void)RunFuzzStep(own->ctx, job);
    _exit(0);
  }
  const std::string marker = paths_->worktree + "/flavour.txt";
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (!ProcessWithArgv(kHungBuild) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(ProcessWithArgv(kHungBuild)) << "the flavour build did not start";
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  // The build it started goes with it.
  const auto gone = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (ProcessWithArgv(kHungBuild) &&
         std::chrono::steady_clock::now() < gone) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(ProcessWithArgv(kHungBuild))
      << "the killed daemon's flavour build still runs";
  EXPECT_FALSE(fs::exists(paths_->build_cache + "/" + changed_ +
                          "-coverage/bin/hlo-run"));

  // The restart: the flavour is built again and the campaign runs on it.
  config_.fuzz_coverage_build_command = FakeFlavourBuild();
  StatusOr<Json> out = Fuzz(changed_);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Json* note = out->Find("coverage_build");
  ASSERT_NE(note, nullptr) << out->Dump();
  EXPECT_EQ(*note->Find("built"), Json(true)) << note->Dump();
  EXPECT_EQ(ReadText(marker), changed_ + "\n" + changed_ + "\n");
  EXPECT_NE(
      ReadText(paths_->build_cache + "/" + changed_ + "-coverage/bin/hlo-run")
          .find("#!/bin/sh"),
      std::string::npos);
  EXPECT_GT(out->Find("programs")->int64_value(), 0) << out->Dump();
}

TEST_F(CoverageFlavourTest, AFlavourThatDoesNotBuildLeavesThePlainBuild) {
  config_.fuzz_coverage_build_command = "echo broken; exit 1";
  StatusOr<Json> out = Fuzz(changed_);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Json* note = out->Find("coverage_build");
  ASSERT_NE(note, nullptr) << out->Dump();
  EXPECT_EQ(*note->Find("built"), Json(false)) << note->Dump();
  EXPECT_GT(out->Find("programs")->int64_value(), 0) << out->Dump();
}

TEST_F(CoverageFlavourTest, ACustomBuildWithoutAFlavourCommandIsNotGuessed) {
  config_.build_command = "true";
  StatusOr<Json> out = Fuzz(changed_);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Json* note = out->Find("coverage_build");
  ASSERT_NE(note, nullptr) << out->Dump();
  EXPECT_NE(note->Find("skipped")->string_value().find(
                "fuzz.coverage_build_command is not set"),
            std::string::npos)
      << note->Dump();
  EXPECT_FALSE(fs::exists(paths_->worktree + "/build-coverage"));
  EXPECT_GT(out->Find("programs")->int64_value(), 0) << out->Dump();
}

TEST_F(CoverageFlavourTest, OffBuildsNoFlavour) {
  config_.fuzz_coverage = "off";
  config_.fuzz_coverage_build_command = FakeFlavourBuild();
  StatusOr<Json> out = Fuzz(changed_);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->Find("coverage_build"), nullptr) << out->Dump();
  EXPECT_FALSE(fs::exists(paths_->worktree + "/flavour.txt"));
}

// A hostile flavour build plants a "built" entry with fake binaries for
// the commit's plain key, where it can reach: only its own key,
// "<sha>-coverage", is installed.
TEST_F(CoverageFlavourTest, AHostileFlavourBuildInstallsOnlyItsOwnKey) {
  const std::string plant =
      "for d in ../out/" + changed_ + " ../cache/" + changed_ +
      "; do mkdir -p $d/bin && echo '{\"built\": true}' > $d/result.json "
      "&& printf '#!/bin/sh\\necho pwned\\n' > $d/bin/hlo-run; done; ";
  config_.fuzz_coverage_build_command = plant + FakeFlavourBuild();
  StatusOr<Json> out = Fuzz(changed_);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out->Find("coverage_build")->Find("built"), Json(true))
      << out->Dump();
  EXPECT_TRUE(fs::exists(paths_->build_cache + "/" + changed_ +
                         "-coverage/bin/hlo-run"));
  EXPECT_FALSE(fs::exists(paths_->build_cache + "/" + changed_));
  StatusOr<std::string> bin = BinDirOf(ctx_, changed_);
  ASSERT_TRUE(bin.ok());
  EXPECT_EQ(*bin, TRENCH_BINARY_DIR);
}

// A diff larger than kMaxReachDiffBytes (a stranger's vendored import) is
// fuzzed without reach, and the job says so.
TEST_F(CoverageFlavourTest, AnOversizedDiffIsFuzzedWithoutReach) {
  std::string big;
  for (size_t i = 0; big.size() <= kMaxReachDiffBytes; ++i) {
    big += "line " + std::to_string(i) + "\n";
  }
  const std::string huge = Commit({{"vendor/big.txt", big}}, "vendor");
  StatusOr<Json> out = Fuzz(huge);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_NE(out->Find("reach_skipped"), nullptr) << out->Dump().substr(0, 500);
  EXPECT_EQ(out->Find("coverage_build"), nullptr);
  EXPECT_EQ(out->Find("reach"), nullptr);
  EXPECT_GT(out->Find("programs")->int64_value(), 0);
}

// A continuous round measures reach on all that landed since the
// known-good commit, in head's line numbers.
TEST_F(CoverageFlavourTest, ARoundsChangedLinesAreAllSinceTheKnownGoodCommit) {
  const std::string later =
      Commit({{"compiler/passes/cse.cc", "// cse\n"}}, "cse: new");
  config_.good_commit = base_;
  StatusOr<std::string> d = RoundDiffText(ctx_, later);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_NE(d->find("+// v2"), std::string::npos) << *d;
  EXPECT_NE(d->find("+// cse"), std::string::npos) << *d;
  EXPECT_EQ(*RoundDiffText(ctx_, base_), "");
  config_.good_commit = "";
  EXPECT_EQ(*RoundDiffText(ctx_, later), "");  // No known-good commit.
}

// The real coverage build's directory, or "".
std::string CoverageBuildDir() {
  if (const char* dir = std::getenv("TRENCH_COVERAGE_BUILD_DIR"); dir && *dir) {
    return dir;
  }
  const std::string built = std::string(TRENCH_BINARY_DIR) + "/coverage-target";
  return fs::exists(built + "/hlo-run") ? built : "";
}

class CoverageBuildFuzzStepTest : public CoverageFlavourTest {};

TEST_F(CoverageBuildFuzzStepTest, TheStepMeasuresReachOnTheFlavour) {
  const std::string cov = CoverageBuildDir();
  if (cov.empty()) {
    GTEST_SKIP() << "no coverage build: set TRENCH_COVERAGE_BUILD_DIR "
                    "(scripts/test.sh builds build-coverage/)";
  }
  // A commit that brings dce's post-order line, which every program runs,
  // into the text this coverage build was compiled from.
  const std::string rel = "compiler/passes/dce.cc";
  const std::string now = ReadText(std::string(TRENCH_SOURCE_DIR) + "/" + rel);
  const std::string line =
      "std::vector<HloInstruction*> order = comp->MakeInstructionPostOrder();";
  const size_t at = now.find(line);
  ASSERT_NE(at, std::string::npos);
  std::string before = now;
  before.replace(at, line.size(), "std::vector<HloInstruction*> order;");
  const std::string b = Commit({{rel, before}}, "dce: before");
  const std::string c = Commit({{rel, now}}, "dce: post order");
  // The flavour: the real coverage hlo-run, and this build's hloc and
  // tpusim (the campaign runs programs through hlo-run alone).
  config_.fuzz_coverage_build_command =
      "mkdir -p \"$TRENCH_BUILD_DIR\" && cp '" + cov +
      "/hlo-run' \"$TRENCH_BUILD_DIR/hlo-run\" && for t in hloc tpusim; do "
      "printf '#!/bin/sh\\nexec %s/%s \"$@\"\\n' '" +
      std::string(TRENCH_BINARY_DIR) +
      "' \"$t\" > \"$TRENCH_BUILD_DIR/$t\" && "
      "chmod +x \"$TRENCH_BUILD_DIR/$t\" || exit 1; done";
  config_.fuzz_budget_seconds = 10;
  config_.fuzz_reach_stop_programs = 3;
  StatusOr<Json> out = Fuzz(c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out->Find("coverage_build")->Find("built"), Json(true))
      << out->Dump();
  const Json* reach = out->Find("reach");
  ASSERT_NE(reach, nullptr) << out->Dump();
  EXPECT_EQ(*reach->Find("lines"), Json(int64_t{1})) << reach->Dump();
  EXPECT_EQ(*reach->Find("reached"), Json(int64_t{1})) << reach->Dump();
  (void)b;
}

}  // namespace
}  // namespace trench::orchestrator
