// Every `trench` subcommand parses with base/flags.h: --help exits 0 with
// its usage, an unknown flag exits 2 naming it, --version works, and the
// commands that would start work refuse to run without arguments.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "base/flags.h"
#include "orchestrator/cli/cli.h"
#include "tests/base/in_empty_dir_test_util.h"
#include "tests/orchestrator/cli/cli_test_util.h"

namespace trench::cli {
namespace {

namespace fs = std::filesystem;

using testing::CliRun;

// Nothing listens at the server: a command that reached for the daemon
// says so.
CliRun RunTrench(const std::vector<std::string>& args) {
  return testing::RunTrench(args, {{"TRENCH_SERVER", "http://127.0.0.1:1"}});
}

using CliConventionsTest = trench::testing::InEmptyDirTest;

TEST_F(CliConventionsTest, EveryCommandHasHelpAndVersion) {
  for (const Command& c : Commands()) {
    const std::string name(c.name);
    CliRun r = RunTrench({name, "--help"});
    EXPECT_EQ(r.code, kExitOk) << name << "\n" << r.err;
    EXPECT_EQ(r.out.rfind("usage: trench " + name + " ", 0), 0u) << name << "\n"
                                                                 << r.out;
    EXPECT_NE(r.out.find(std::string(c.summary)), std::string::npos) << name;
    EXPECT_NE(r.out.find("-h, --help"), std::string::npos) << name;
    // `trench help NAME` says the same.
    EXPECT_EQ(RunTrench({"help", name}).out, r.out) << name;
    EXPECT_EQ(RunTrench({name, "-h"}).out, r.out) << name;

    r = RunTrench({name, "--version"});
    EXPECT_EQ(r.code, kExitOk) << name;
    EXPECT_EQ(r.out, std::string("trench ") + kTrenchVersion + "\n") << name;
  }
  CliRun top = RunTrench({"--version"});
  EXPECT_EQ(top.code, kExitOk);
  EXPECT_EQ(top.out, std::string("trench ") + kTrenchVersion + "\n");
  EXPECT_TRUE(NothingWritten());
}

TEST_F(CliConventionsTest, UnknownFlagsExitTwoNamingThem) {
  for (const Command& c : Commands()) {
    const std::string name(c.name);
    CliRun r = RunTrench({name, "--bogus"});
    EXPECT_EQ(r.code, kExitUsage) << name << "\n" << r.err;
    EXPECT_NE(r.err.find("trench: unknown flag '--bogus'"), std::string::npos)
        << name << "\n"
        << r.err;
    EXPECT_NE(r.err.find("usage: trench " + name), std::string::npos)
        << name << "\n"
        << r.err;
    EXPECT_EQ(r.out, "") << name;
  }
  EXPECT_TRUE(NothingWritten());
}

// serve, show, review, triage, fuzz and demo do work (or need an
// argument); without arguments they print their usage and exit 2. bugs,
// events (queries), report (reads stdin) and help run without arguments.
TEST_F(CliConventionsTest, NoArgumentsStartNoWork) {
  for (const char* name :
       {"serve", "show", "review", "triage", "fuzz", "demo"}) {
    CliRun r = RunTrench({name});
    EXPECT_EQ(r.code, kExitUsage) << name << "\n" << r.err << r.out;
    EXPECT_NE(r.err.find("usage: trench " + std::string(name)),
              std::string::npos)
        << name << "\n"
        << r.err;
    EXPECT_EQ(r.out, "") << name;
  }
  EXPECT_FALSE(fs::exists(dir_ / "findings"));
  EXPECT_TRUE(NothingWritten());
  CliRun help = RunTrench({"help"});
  EXPECT_EQ(help.code, kExitOk);
  EXPECT_EQ(help.out, UsageText());
}

TEST_F(CliConventionsTest, BadValuesNameTheFlag) {
  CliRun r = RunTrench({"fuzz", "--jobs", "many"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--jobs: expected an integer, got 'many'"),
            std::string::npos)
      << r.err;
  r = RunTrench({"triage", "case", "--max-tests"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--max-tests needs a value"), std::string::npos)
      << r.err;
  r = RunTrench({"demo", "--timeout", "0"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--timeout expects seconds > 0"), std::string::npos)
      << r.err;
  r = RunTrench({"triage", "case", "--hlo-run", "a", "--hloc", "b"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--hlo-run excludes --hloc/--tpusim"), std::string::npos)
      << r.err;
  EXPECT_TRUE(NothingWritten());
}

}  // namespace
}  // namespace trench::cli
