// Every `trench` subcommand parses with base/flags.h: --help exits 0 with
// its usage, an unknown flag exits 2 naming it, --version works, and the
// commands that would start work refuse to run without arguments.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "base/flags.h"
#include "orchestrator/cli/cli.h"

namespace trench::cli {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string out, err;
};

Result RunTrench(const std::vector<std::string>& args) {
  std::istringstream in;
  std::ostringstream out, err;
  Context ctx;
  ctx.in = &in;
  ctx.out = &out;
  ctx.err = &err;
  ctx.env["TRENCH_SERVER"] = "http://127.0.0.1:1";  // Nothing listens.
  const int code = RunCli(args, std::move(ctx));
  return {code, out.str(), err.str()};
}

class CliConventionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    old_ = fs::current_path();
    dir_ = fs::path(::testing::TempDir()) /
           ("trench_cli_conventions_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::current_path(dir_);
  }
  void TearDown() override {
    fs::current_path(old_);
    fs::remove_all(dir_);
  }

  fs::path old_, dir_;
};

TEST_F(CliConventionsTest, EveryCommandHasHelpAndVersion) {
  for (const Command& c : Commands()) {
    const std::string name(c.name);
    Result r = RunTrench({name, "--help"});
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
  Result top = RunTrench({"--version"});
  EXPECT_EQ(top.code, kExitOk);
  EXPECT_EQ(top.out, std::string("trench ") + kTrenchVersion + "\n");
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(CliConventionsTest, UnknownFlagsExitTwoNamingThem) {
  for (const Command& c : Commands()) {
    const std::string name(c.name);
    Result r = RunTrench({name, "--bogus"});
    EXPECT_EQ(r.code, kExitUsage) << name << "\n" << r.err;
    EXPECT_NE(r.err.find("trench: unknown flag '--bogus'"), std::string::npos)
        << name << "\n"
        << r.err;
    EXPECT_NE(r.err.find("usage: trench " + name), std::string::npos)
        << name << "\n"
        << r.err;
    EXPECT_EQ(r.out, "") << name;
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

// serve, show, review, triage, fuzz and demo do work (or need an
// argument); without arguments they print their usage and exit 2. bugs,
// events (queries), report (reads stdin) and help run without arguments.
TEST_F(CliConventionsTest, NoArgumentsStartNoWork) {
  for (const char* name :
       {"serve", "show", "review", "triage", "fuzz", "demo"}) {
    Result r = RunTrench({name});
    EXPECT_EQ(r.code, kExitUsage) << name << "\n" << r.err << r.out;
    EXPECT_NE(r.err.find("usage: trench " + std::string(name)),
              std::string::npos)
        << name << "\n"
        << r.err;
    EXPECT_EQ(r.out, "") << name;
  }
  EXPECT_FALSE(fs::exists(dir_ / "findings"));
  EXPECT_TRUE(fs::is_empty(dir_));
  Result help = RunTrench({"help"});
  EXPECT_EQ(help.code, kExitOk);
  EXPECT_EQ(help.out, UsageText());
}

TEST_F(CliConventionsTest, BadValuesNameTheFlag) {
  Result r = RunTrench({"fuzz", "--jobs", "many"});
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
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace
}  // namespace trench::cli
