// The built-in drafter on the real zoo bugs: a repository made by the test
// holds the real source file(s) a zoo bug patches (from TRENCH_SOURCE_DIR);
// the culprit commit brings the bug's bug.patch plus an unrelated hunk in
// another file, and a later commit shifts the patched file's lines. The
// ToolBox's culprit_diff / read_source / try_patch run on the repository
// through git/patch_apply.h; try_patch "passes" when head + candidate has
// the original source (with the later commit's change). Given the pass of
// the bug's meta.json as the localization, the drafter must propose the
// revert of the culprit's hunks in that file, and nothing else. One test
// (07-cse-compare-direction) checks the exact diff and the review branch.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "agents/builtin_brains.h"
#include "agents/sandbox_toolbox.h"
#include "git/patch_apply.h"
#include "git/unified_diff.h"
#include "tests/agents/fake_toolbox.h"
#include "tests/triage/case/embedded_target.h"

namespace trench::agents {
namespace {

namespace fs = std::filesystem;
using hlo_bisect::GitRepo;
using testing::FailResult;
using testing::Obj;
using testing::OkResult;

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> ZooBugs() {
  std::vector<std::string> bugs;
  const fs::path zoo = fs::path(TRENCH_SOURCE_DIR) / "tests" / "bugzoo";
  for (const auto& e : fs::directory_iterator(zoo)) {
    if (fs::exists(e.path() / "bug.patch")) {
      bugs.push_back(e.path().filename().string());
    }
  }
  std::sort(bugs.begin(), bugs.end());
  return bugs;
}

class DrafterZooTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/drafter-zoo-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    repo_ = GitRepo::Init(dir_ + "/repo").value();
    const fs::path bug =
        fs::path(TRENCH_SOURCE_DIR) / "tests/bugzoo" / GetParam();
    StatusOr<Json> meta = ParseJson(ReadText(bug / "meta.json"));
    ASSERT_TRUE(meta.ok()) << meta.status().ToString();
    pass_ = (*meta)["pass"].string_value();
    std::vector<hlo_bisect::FileChange> original = {{"README.md", "target\n"}};
    for (const Json& f : (*meta)["files"].array()) {
      files_.push_back(f.string_value());
      original.push_back(
          {f.string_value(),
           ReadText(fs::path(TRENCH_SOURCE_DIR) / f.string_value())});
    }
    ASSERT_FALSE(files_.empty());
    const std::string base =
        *repo_->CommitFiles("", original, "base", "refs/heads/main");
    // The zoo patch, applied with git_patch itself.
    StatusOr<std::string> patched =
        ApplyPatchOnto(*repo_, base, ReadText(bug / "bug.patch"), "tmp", "");
    if (!patched.ok()) {  // BugZooTest.PatchesApplyToTodaysTree says so.
      GTEST_SKIP() << "bug.patch does not apply to today's tree: "
                   << patched.status().ToString();
    }
    std::vector<hlo_bisect::FileChange> culprit = {
        {"README.md", "target\nwith a faster compiler\n"}};
    for (const std::string& f : files_) {
      culprit.push_back({f, *ReadFileAt(*repo_, *patched, f)});
    }
    culprit_ =
        *repo_->CommitFiles(base, culprit, "the culprit", "refs/heads/main");
    // Later work shifts the first file's lines and touches the README.
    const std::string banner = "// Later work.\n";
    std::vector<hlo_bisect::FileChange> later = culprit;
    later[0].content = "target\nwith a faster compiler!\n";
    later[1].content = banner + *later[1].content;
    head_ =
        *repo_->CommitFiles(culprit_, later, "later work", "refs/heads/main");
    for (size_t i = 1; i < original.size(); ++i) {
      fixed_[original[i].path] = (i == 1 ? banner : "") + *original[i].content;
    }
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // The embedded compiler's globs of the bug's pass, as the draft step
  // reads them from the target's description.
  Json CulpritSources() const {
    Json globs = Json::MakeArray();
    for (const std::string& g :
         hlo_diff::testing::EmbeddedTarget().SourcesOf(pass_)) {
      globs.push_back(g);
    }
    return globs;
  }

  // Runs the drafter with the bug's pass as the localization.
  Json Draft(testing::FakeToolBox& tools) {
    Install(tools);
    return Draft(static_cast<ToolBox&>(tools));
  }
  Json Draft(ToolBox& tools) {
    const Json task =
        Obj({{"bug", 7},
             {"case", testing::CaseId("w")},
             {"localization", Obj({{"findings", Obj({{"pass", pass_}})}})},
             {"culprit", Obj({{"sha", culprit_}, {"summary", "the culprit"}})},
             {"head", head_},
             {"culprit_sources", CulpritSources()}});
    StatusOr<Json> claim =
        (*MakeBuiltinBrain("patch_drafter"))->Run(task, tools);
    EXPECT_TRUE(claim.ok()) << claim.status().ToString();
    return claim.ok() ? *claim : Json();
  }

  // try_patch as the daemon would answer it, with "the repro passes"
  // meaning "head + patch has the original sources".
  Json TryPatch(const Json& a) {
    return testing::TryPatchAnswer(
        ApplyPatchOnto(*repo_, head_, a.Find("diff")->string_value(), "try",
                       ""),
        [this](const std::string& sha) {
          bool pass = true;
          for (const auto& [path, text] : fixed_) {
            pass = pass && *ReadFileAt(*repo_, sha, path) == text;
          }
          return pass;
        });
  }

