// The demo's replayed history (demo_repo.h, DemoHistory::kReplay) on a
// source repository the test makes with libgit2: its target-side commits
// are replayed with their messages, commits elsewhere are left out, two
// commits do not build (each repaired by the next), and the bug lands at a
// seeded point with the later commits rebased on top of it, so that the
// last commit is the source's head plus the bug.
#include <git2.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "git/git_repo.h"
#include "git/patch_apply.h"
#include "orchestrator/demo/demo_repo.h"
#include "orchestrator/demo/target_history.h"

namespace trench::orchestrator {
namespace {

namespace fs = std::filesystem;
using hlo_bisect::FileChange;
using hlo_bisect::GitRepo;

// compiler/rules.cc with lines "rule i = v_i".
std::string Rules(const std::vector<int>& values) {
  std::string s = "// rules\n";
  for (size_t i = 0; i < values.size(); ++i) {
    s += "int rule" + std::to_string(i) + " = " + std::to_string(values[i]) +
         ";\n";
  }
  return s;
}

class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "replay-" + std::to_string(::getpid());
    fs::remove_all(root_);
    fs::create_directories(root_ + "/bug");
    auto repo = GitRepo::Init(root_ + "/source");
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    source_ = std::move(*repo);
    // The root commit, then 14 commits: each changes one rule of
    // compiler/rules.cc (rules 0..13, one each), every other one also
    // compiler/passes/p.cc, every third also docs/ (not the target side);
    // two commits touch only docs/.
    values_.assign(20, 0);
    std::string head;
    auto commit = [&](std::vector<FileChange> files, const std::string& msg) {
      auto sha = source_->CommitFiles(head, files, msg, "refs/heads/main");
      ASSERT_TRUE(sha.ok()) << sha.status().ToString();
      head = *sha;
    };
    commit({{"CMakeLists.txt", "project(t)\n", false},
            {"compiler/rules.cc", Rules(values_), false},
            {"compiler/passes/p.cc", "int p = 0;\n", false},
            {"docs/a.md", "a\n", false}},
           "Import\n");
    for (int i = 0; i < 14; ++i) {
      values_[i] = i + 1;
      std::vector<FileChange> files = {
          {"compiler/rules.cc", Rules(values_), false}};
      if (i % 3 == 0) {
        files.push_back({"docs/a.md", "a" + std::to_string(i) + "\n", false});
      }
      if (i % 2 == 0) {
        files.push_back({"compiler/passes/p.cc",
                         "int p = " + std::to_string(i) + ";\n", false});
      }
      commit(files, "compiler: rule " + std::to_string(i) + "\n\nBody " +
                        std::to_string(i) + ".\n");
      if (i == 5 || i == 9) {
        commit({{"docs/b.md", "b" + std::to_string(i) + "\n", false}},
               "docs only\n");
      }
    }
    // HEAD for the walk: the branch main.
    ASSERT_EQ(git_repository_set_head(source_->raw(), "refs/heads/main"), 0);
    // The bug changes rule 19, which no commit touched: it applies
    // anywhere, and every later commit rebases onto it.
    std::vector<int> bugged = values_;
    bugged[19] = 99;
    bug_ =
        "--- a/compiler/rules.cc\n+++ b/compiler/rules.cc\n"
        "@@ -19,3 +19,3 @@\n int rule17 = 0;\n int rule18 = 0;\n"
        "-int rule19 = 0;\n+int rule19 = 99;\n";
    std::ofstream(root_ + "/bug/bug.patch") << bug_;
    std::ofstream(root_ + "/bug/meta.json")
        << "{\"commit\": \"compiler: tidy rule 19\"}\n";
    head_rules_bugged_ = Rules(bugged);
  }
  void TearDown() override { fs::remove_all(root_); }

  DemoRepoOptions Options(uint64_t seed) {
    DemoRepoOptions o;
    o.source_dir = root_ + "/source";
    o.bug_dir = root_ + "/bug";
    o.history = DemoHistory::kReplay;
    o.replay_commits = 10;
    o.broken_builds = 2;
    o.seed = seed;
    return o;
  }

  std::string root_, bug_, head_rules_bugged_;
  std::unique_ptr<GitRepo> source_;
  std::vector<int> values_;
};

TEST_F(ReplayTest, ReadsTheTargetSideCommitsOnly) {
  StatusOr<TargetHistory> h = ReadTargetHistory(root_ + "/source", 10);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_EQ(h->commits.size(), 10u);
  // The last ten rule commits (4..13), oldest first, docs left out.
  for (int i = 0; i < 10; ++i) {
    const HistoryCommit& c = h->commits[i];
    EXPECT_EQ(c.message, "compiler: rule " + std::to_string(i + 4) +
                             "\n\nBody " + std::to_string(i + 4) + ".\n");
    ASSERT_EQ(c.changes.size(), (i + 4) % 2 == 0 ? 2u : 1u) << c.message;
    EXPECT_EQ(c.changes.back().path, "compiler/rules.cc");
  }
  std::set<std::string> base_paths;
  for (const FileChange& f : h->base_files) base_paths.insert(f.path);
  EXPECT_EQ(base_paths,
            (std::set<std::string>{"CMakeLists.txt", "compiler/passes/p.cc",
                                   "compiler/rules.cc"}));
  StatusOr<TargetHistory> too_long = ReadTargetHistory(root_ + "/source", 30);
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(too_long.status().message().find("has 14 commits"),
            std::string::npos)
      << too_long.status().message();
  EXPECT_EQ(ReadTargetHistory(root_ + "/nothing", 3).status().code(),
            StatusCode::kNotFound);
}

