// KeepRunOutputs (step_util.h): the failing runs' target outputs go to
// <var>/runs/<run id>/out/, matched to the runs just recorded, in order.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/sha256.h"
#include "orchestrator/pipeline/step_util.h"
#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator {
namespace {

namespace fs = std::filesystem;

class KeepRunOutputsTest : public testing::StoreTest {};

TEST_F(KeepRunOutputsTest, FailingRunsKeepTheirOutputs) {
  auto store = OpenStore(&clock_);
  ASSERT_TRUE(store);
  const std::string sha = Sha256Hex("case");
  ASSERT_TRUE(store->PutCase(sha, "", Json::MakeObject()).ok());
  auto bug = store->CreateBug({"s", "t", sha, Json::MakeObject()}, "test",
                              Json::MakeObject());
  ASSERT_TRUE(bug.ok());
  DaemonPaths paths(dir_ + "/var");
  StepContext ctx;
  ctx.store = store.get();
  ctx.paths = &paths;
  std::vector<hlo_diff::Verdict> verdicts(3);
  verdicts[0].status = hlo_diff::VerdictStatus::kMismatch;
  verdicts[1].status = hlo_diff::VerdictStatus::kPass;
  verdicts[2].status = hlo_diff::VerdictStatus::kNanMismatch;
  std::vector<std::string> kept;
  std::vector<int64_t> runs;
  for (int i = 0; i < 3; ++i) {
    kept.push_back(dir_ + "/keep" + std::to_string(i));
    fs::create_directories(kept.back() + "/out");
    std::ofstream(kept.back() + "/out/0.npy") << "run" << i;
    std::ofstream(kept.back() + "/out/report.json") << "{}";
    auto run = store->AddRun(sha, *bug, "c", Json::MakeObject(), 0);
    ASSERT_TRUE(run.ok());
    runs.push_back(*run);
  }
  KeepRunOutputs(ctx, *bug, verdicts, kept);
  auto out = [&](int i) {
    return dir_ + "/var/runs/" + std::to_string(runs[i]) + "/out/";
  };
  std::ifstream first(out(0) + "0.npy");
  std::string text;
  first >> text;
  EXPECT_EQ(text, "run0");
  EXPECT_FALSE(fs::exists(out(0) + "report.json"));  // Only .npy files.
  EXPECT_FALSE(fs::exists(out(1)));                  // A pass keeps none.
  EXPECT_TRUE(fs::exists(out(2) + "0.npy"));
}

}  // namespace
}  // namespace trench::orchestrator
