// The built-in drafter on a culprit that changes one rule in the localized
// pass and in the code generator's copy (tests/agents/coverage_fixture.h),
// through a real repository: culprit_diff, read_source and try_patch run
// on it with git/patch_apply.h. The witness only exercises the code
// generator, so reverting its copy alone passes: that partial revert must
// be flagged, completed with the pass's hunk, and ranked after a candidate
// that also covers the localized file.
#include <gtest/gtest.h>

#include <functional>

#include "agents/builtin_brains.h"
#include "tests/agents/coverage_fixture.h"
#include "tests/agents/fake_toolbox.h"

namespace trench::agents {
namespace {

using testing::CulpritRepo;
using testing::FailResult;
using testing::kCodegenFile;
using testing::kPassFile;
using testing::Obj;
using testing::OkResult;

class DrafterCoverageTest : public ::testing::Test {
 protected:
  // The repro passes when head + candidate has the codegen copy reverted
  // (and, when `need_pass`, the pass's rule too).
  Json TryPatch(const Json& a, bool need_pass) {
    return testing::TryPatchAnswer(
        ApplyPatchOnto(*repo_.repo, repo_.head, a.Find("diff")->string_value(),
                       "try", ""),
        [&](const std::string& sha) {
          const std::string codegen =
              *ReadFileAt(*repo_.repo, sha, kCodegenFile);
          const std::string pass = *ReadFileAt(*repo_.repo, sha, kPassFile);
          return codegen.find("c > 0") != std::string::npos &&
                 (!need_pass || pass.find("c > 0") != std::string::npos);
        });
  }

  Json Draft(bool need_pass) {
    testing::FakeToolBox tools("patch_drafter");
    tools.On("culprit_diff", [this](const Json& a) {
      const Json* path = a.Find("path");
      StatusOr<std::string> d =
          DiffOfCommit(*repo_.repo, a.Find("commit")->string_value(),
                       path ? path->string_value() : "");
      if (!d.ok()) return FailResult(d.status().message());
      return OkResult(Obj({{"diff", *d}, {"files", Json::MakeArray()}}));
    });
    tools.On("read_source", [this](const Json& a) {
      StatusOr<std::string> text =
          ReadFileAt(*repo_.repo, a.Find("commit")->string_value(),
                     a.Find("path")->string_value());
      if (!text.ok()) return FailResult(text.status().message());
      return testing::SourcePage(SplitLines(*text), a, true);
    });
    tools.On("try_patch", [this, need_pass](const Json& a) {
      return OkResult(TryPatch(a, need_pass));
    });
    tools.On("submit_patch", [this](const Json& a) {
      submitted_.push_back(a);
      return OkResult(
          Obj({{"candidate", static_cast<int64_t>(submitted_.size())}}));
    });
    const Json task =
        Obj({{"bug", 7},
             {"case", testing::CaseId("w")},
             {"localization", Obj({{"findings", Obj({{"pass", "algsimp"}})}})},
             {"culprit", Obj({{"sha", repo_.culprit}, {"summary", "fold"}})},
             {"head", repo_.head}});
    StatusOr<Json> claim =
        (*MakeBuiltinBrain("patch_drafter"))->Run(task, tools);
    EXPECT_TRUE(claim.ok()) << claim.status().ToString();
    return claim.ok() ? *claim : Json();
  }

  static const Json& Coverage(const Json& c) { return *c.Find("coverage"); }
  static bool Partial(const Json& c) {
    return Coverage(c).Find("partial")->bool_value();
  }

  CulpritRepo repo_;
  std::vector<Json> submitted_;
};

TEST_F(DrafterCoverageTest, TheCodegenOnlyRevertIsFlaggedAndCompleted) {
  const Json claim = Draft(/*need_pass=*/false);
  const Json::Array& list = claim.Find("candidates")->array();
  // revert_commit, ddmin's codegen-only partial_revert, and that one
  // completed with the pass's hunk.
  ASSERT_EQ(list.size(), 3u) << claim.DumpPretty();
  const Json* codegen_only = nullptr;
  for (const Json& c : list) {
    const bool covers =
        c.Find("diff")->string_value().find(kPassFile) != std::string::npos;
    EXPECT_EQ(Partial(c), !covers) << c.DumpPretty();
    if (!covers) codegen_only = &c;
  }
  ASSERT_NE(codegen_only, nullptr);
  EXPECT_EQ(codegen_only->Find("strategy")->string_value(), "partial_revert");
  EXPECT_NE(Coverage(*codegen_only)
                .Find("reason")
                ->string_value()
                .find(std::string(kPassFile) + ":7"),
            std::string::npos);
  // The smallest diff is the flagged one, yet it is listed last; the
  // first is the completed revert of the rule (the note left alone).
  EXPECT_EQ(&list.back(), codegen_only);
  const Json& first = list.front();
  EXPECT_EQ(first.Find("strategy")->string_value(), "partial_revert");
  EXPECT_EQ(first.Find("diff")->string_value().find("docs/notes.md"),
            std::string::npos);
  EXPECT_TRUE(Coverage(first).Find("touches_localized")->bool_value());
  EXPECT_EQ(submitted_.size(), 3u);
}

TEST_F(DrafterCoverageTest, ARevertThatCoversEverythingIsNotFlagged) {
  // The witness needs both: only reverts that hold the whole rule pass.
  const Json claim = Draft(/*need_pass=*/true);
  const Json::Array& list = claim.Find("candidates")->array();
  ASSERT_FALSE(list.empty()) << claim.DumpPretty();
  for (const Json& c : list) {
    EXPECT_FALSE(Partial(c)) << c.DumpPretty();
    EXPECT_NE(c.Find("diff")->string_value().find(kPassFile),
              std::string::npos);
    EXPECT_NE(c.Find("diff")->string_value().find(kCodegenFile),
              std::string::npos);
  }
}

}  // namespace
}  // namespace trench::agents
