// `hlo-bisect commits` (tools/hlo-bisect/commit_cli.h) on a fake target
// repository (commit_test_util.h).
#include "tools/hlo-bisect/commit_cli.h"

#include <gtest/gtest.h>

#include <sstream>

#include "base/json.h"
#include "tests/git/commit_test_util.h"

namespace trench {
namespace {

using hlo_bisect::testing::FakeCommit;
using hlo_bisect::testing::MakeFakeRepo;
using hlo_bisect::testing::TempDir;

struct CliResult {
  int code;
  std::string out, err;
};

CliResult RunCli(std::vector<std::string> args) {
  args.insert(args.begin(), "commits");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  const int code =
      RunCommitBisectCli(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

class CommitCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    f_ = MakeFakeRepo(tmp_ / "repo", 21, {{6, FakeCommit{.set_bug = "on"}}});
    ASSERT_TRUE(f_.repo);
    ASSERT_TRUE(
        hlo_diff::WriteCase(tmp_ / "case", hlo_bisect::testing::AddCase())
            .ok());
  }
  std::vector<std::string> Args() {
    return {tmp_ / "case",
            "--repo",
            tmp_ / "repo",
            "--good",
            "main~21",
            "--bad",
            "main",
            "--work",
            tmp_ / "work",
            "--build-cmd",
            hlo_bisect::testing::FakeBuildCommand()};
  }

  TempDir tmp_;
  hlo_bisect::testing::FakeRepo f_;
};

TEST_F(CommitCliTest, JsonReportNamesTheConfirmedCulprit) {
  std::vector<std::string> args = Args();
  args.push_back("--json");
  CliResult r = RunCli(args);
  ASSERT_EQ(r.code, kCommitBisectConfirmed) << r.err << r.out;
  StatusOr<Json> j = ParseJson(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ(j->Find("culprit")->Find("sha")->string_value(), f_.shas[6]);
  EXPECT_TRUE(j->Find("confirmed")->bool_value());
  // Progress went to err; the cache defaults to WORK/cache.
  EXPECT_NE(r.err.find("hlo-bisect: build "), std::string::npos) << r.err;
  EXPECT_TRUE(
      std::filesystem::exists(tmp_ / "work/cache/" + f_.shas[6] + "/bin"));
}

TEST_F(CommitCliTest, TextReportAndNoConfirm) {
  std::vector<std::string> args = Args();
  args.push_back("--no-confirm");
  args.push_back("--cache=" + tmp_ / "other-cache");
  CliResult r = RunCli(args);
  EXPECT_EQ(r.code, kCommitBisectUnconfirmed) << r.err << r.out;
  EXPECT_NE(r.out.find("first bad commit: " + f_.shas[6] + " commit 6"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("confirmed by revert: no (not asked for)"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(std::filesystem::exists(tmp_ / "other-cache/" + f_.shas[6]));
}

TEST_F(CommitCliTest, UsageAndStartErrors) {
  EXPECT_EQ(RunCli({}).code, kCommitBisectError);
  CliResult help = RunCli({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("usage: hlo-bisect commits"), std::string::npos);
  CliResult no_repo = RunCli({tmp_ / "case", "--good", "a", "--bad", "b"});
  EXPECT_EQ(no_repo.code, kCommitBisectError);
  EXPECT_NE(no_repo.err.find("missing --repo"), std::string::npos);
  CliResult bad_flag = RunCli({tmp_ / "case", "--frobnicate", "1"});
  EXPECT_NE(bad_flag.err.find("unknown flag --frobnicate"), std::string::npos);
  // A revision that does not exist names libgit2's complaint.
  std::vector<std::string> args = Args();
  args[4] = "no-such-rev";
  CliResult bad_rev = RunCli(args);
  EXPECT_EQ(bad_rev.code, kCommitBisectError);
  EXPECT_NE(bad_rev.err.find("no-such-rev"), std::string::npos) << bad_rev.err;
  // Bad passes (commit 5 has no bug).
  args = Args();
  args[6] = "main~16";
  CliResult passes = RunCli(args);
  EXPECT_EQ(passes.code, kCommitBisectError);
  EXPECT_NE(passes.err.find("does not fail at bad"), std::string::npos)
      << passes.err;
}

}  // namespace
}  // namespace trench
