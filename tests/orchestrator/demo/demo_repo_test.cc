// The demo's target repository (orchestrator/demo/demo_repo.h) holds what
// the embedded compiler's description of itself names, so the daemon aims
// at a demo commit as at one of this checkout; and every seeded bug of the
// zoo lands in a commit whose files map to its pass or op.
#include "orchestrator/demo/demo_repo.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/json.h"
#include "git/git_repo.h"
#include "git/patch_apply.h"
#include "orchestrator/pipeline/commit_tools.h"
#include "tests/triage/case/embedded_target.h"

namespace trench::orchestrator {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Holds(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

TEST(DemoRepoTest, HoldsTheFilesTheDescriptionNames) {
  const std::string dir =
      ::testing::TempDir() + "demo-repo-" + std::to_string(::getpid());
  fs::remove_all(dir);
  DemoRepoOptions o;
  o.source_dir = TRENCH_SOURCE_DIR;
  o.bug_dir = std::string(TRENCH_SOURCE_DIR) +
              "/tests/bugzoo/08-reduce-bf16-accumulation";
  StatusOr<DemoRepo> demo = MakeDemoRepo(dir + "/repo", o);
  ASSERT_TRUE(demo.ok()) << demo.status().ToString();
  auto repo = hlo_bisect::GitRepo::Open(demo->path);
  ASSERT_TRUE(repo.ok());
  ASSERT_TRUE((*repo)->CheckoutTo(demo->base, dir + "/tree").ok());
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir + "/tree")) {
    if (e.is_regular_file()) {
      files.push_back(fs::relative(e.path(), dir + "/tree").generic_string());
    }
  }
  const hlo_diff::TargetDescription target =
      hlo_diff::testing::EmbeddedTarget();
  for (const auto* units : {&target.passes, &target.emitters}) {
    for (const hlo_diff::TargetDescription::Unit& u : *units) {
      for (const std::string& glob : u.sources) {
        EXPECT_TRUE(std::any_of(files.begin(), files.end(),
                                [&](const std::string& f) {
                                  return hlo_diff::SourceGlobMatches(glob, f);
                                }))
            << u.name << ": " << glob;
      }
    }
  }
  StatusOr<std::string> diff = agents::DiffOfCommit(**repo, demo->bug_commit);
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  EXPECT_TRUE(Holds(ChangedAreaOf(*diff, target).ops, "reduce-window"))
      << *diff;
  fs::remove_all(dir);
}

TEST(DemoRepoTest, EverySeededBugsCommitIsAimedAtItsPassOrOp) {
  const hlo_diff::TargetDescription target =
      hlo_diff::testing::EmbeddedTarget();
  for (const auto& e :
       fs::directory_iterator(fs::path(TRENCH_SOURCE_DIR) / "tests/bugzoo")) {
    if (!fs::exists(e.path() / "meta.json")) continue;
    StatusOr<Json> meta = ParseJson(ReadText(e.path() / "meta.json"));
    ASSERT_TRUE(meta.ok()) << e.path();
    const std::string pass = meta->Find("pass")->string_value();
    const std::string op = meta->Find("opcode")->string_value();
    const ChangedArea area =
        ChangedAreaOf(ReadText(e.path() / "bug.patch"), target);
    const std::string id = e.path().filename().string();
    if (pass != "codegen") {
      EXPECT_TRUE(Holds(area.passes, pass)) << id;
    } else {
      // A bug inside a fused kernel is aimed at fusions.
      EXPECT_TRUE(Holds(area.ops, op) || Holds(area.ops, "fusion")) << id;
    }
  }
}

}  // namespace
}  // namespace trench::orchestrator