  void Install(testing::FakeToolBox& tools) {
    tools.On("culprit_diff", [this](const Json& a) {
      const Json* path = a.Find("path");
      StatusOr<std::string> d =
          DiffOfCommit(*repo_, a.Find("commit")->string_value(),
                       path ? path->string_value() : "");
      if (!d.ok()) return FailResult(d.status().message());
      Json files = Json::MakeArray();
      StatusOr<UnifiedDiff> parsed = ParseUnifiedDiff(*d);
      if (!parsed.ok()) return FailResult(parsed.status().message());
      for (const FileDiff& f : parsed->files) files.push_back(f.path());
      return OkResult(Obj({{"diff", *d}, {"files", files}}));
    });
    tools.On("read_source", [this](const Json& a) {
      StatusOr<std::string> text =
          ReadFileAt(*repo_, a.Find("commit")->string_value(),
                     a.Find("path")->string_value());
      if (!text.ok()) return FailResult(text.status().message());
      return testing::SourcePage(SplitLines(*text), a, /*newline_each=*/true);
    });
    tools.On("try_patch",
             [this](const Json& a) { return OkResult(TryPatch(a)); });
    tools.On("submit_patch", [this](const Json& a) {
      submitted_.push_back(a);
      return OkResult(
          Obj({{"candidate", static_cast<int64_t>(submitted_.size())}}));
    });
  }

  std::string dir_;
  std::unique_ptr<GitRepo> repo_;
  std::string pass_, culprit_, head_;
  std::vector<std::string> files_;
  std::map<std::string, std::string> fixed_;  // Path -> the fixed text.
  std::vector<Json> submitted_;
};

TEST_P(DrafterZooTest, ProposesTheRevertOfTheCulpritsHunks) {
  testing::FakeToolBox tools("patch_drafter");
  Json claim = Draft(tools);
  Json& candidates = claim["candidates"];
  ASSERT_EQ(candidates.size(), 1u) << claim.DumpPretty();
  Json& c = candidates.mutable_array()[0];
  EXPECT_EQ(c["strategy"], Json("revert_file"));
  const std::string diff = c["diff"].string_value();
  EXPECT_EQ(diff.find("README.md"), std::string::npos) << diff;
  EXPECT_LE(tools.Count("try_patch"), 3);  // ddmin over two hunks at most.
  ASSERT_EQ(submitted_.size(), 1u);
  EXPECT_NE(
      submitted_[0]["rationale"].string_value().find(culprit_.substr(0, 12)),
      std::string::npos);
  // What the daemon then does: the branch for review, main untouched.
  StatusOr<std::string> branch =
      ApplyPatchOnto(*repo_, head_, diff, "trench: bug 7",
                     "refs/heads/trench/bug-7", "refs/heads/main");
  ASSERT_TRUE(branch.ok()) << branch.status().ToString();
  for (const auto& [path, text] : fixed_) {
    EXPECT_EQ(*ReadFileAt(*repo_, "refs/heads/trench/bug-7", path), text);
  }
  EXPECT_EQ(*repo_->Resolve("refs/heads/main"), head_);
  if (GetParam() == "07-cse-compare-direction") {
    EXPECT_NE(diff.find("+  return a.operands() == b.operands() && "
                        "a.IdenticalIgnoringOperands(b) &&"),
              std::string::npos)
        << diff;
    EXPECT_NE(diff.find("-  if (a.operands() != b.operands()) return false;"),
              std::string::npos);
  }
}

// The same through the runtime's real ToolBox (agents/sandbox_toolbox.h):
// culprit_diff and read_source read the repository in-process.
TEST_P(DrafterZooTest, RealToolBoxGivesTheSameRevert) {
  ToolContext ctx;
  ctx.tools_dir = ctx.bin_dir = ctx.cases_dir = ctx.scratch_dir = dir_;
  ctx.repo = dir_ + "/repo";
  ctx.head = head_;
  ctx.try_patch = [this](const Json& a) -> StatusOr<Json> {
    return TryPatch(a);
  };
  ctx.submit_patch = [this](const Json& a) -> StatusOr<Json> {
    submitted_.push_back(a);
    return Obj({{"candidate", static_cast<int64_t>(submitted_.size())}});
  };
  StatusOr<std::unique_ptr<SandboxToolBox>> tools =
      SandboxToolBox::Create("patch_drafter", ctx);
  ASSERT_TRUE(tools.ok()) << tools.status().ToString();
  Json claim = Draft(static_cast<ToolBox&>(**tools));
  ASSERT_EQ(claim["candidates"].size(), 1u) << claim.DumpPretty();
  Json& c = claim["candidates"].mutable_array()[0];
  EXPECT_EQ(c["strategy"], Json("revert_file"));
  EXPECT_EQ(c["diff"].string_value().find("README.md"), std::string::npos);
  EXPECT_EQ(submitted_.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Zoo, DrafterZooTest, ::testing::ValuesIn(ZooBugs()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string name = i.param;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace trench::agents
