// The built-in patch drafter against an in-memory repository: the culprit's
// diff is served by culprit_diff, the head's files by read_source (in
// pages, as the real tool does), and try_patch applies a candidate to the
// head's files and asks the test whether the bug is gone.
#include <gtest/gtest.h>

#include <map>

#include "agents/builtin_brains.h"
#include "agents/patch_strategies.h"
#include "git/unified_diff.h"
#include "tests/agents/fake_toolbox.h"

namespace trench::agents {
namespace {

using testing::FakeToolBox;
using testing::Obj;
using testing::OkResult;
using Files = std::map<std::string, std::vector<std::string>>;

constexpr char kCse[] = "compiler/passes/cse.cc";
constexpr char kDoc[] = "docs/notes.md";

struct Change {
  size_t start, count;
  std::vector<std::string> with;
};

// The diff of `changes` (sorted, apart) to `base`, as git would write it.
FileDiff MakeFileDiff(const std::string& path,
                      const std::vector<std::string>& base,
                      const std::vector<Change>& changes) {
  FileDiff f;
  f.old_path = f.new_path = path;
  for (const Change& c : changes) {
    f.hunks.push_back(
        ReplaceLines(path, base, c.start, c.count, c.with).files[0].hunks[0]);
  }
  RenumberNewSide(&f);
  return f;
}

std::vector<std::string> Code(int n) {
  std::vector<std::string> v;
  for (int i = 1; i <= n; ++i)
    v.push_back("  int v" + std::to_string(i) + " = " + std::to_string(i) +
                ";");
  return v;
}

class FakeRepo {
 public:
  Files head;
  UnifiedDiff culprit;
  std::function<bool(const Files&)> fixed;

  // The culprit changes only `path` (`changes` to `base`); the head holds
  // the culprit's version of it.
  void SetCulprit(const std::string& path, const std::vector<std::string>& base,
                  const std::vector<Change>& changes) {
    culprit.files = {MakeFileDiff(path, base, changes)};
    head[path] = *ApplyHunks(culprit.files[0], base);
  }

  // The bug is gone when line `index` (0-based) of `path` reads `text`.
  void FixedWhen(const std::string& path, size_t index, std::string text) {
    fixed = [path, index, text = std::move(text)](const Files& f) {
      return f.at(path)[index] == text;
    };
  }

