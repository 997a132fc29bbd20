// `trench run-sandboxed DIR` (cmd_run_sandboxed.cc), the command a Slurm
// job runs on its node: a request runs and its result is written; a
// missing, malformed or hostile request is refused on stderr with exit 1
// and leaves no result behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/scoped_temp_dir.h"
#include "orchestrator/cli/cli.h"
#include "sandbox/run_files.h"
#include "tests/orchestrator/cli/cli_test_util.h"

namespace trench::cli {
namespace {

namespace fs = std::filesystem;

// A whole request whose wall limit is a word.
std::string BadLimit() {
  sandbox::Options o;
  o.argv = {"/bin/true"};
  o.work_dir = "/tmp";
  Json j = sandbox::OptionsToJson(o);
  j["limits"]["wall_seconds"] = "soon";
  return j.Dump();
}

class CliRunSandboxedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<ScopedTempDir> d =
        ScopedTempDir::Make(::testing::TempDir(), "run-sandboxed", 0755);
    ASSERT_TRUE(d.ok());
    dir_ = std::make_unique<ScopedTempDir>(std::move(*d));
  }
  void Write(const std::string& text) {
    std::ofstream(dir_->path() + "/request.json") << text;
  }
  std::unique_ptr<ScopedTempDir> dir_;
};

TEST_F(CliRunSandboxedTest, ARequestRunsAndItsResultIsWritten) {
  sandbox::Options o;
  o.argv = {"/bin/sh", "-c", "echo hi; exit 4"};
  o.work_dir = dir_->path() + "/work";
  fs::create_directories(o.work_dir);
  o.limits.wall_seconds = 30;
  ASSERT_TRUE(sandbox::WriteRunRequest(dir_->path(), o).ok());
  const testing::CliRun r = testing::RunTrench({"run-sandboxed", dir_->path()});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  StatusOr<sandbox::Result> result =
      sandbox::ReadRunResult(dir_->path(), o.limits);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->exit_code, 4);
  EXPECT_EQ(result->stdout_data, "hi\n");
}

TEST_F(CliRunSandboxedTest, BadRequestsAreRefusedByNameAndLeaveNoResult) {
  struct Bad {
    std::string text, says;
  };
  for (const Bad& b : std::vector<Bad>{
           {"", "request.json: 1:1: expected a value"},
           {"{\"argv\": [\"/bin/true\"", "request.json: 1:22: expected"},
           {"[1, 2]", "request.json: request: expected an object"},
           {R"({"argv": "/bin/true"})", "request.json: "},
           {R"({"argv": [], "work_dir": "/tmp"})", "request.json: "},
           {BadLimit(),
            "request.json: request.limits.wall_seconds: "
            "expected a non-negative number"},
       }) {
    Write(b.text);
    const testing::CliRun r =
        testing::RunTrench({"run-sandboxed", dir_->path()});
    EXPECT_EQ(r.code, 1) << b.text;
    EXPECT_NE(r.err.find(b.says), std::string::npos) << b.text << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir_->path() + "/result.json")) << b.text;
  }
  fs::remove(dir_->path() + "/request.json");
  const testing::CliRun missing =
      testing::RunTrench({"run-sandboxed", dir_->path()});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("request.json"), std::string::npos) << missing.err;
  EXPECT_NE(testing::RunTrench({"run-sandboxed"}).code, kExitOk);
}

}  // namespace
}  // namespace trench::cli
