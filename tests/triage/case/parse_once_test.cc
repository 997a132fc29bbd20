// A case's module is parsed once per tool run: ReadCase hands the parsed
// module out, and the verdict, the target runner and Diff take it instead
// of parsing the text again (CaseModuleParseCount counts the parses).
#include <gtest/gtest.h>

#include "tests/triage/case/hlo_diff_test_util.h"
#include "triage/case/verdict.h"

namespace trench::hlo_diff {
namespace {

using testing::AddCase;
using testing::RealTarget;
using testing::TempDir;

TEST(ParseOnceTest, HloDiffRunParsesTheCaseOnce) {
  TempDir tmp;
  ASSERT_TRUE(WriteCase(tmp / "c", AddCase()).ok());
  // What hlo-diff CASE_DIR does: ReadCase, then Diff with its module.
  const int64_t before = CaseModuleParseCount();
  std::unique_ptr<HloModule> module;
  StatusOr<Case> c = ReadCase(tmp / "c", &module);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_NE(module, nullptr);
  StatusOr<Verdict> v =
      Diff(*c, *module, RealTarget(TargetMode::kHloRun), tmp / "work");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->status, VerdictStatus::kPass) << v->ToJson().DumpPretty();
  EXPECT_EQ(CaseModuleParseCount() - before, 1);
}

TEST(ParseOnceTest, VerdictAndRunnerTakeTheParsedModule) {
  TempDir tmp;
  std::unique_ptr<HloModule> module;
  StatusOr<Case> c = MakeCase(testing::kAddModule, AddCase().inputs, {},
                              Json::MakeObject(), &module);
  ASSERT_TRUE(c.ok() && module != nullptr);
  TargetRunner runner(RealTarget(TargetMode::kServe));
  const int64_t before = CaseModuleParseCount();
  for (int i = 0; i < 2; ++i) {
    StatusOr<Verdict> v = ComputeVerdict(*c, *module, runner, tmp / "work");
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(v->status, VerdictStatus::kPass);
    StatusOr<TargetResult> r = runner.Run(*c, *module, tmp / "work");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->outputs.size(), 2u);
  }
  EXPECT_EQ(CaseModuleParseCount(), before);
  // The text-only entry points parse once per call.
  StatusOr<Verdict> v = ComputeVerdict(*c, runner, tmp / "work");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(CaseModuleParseCount() - before, 1);
}

}  // namespace
}  // namespace trench::hlo_diff