  void Install(FakeToolBox& tools) {
    tools.On("culprit_diff", [this](const Json& a) {
      UnifiedDiff d;
      Json files = Json::MakeArray();
      const Json* path = a.Find("path");
      for (const FileDiff& f : culprit.files) {
        if (path && f.path().rfind(path->string_value(), 0) != 0) continue;
        d.files.push_back(f);
        files.push_back(f.path());
      }
      return OkResult(Obj({{"diff", RenderUnifiedDiff(d)}, {"files", files}}));
    });
    tools.On("read_source", [this](const Json& a) {
      auto it = head.find(a.Find("path")->string_value());
      if (it == head.end()) return testing::FailResult("no such file");
      return testing::SourcePage(it->second, a);
    });
    tools.On("try_patch", [this](const Json& a) {
      StatusOr<UnifiedDiff> d =
          ParseUnifiedDiff(a.Find("diff")->string_value());
      EXPECT_TRUE(d.ok()) << d.status().ToString();
      Files files = head;
      for (const FileDiff& f : d->files) {
        StatusOr<std::vector<std::string>> got = ApplyHunks(f, files[f.path()]);
        if (!got.ok()) {
          return OkResult(Obj({{"applies", false},
                               {"built", false},
                               {"repro_status", ""},
                               {"message", got.status().message()}}),
                          5);
        }
        files[f.path()] = *got;
      }
      return OkResult(Obj({{"applies", true},
                           {"built", true},
                           {"repro_status", fixed(files) ? "pass" : "mismatch"},
                           {"message", ""}}),
                      60);
    });
    tools.On("submit_patch", [this](const Json& a) {
      submitted.push_back(a);
      return OkResult(
          Obj({{"candidate", static_cast<int64_t>(submitted.size())}}));
    });
  }
  std::vector<Json> submitted;
};

Json Task(const std::string& pass, int max_tries = 16) {
  return Obj({{"bug", 7},
              {"case", testing::CaseId("c")},
              {"localization", Obj({{"findings", Obj({{"pass", pass}})}})},
              {"culprit", Obj({{"sha", std::string(40, 'c')},
                               {"summary", "cse: a fast path"}})},
              {"head", std::string(40, 'h')},
              {"max_tries", max_tries}});
}

// Installs `repo` in `tools` and runs the drafter on `task`.
Json Draft(FakeRepo& repo, const Json& task, FakeToolBox& tools) {
  repo.Install(tools);
  StatusOr<Json> claim = (*MakeBuiltinBrain("patch_drafter"))->Run(task, tools);
  EXPECT_TRUE(claim.ok()) << claim.status().ToString();
  return claim.ok() ? *claim : Json();
}

TEST(BuiltinDrafterTest, FullRevertOfTheLocalizedFileOnAShiftedHead) {
  const std::vector<std::string> base = Code(450);
  FakeRepo repo;
  repo.culprit.files = {
      MakeFileDiff(kCse, base, {{419, 1, {"  int v420 = 0;"}}}),
      MakeFileDiff(kDoc, {"a", "b"}, {{1, 1, {"B"}}})};
  repo.head[kCse] = *ApplyHunks(repo.culprit.files[0], base);
  // A later commit added three lines on top.
  repo.head[kCse].insert(repo.head[kCse].begin(), {"// x", "// y", "// z"});
  repo.head[kDoc] = {"a", "B"};
  repo.fixed = [](const Files& f) {
    return f.at(kCse)[3 + 419] == "  int v420 = 420;";
  };
  FakeToolBox tools("patch_drafter");
  Json claim = Draft(repo, Task("cse"), tools);
  ASSERT_EQ(claim["candidates"].size(), 1u) << claim.DumpPretty();
  Json& c = claim["candidates"].mutable_array()[0];
  EXPECT_EQ(c["strategy"], Json("revert_file"));
  EXPECT_EQ(c["candidate"], Json(1));
  EXPECT_EQ(c["changed_lines"], Json(2));
  EXPECT_EQ(c["diff"].string_value().find(kDoc), std::string::npos);
  EXPECT_NE(c["diff"].string_value().find("@@ -420,7 +420,7 @@"),
            std::string::npos)
      << c["diff"].string_value();
  EXPECT_EQ(tools.Args("culprit_diff", 1)["path"], Json(kCse));
  EXPECT_EQ(tools.Count("try_patch"), 1);
  EXPECT_GE(tools.Count("read_source"), 2);  // 453 lines: two pages.
  EXPECT_EQ(repo.submitted[0]["strategy"], Json("revert_file"));
}

TEST(BuiltinDrafterTest, PartialRevertFindsTheOneBadHunk) {
  const std::vector<std::string> base = Code(60);
  FakeRepo repo;
  repo.SetCulprit(kCse, base,
                  {{4, 1, {"  int v5 = 50;"}},
                   {19, 1, {"  int v20 = 200;"}},
                   {34, 1, {"  int v35 = 0;"}},
                   {49, 1, {"  int v50 = 500;"}}});
  repo.FixedWhen(kCse, 34, "  int v35 = 35;");
  FakeToolBox tools("patch_drafter");
  Json claim = Draft(repo, Task("cse"), tools);
  ASSERT_EQ(claim["candidates"].size(), 2u) << claim.DumpPretty();
  Json& best = claim["candidates"].mutable_array()[0];
  EXPECT_EQ(best["strategy"], Json("partial_revert"));
  EXPECT_EQ(best["changed_lines"], Json(2));
  EXPECT_NE(best["diff"].string_value().find("+  int v35 = 35;"),
            std::string::npos);
  EXPECT_EQ(claim["candidates"].mutable_array()[1]["strategy"],
            Json("revert_file"));
  EXPECT_LE(tools.Count("try_patch"), 8);
}

// A culprit that added helper2() and flipped a comparison: the bug is the
// flipped comparison; helper2() must stay (so no revert passes).
FakeRepo FlippedComparison() {
  std::vector<std::string> base = Code(30);
  base[14] = "  if (lo < hi) {";
  base[16] = "  }";
  FakeRepo repo;
  repo.SetCulprit(kCse, base, {{14, 1, {"  helper2();", "  if (lo > hi) {"}}});
  repo.fixed = [](const Files& f) {
    const auto& l = f.at(kCse);
    return l[14] == "  helper2();" && l[15] == "  if (lo < hi) {";
  };
  return repo;
}

TEST(BuiltinDrafterTest, TemplateFixesAFlippedComparison) {
  FakeRepo repo = FlippedComparison();
  FakeToolBox tools("patch_drafter");
  Json claim = Draft(repo, Task("cse"), tools);
  ASSERT_EQ(claim["candidates"].size(), 1u) << claim.DumpPretty();
  Json& c = claim["candidates"].mutable_array()[0];
  EXPECT_EQ(c["strategy"], Json("fix_template"));
  EXPECT_NE(c["detail"].string_value().find("flip_comparison"),
            std::string::npos);
  EXPECT_EQ(c["changed_lines"], Json(2));
  EXPECT_EQ(repo.submitted.size(), 1u);
}

TEST(BuiltinDrafterTest, NothingWorksGivesAReasonWithinTheBudget) {
  const std::vector<std::string> base = Code(40);
  FakeRepo repo;
  repo.SetCulprit(kCse, base, {{9, 1, {"  if (x < 3) return;"}}});
  repo.fixed = [](const Files&) { return false; };
  FakeToolBox tools("patch_drafter");
  Json claim = Draft(repo, Task("cse", 5), tools);
  EXPECT_EQ(claim["candidates"].size(), 0u);
  EXPECT_EQ(tools.Count("try_patch"), 5);
  EXPECT_EQ(tools.Count("submit_patch"), 0);
  EXPECT_NE(claim["reason"].string_value().find("none of 5 candidates"),
            std::string::npos);
  EXPECT_NE(claim["notes"].Dump().find("budget spent"), std::string::npos);
}

TEST(BuiltinDrafterTest, UnknownPassFallsBackToTheWholeCommit) {
  const std::vector<std::string> base = Code(20);
  FakeRepo repo;
  repo.SetCulprit(kCse, base, {{9, 1, {"  int v10 = 0;"}}});
  repo.FixedWhen(kCse, 9, "  int v10 = 10;");
  FakeToolBox tools("patch_drafter");
  Json claim = Draft(repo, Task("dce"), tools);
  ASSERT_EQ(claim["candidates"].size(), 1u) << claim.DumpPretty();
  EXPECT_EQ(claim["candidates"].mutable_array()[0]["strategy"],
            Json("revert_commit"));
  EXPECT_NE(claim["notes"].Dump().find("no file of the localized pass 'dce'"),
            std::string::npos);

  StatusOr<Json> bad =
      (*MakeBuiltinBrain("patch_drafter"))->Run(Obj({}), tools);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "task: culprit.sha: required");
}

// A reviewer's hint naming a strategy: it goes first, and the claim says
// the drafter saw the hint and what it changed.
TEST(BuiltinDrafterTest, AHintNamingAStrategyGoesFirst) {
  FakeRepo repo = FlippedComparison();
  // Without a hint, the revert comes first.
  FakeToolBox plain_tools("patch_drafter");
  Json plain = Draft(repo, Task("cse"), plain_tools);
  EXPECT_EQ(plain["tries"].mutable_array()[0]["strategy"], Json("revert_file"));
  EXPECT_EQ(plain.Find("hints"), nullptr);

  Json task = Task("cse");
  task["hints"] = Json::MakeArray();
  task["hints"].push_back("the revert loses helper2(); try fix_template");
  FakeRepo again = FlippedComparison();
  FakeToolBox tools("patch_drafter");
  Json claim = Draft(again, task, tools);
  // Exhaustive templates first: every passing one is a candidate.
  ASSERT_GE(claim["candidates"].size(), 1u) << claim.DumpPretty();
  EXPECT_EQ(claim["tries"].mutable_array()[0]["strategy"],
            Json("fix_template"));
  EXPECT_EQ(claim["candidates"].mutable_array()[0]["strategy"],
            Json("fix_template"));
  EXPECT_EQ(claim["hints"]["seen"].array()[0],
            Json("the revert loses helper2(); try fix_template"));
  EXPECT_EQ(claim["hints"]["applied"].array()[0], Json("first: fix_template"));
  EXPECT_NE(claim["notes"].Dump().find("reviewer's hint: the revert loses"),
            std::string::npos);
}

// A hint naming one of the culprit's files: the file strategies work on it
// (here instead of the whole commit, which an unknown pass would revert).
TEST(BuiltinDrafterTest, AHintNamingAFileSelectsIt) {
  const std::vector<std::string> base = Code(20);
  FakeRepo repo;
  repo.culprit.files = {MakeFileDiff(kCse, base, {{9, 1, {"  int v10 = 0;"}}}),
                        MakeFileDiff(kDoc, {"a", "b"}, {{1, 1, {"B"}}})};
  repo.head[kCse] = *ApplyHunks(repo.culprit.files[0], base);
  repo.head[kDoc] = {"a", "B"};
  repo.FixedWhen(kCse, 9, "  int v10 = 10;");
  Json task = Task("dce");
  task["hints"] = Json::MakeArray();
  task["hints"].push_back("only cse.cc is wrong");
  FakeToolBox tools("patch_drafter");
  Json claim = Draft(repo, task, tools);
  ASSERT_EQ(claim["candidates"].size(), 1u) << claim.DumpPretty();
  Json& c = claim["candidates"].mutable_array()[0];
  EXPECT_EQ(c["strategy"], Json("revert_file"));
  EXPECT_EQ(c["diff"].string_value().find(kDoc), std::string::npos);
  EXPECT_EQ(claim["hints"]["applied"].array()[0],
            Json(std::string("files: ") + kCse));
}

}  // namespace
}  // namespace trench::agents