TEST_F(ReplayTest, LandsTheBugAtASeededPointWithTheLaterCommitsRebased) {
  std::set<size_t> positions;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const std::string dir = root_ + "/demo" + std::to_string(seed);
    StatusOr<DemoRepo> demo = MakeDemoRepo(dir, Options(seed));
    ASSERT_TRUE(demo.ok()) << demo.status().ToString();
    // 10 replayed, 2 broken + 2 repairs, the bug.
    ASSERT_EQ(demo->history.size(), 15u);
    auto repo = GitRepo::Open(dir);
    ASSERT_TRUE(repo.ok());
    // One first-parent line from the base to the last commit.
    auto line = (*repo)->FirstParentRange(demo->base, demo->history.back());
    ASSERT_TRUE(line.ok()) << line.status().ToString();
    EXPECT_EQ(*line, demo->history);
    // The last commit is the source's head with the bug.
    auto rules =
        agents::ReadFileAt(**repo, demo->history.back(), "compiler/rules.cc");
    ASSERT_TRUE(rules.ok());
    EXPECT_EQ(*rules, head_rules_bugged_);
    // The bug commit's own change is the bug's.
    auto diff = agents::DiffOfCommit(**repo, demo->bug_commit);
    ASSERT_TRUE(diff.ok());
    EXPECT_NE(diff->find("+int rule19 = 99;"), std::string::npos) << *diff;
    auto info = (*repo)->Describe(demo->bug_commit);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->summary, "compiler: tidy rule 19");
    const size_t at = std::find(demo->history.begin(), demo->history.end(),
                                demo->bug_commit) -
                      demo->history.begin();
    ASSERT_LT(at, demo->history.size());
    EXPECT_GE(demo->history.size() - at, 4u) << "three commits after the bug";
    positions.insert(at);
    // Two commits do not build (in compiler/passes/p.cc: the bug's file
    // is left alone); each is repaired by the next, and the bug never
    // comes right after one.
    ASSERT_EQ(demo->unbuildable.size(), 2u);
    for (const std::string& sha : demo->unbuildable) {
      const size_t i =
          std::find(demo->history.begin(), demo->history.end(), sha) -
          demo->history.begin();
      ASSERT_LT(i + 1, demo->history.size());
      EXPECT_NE(demo->history[i + 1], demo->bug_commit);
      auto broken = agents::DiffOfCommit(**repo, sha);
      ASSERT_TRUE(broken.ok());
      EXPECT_NE(broken->find("pending_rewrites_"), std::string::npos);
      auto repair = agents::DiffOfCommit(**repo, demo->history[i + 1]);
      ASSERT_TRUE(repair.ok());
      EXPECT_NE(repair->find("-[[maybe_unused]] int PendingRewrites()"),
                std::string::npos)
          << *repair;
    }
    // Only the base is on the branch.
    EXPECT_EQ(*(*repo)->Resolve("refs/heads/main"), demo->base);
  }
  EXPECT_GE(positions.size(), 2u) << "the seed moves the bug";
}

TEST_F(ReplayTest, ABugThatAppliesNowhereIsRefusedByName) {
  std::ofstream(root_ + "/bug/bug.patch")
      << "--- a/compiler/rules.cc\n+++ b/compiler/rules.cc\n"
         "@@ -2,1 +2,1 @@\n-int rule0 = 12345;\n+int rule0 = 7;\n";
  StatusOr<DemoRepo> demo = MakeDemoRepo(root_ + "/demo", Options(1));
  ASSERT_FALSE(demo.ok());
  EXPECT_EQ(demo.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(demo.status().message().find("no point of the replayed history"),
            std::string::npos)
      << demo.status().message();
}

// Every zoo bug can be played on this checkout's own replayed history
// (its patch goes in somewhere among the last 32 target-side commits).
// Needs the checkout's history: skipped in a shallow clone.
TEST(BugZooReplayTest, EveryZooBugLandsInThisCheckoutsHistory) {
  auto self = GitRepo::Open(TRENCH_SOURCE_DIR);
  if (!self.ok() || git_repository_is_shallow((*self)->raw()) == 1) {
    GTEST_SKIP() << "no full git history at " << TRENCH_SOURCE_DIR;
  }
  const std::string root =
      ::testing::TempDir() + "replay-zoo-" + std::to_string(::getpid());
  fs::remove_all(root);
  int bugs = 0;
  for (const auto& e :
       fs::directory_iterator(fs::path(TRENCH_SOURCE_DIR) / "tests/bugzoo")) {
    if (!fs::exists(e.path() / "bug.patch")) continue;
    ++bugs;
    DemoRepoOptions o;
    o.source_dir = TRENCH_SOURCE_DIR;
    o.bug_dir = e.path().string();
    o.history = DemoHistory::kReplay;
    const std::string dir = root + "/" + e.path().filename().string();
    StatusOr<DemoRepo> demo = MakeDemoRepo(dir, o);
    ASSERT_TRUE(demo.ok()) << e.path().filename() << ": "
                           << demo.status().ToString();
    EXPECT_GE(demo->history.size(), 33u) << e.path().filename();
    EXPECT_EQ(demo->unbuildable.size(), 2u) << e.path().filename();
    fs::remove_all(dir);
  }
  EXPECT_GE(bugs, 12);
  fs::remove_all(root);
}

}  // namespace
}  // namespace trench::orchestrator
