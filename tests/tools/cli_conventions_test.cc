// Every tool's command line follows base/flags.h: --help and -h exit 0
// with the usage on stdout, an unknown flag exits 2 naming it, --version
// prints the tool and version, and no arguments exit 2 with the usage on
// stderr, without doing any work (nothing is written).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "base/flags.h"
#include "compiler/driver/target_driver.h"
#include "tests/base/in_empty_dir_test_util.h"
#include "tools/hlo-bisect/hlo_bisect.h"
#include "tools/hlo-diff/hlo_diff.h"
#include "tools/hlo-eval/hlo_eval.h"
#include "tools/hlo-fmt/hlo_fmt.h"
#include "tools/hlo-fuzz/hlo_fuzz.h"
#include "tools/hlo-reduce/hlo_reduce.h"
#include "tools/hlo-run/hlo_run.h"
#include "tools/hloc/hloc.h"
#include "tools/tpusim/tpusim.h"

namespace trench {
namespace {

namespace fs = std::filesystem;

using ToolMain = int (*)(int, char**, std::ostream&, std::ostream&);

int HloRunMain(int argc, char** argv, std::ostream& out, std::ostream& err) {
  std::istringstream in;  // --serve would read it; nothing here does.
  return RunHloRun(argc, argv, in, out, err);
}

struct Tool {
  std::string name;  // As in its usage ("hlo-bisect commits").
  ToolMain run;
  std::vector<std::string> prefix;  // The subcommand, if any.
  std::string version;
};

std::vector<Tool> Tools() {
  const std::string v = std::string(" ") + kTrenchVersion + "\n";
  return {
      {"hloc", RunHloc, {}, std::string(hloc::kVersion) + "\n"},
      {"tpusim", RunTpusim, {}, "tpusim" + v},
      {"hlo-fmt", RunHloFmt, {}, "hlo-fmt" + v},
      {"hlo-run", HloRunMain, {}, "hlo-run" + v},
      {"hlo-eval", RunHloEval, {}, "hlo-eval" + v},
      {"hlo-diff", RunHloDiff, {}, "hlo-diff" + v},
      {"hlo-fuzz", RunHloFuzz, {}, "hlo-fuzz" + v},
      {"hlo-reduce", RunHloReduce, {}, "hlo-reduce" + v},
      {"hlo-bisect", RunHloBisect, {}, "hlo-bisect" + v},
      {"hlo-bisect commits", RunHloBisect, {"commits"}, "hlo-bisect" + v},
      {"hlo-bisect build", RunHloBisect, {"build"}, "hlo-bisect" + v},
  };
}

struct Result {
  int code;
  std::string out, err;
};

Result RunTool(const Tool& t, std::vector<std::string> args) {
  args.insert(args.begin(), t.prefix.begin(), t.prefix.end());
  args.insert(args.begin(), t.name.substr(0, t.name.find(' ')));
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  const int code = t.run(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

// Runs the tests in an empty directory, to see that nothing is written.
using CliConventionsTest = trench::testing::InEmptyDirTest;

TEST_F(CliConventionsTest, HelpExitsZeroWithTheUsageOnStdout) {
  for (const Tool& t : Tools()) {
    for (const char* flag : {"--help", "-h"}) {
      Result r = RunTool(t, {flag});
      EXPECT_EQ(r.code, 0) << t.name << " " << flag << "\n" << r.err;
      EXPECT_EQ(r.out.rfind("usage: " + t.name + " ", 0), 0u)
          << t.name << " " << flag << "\n"
          << r.out;
      EXPECT_NE(r.out.find("-h, --help"), std::string::npos) << t.name;
      EXPECT_EQ(r.err, "") << t.name;
    }
  }
  EXPECT_TRUE(NothingWritten());
}

TEST_F(CliConventionsTest, UnknownFlagExitsTwoNamingIt) {
  for (const Tool& t : Tools()) {
    for (const char* args : {"--bogus", "--bogus=1"}) {
      Result r = RunTool(t, {args, "x"});
      EXPECT_EQ(r.code, kFlagsExitUsage) << t.name << "\n" << r.err;
      EXPECT_NE(r.err.find(t.name + ": unknown flag --bogus; see --help"),
                std::string::npos)
          << t.name << "\n"
          << r.err;
      EXPECT_NE(r.err.find("usage: " + t.name), std::string::npos) << r.err;
      EXPECT_EQ(r.out, "") << t.name;
    }
  }
  EXPECT_TRUE(NothingWritten());
}

TEST_F(CliConventionsTest, VersionPrintsToolAndVersion) {
  for (const Tool& t : Tools()) {
    Result r = RunTool(t, {"--version"});
    EXPECT_EQ(r.code, 0) << t.name << "\n" << r.err;
    EXPECT_EQ(r.out, t.version) << t.name;
  }
}

TEST_F(CliConventionsTest, NoArgumentsExitTwoWithoutDoingWork) {
  for (const Tool& t : Tools()) {
    Result r = RunTool(t, {});
    EXPECT_EQ(r.code, kFlagsExitUsage) << t.name << "\n" << r.err << r.out;
    EXPECT_NE(r.err.find("usage: " + t.name + " "), std::string::npos)
        << t.name << "\n"
        << r.err;
    EXPECT_EQ(r.out, "") << t.name;
  }
  // hlo-fuzz used to start a 60 s campaign writing ./findings.
  EXPECT_FALSE(fs::exists(dir_ / "findings"));
  EXPECT_TRUE(NothingWritten());
}

TEST_F(CliConventionsTest, MissingValueAndBadNumberNameTheFlag) {
  const struct {
    std::string tool;
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {"hlo-eval", {"m.hlo", "--threads"}, "--threads needs a value"},
      {"hlo-eval", {"m.hlo", "--threads", "many"}, "--threads: expected"},
      {"hlo-run", {"m.hlo", "--seed=x"}, "--seed: expected an integer"},
      {"hloc", {"compile", "m.hlo", "-o"}, "-o needs a value"},
      {"hlo-fuzz", {"--jobs", "two"}, "--jobs: expected an integer"},
      {"hlo-fuzz", {"--budget", "soon"}, "--budget: expected a duration"},
      {"hlo-reduce", {"c", "--out", "o", "--max-tests=-2"}, "--max-tests"},
      {"hlo-diff", {"c", "--seed", "-1"}, "--seed: expected an integer"},
      {"hlo-bisect commits", {"c", "--run-timeout", "0"}, "--run-timeout"},
  };
  for (const auto& c : cases) {
    for (const Tool& t : Tools()) {
      if (t.name != c.tool) continue;
      Result r = RunTool(t, c.args);
      EXPECT_EQ(r.code, kFlagsExitUsage) << c.tool << "\n" << r.err;
      EXPECT_NE(r.err.find(c.message), std::string::npos) << c.tool << "\n"
                                                          << r.err;
    }
  }
  EXPECT_TRUE(NothingWritten());
}

}  // namespace
}  // namespace trench
