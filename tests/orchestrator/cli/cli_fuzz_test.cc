// `trench fuzz` (cmd_fuzz.cc): a short campaign in-process prints its
// summary and writes summary.json; bad flags are usage errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "base/json.h"
#include "orchestrator/cli/cli.h"
#include "tests/orchestrator/cli/cli_test_util.h"

namespace trench::cli {
namespace {

namespace fs = std::filesystem;

int RunFuzz(const std::vector<std::string>& args, std::string* out,
            std::string* err) {
  const testing::CliRun r = testing::RunTrench(args);
  *out = r.out;
  *err = r.err;
  return r.code;
}

TEST(CliFuzzTest, ShortCampaign) {
  std::string t = ::testing::TempDir() + "trench-fuzz-XXXXXX";
  ASSERT_NE(mkdtemp(t.data()), nullptr);
  const fs::path dir = t;
  const std::string hlo_run = std::string(TRENCH_BINARY_DIR) + "/hlo-run";
  std::string out, err;
  int code = RunFuzz({"fuzz", "--max-programs", "6", "--budget", "5m", "--out",
                      (dir / "f").string(), "--hlo-run", hlo_run, "--seed", "3",
                      "--no-progress"},
                     &out, &err);
  ASSERT_EQ(code, 0) << err;
  EXPECT_NE(out.find("fuzzed 6 programs"), std::string::npos) << out;
  EXPECT_NE(out.find("summary: " + (dir / "f").string() + "/summary.json"),
            std::string::npos)
      << out;
  EXPECT_TRUE(fs::exists(dir / "f" / "summary.json"));

  code = RunFuzz({"fuzz", "--max-programs", "2", "--out", (dir / "g").string(),
                  "--hlo-run", hlo_run, "--no-progress", "--json"},
                 &out, &err);
  ASSERT_EQ(code, 0) << err;
  StatusOr<Json> j = ParseJson(out);
  ASSERT_TRUE(j.ok()) << out;
  EXPECT_EQ(*j->Find("programs")->GetInt64(), 2);

  EXPECT_EQ(RunFuzz({"fuzz", "--budget", "soon"}, &out, &err), kExitUsage);
  EXPECT_NE(err.find("trench: "), std::string::npos) << err;
  for (const char* bad : {"2/2", "1", "-1/2", "1/0", "a/b", "0/2x"}) {
    EXPECT_EQ(RunFuzz({"fuzz", "--shard", bad}, &out, &err), kExitUsage);
    EXPECT_NE(err.find("--shard: expected K/N with 0 <= K < N, got '" +
                       std::string(bad) + "'"),
              std::string::npos)
        << err;
  }
  EXPECT_EQ(RunFuzz({"fuzz", "--help"}, &out, &err), kExitOk);
  EXPECT_NE(out.find("usage: trench fuzz"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trench::cli
