// `hlo-bisect build` (tools/hlo-bisect/build_cli.h) on a fake target
// repository (commit_test_util.h): its exit codes, and --out staging the
// entry without touching the cache.
#include "tools/hlo-bisect/build_cli.h"

#include <gtest/gtest.h>

#include <sstream>

#include "base/json.h"
#include "git/build_cache.h"
#include "tests/git/commit_test_util.h"

namespace trench {
namespace {

using hlo_bisect::testing::MakeFakeRepo;
using hlo_bisect::testing::TempDir;
namespace fs = std::filesystem;

struct CliResult {
  int code;
  std::string out, err;
};

CliResult RunCli(std::vector<std::string> args) {
  args.insert(args.begin(), "build");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  const int code =
      RunBuildCli(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

TEST(BuildCliTest, OutStagesTheEntryAndLeavesTheCacheAlone) {
  TempDir tmp;
  auto f = MakeFakeRepo(tmp / "repo", 1, {});
  ASSERT_TRUE(f.repo);
  CliResult r =
      RunCli({f.shas[1], "--repo", tmp / "repo", "--work", tmp / "work",
              "--cache", tmp / "cache", "--out", tmp / "out", "--build-cmd",
              hlo_bisect::testing::FakeBuildCommand()});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_FALSE(fs::exists(tmp / "cache/" + f.shas[1]));
  StatusOr<Json> j = ParseJson(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_TRUE(j->Find("built")->bool_value());
  EXPECT_FALSE(j->Find("infra")->bool_value());
  // The daemon's half: the staged entry installs.
  EXPECT_TRUE(
      hlo_bisect::InstallBuild(tmp / "out", f.shas[1], tmp / "cache").ok());
}

// The machine, not the commit, failed these builds: the compiler killed
// (the OOM killer), and a build stopped from outside (a neighbour on the
// same uid running `pkill ninja`, a shutdown): a real ninja interrupted
// mid-build, make's and the compiler driver's reports of a signal, a
// shell's 128 + N. Each is an infrastructure failure (exit 3), neither
// staged nor cached as "does not build". A compile error is a verdict,
// whatever its exit code.
TEST(BuildCliTest, ExitCodesTellAnInfraFailureFromACompileError) {
  TempDir tmp;
  auto f = MakeFakeRepo(tmp / "repo", 1, {});
  ASSERT_TRUE(f.repo);
  auto run = [&](const std::string& cmd) {
    return RunCli({f.shas[1], "--repo", tmp / "repo", "--work", tmp / "work",
                   "--out", tmp / "out", "--build-cmd", cmd});
  };
  const std::vector<std::string> infra = {
      "echo 'g++: fatal error: Killed signal terminated program cc1plus' "
      ">&2; exit 1",
      // ninja catches the signal, stops its jobs and exits 2.
      "mkdir -p \"$TRENCH_BUILD_DIR\" && "
      "printf 'rule s\\n  command = sleep 30\\nbuild x: s\\n' "
      "> \"$TRENCH_BUILD_DIR/b.ninja\" && "
      "{ ninja -f \"$TRENCH_BUILD_DIR/b.ninja\" & p=$!; sleep 0.5; "
      "kill -TERM $p; wait $p; }",
      "echo 'make: *** [Makefile:2: all] Terminated' >&2; exit 2",
      "echo 'c++: fatal error: Terminated signal terminated program "
      "cc1plus' >&2; exit 1",
      "sleep 30 & p=$!; kill -KILL $p; wait $p",
  };
  for (const std::string& cmd : infra) {
    CliResult r = run(cmd);
    EXPECT_EQ(r.code, 3) << cmd << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("\"infra\": true"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(tmp / "out/" + f.shas[1])) << cmd;
  }
  for (const char* cmd : {"echo 'a.cc:1: error: no' >&2; exit 1",
                          "echo 'a.cc:1: error: no' >&2; exit 2"}) {
    CliResult error = run(cmd);
    EXPECT_EQ(error.code, 1) << cmd << "\n" << error.out << error.err;
    EXPECT_TRUE(fs::exists(tmp / "out/" + f.shas[1] + "/result.json"));
  }
}

}  // namespace
}  // namespace trench
