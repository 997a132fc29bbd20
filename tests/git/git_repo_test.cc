// GitRepo (git/git_repo.h) on real repositories made in
// temporary directories with libgit2; the git CLI, when installed,
// cross-checks the first-parent list.
#include "git/git_repo.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/git-repo-test.XXXXXX";
    path_ = ::mkdtemp(tmpl) ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const {
    return path_ + "/" + name;
  }

 private:
  std::string path_;
};

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::unique_ptr<GitRepo> MakeRepo(const std::string& path) {
  StatusOr<std::unique_ptr<GitRepo>> r = GitRepo::Init(path);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(*r) : nullptr;
}

std::string Commit(GitRepo& repo, const std::string& parent,
                   std::vector<FileChange> changes, const std::string& msg,
                   const std::string& ref = "refs/heads/main",
                   const std::string& merge = "") {
  StatusOr<std::string> sha =
      repo.CommitFiles(parent, changes, msg, ref, merge);
  EXPECT_TRUE(sha.ok()) << sha.status().ToString();
  return sha.ok() ? *sha : "";
}

TEST(GitRepoTest, OpenMissingRepositoryNamesLibgit2Error) {
  TempDir tmp;
  StatusOr<std::unique_ptr<GitRepo>> r = GitRepo::Open(tmp / "nothing");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << r.status().ToString();
  EXPECT_NE(r.status().message().find("(libgit2: "), std::string::npos)
      << r.status().message();
}

TEST(GitRepoTest, CommitResolveAndDescribe) {
  TempDir tmp;
  auto repo = MakeRepo(tmp / "r");
  ASSERT_TRUE(repo);
  const std::string a =
      Commit(*repo, "", {{"a.txt", "one\n"}}, "first\n\nbody");
  const std::string b = Commit(*repo, a, {{"b.txt", "two\n"}}, "second");
  ASSERT_EQ(a.size(), 40u);
  EXPECT_EQ(*repo->Resolve("main"), b);
  EXPECT_EQ(*repo->Resolve("main~1"), a);
  EXPECT_EQ(*repo->Resolve(b.substr(0, 10)), b);
  StatusOr<CommitInfo> info = repo->Describe(a);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->summary, "first");
  EXPECT_NE(info->author.find('<'), std::string::npos);
  EXPECT_EQ(info->ToJson().Find("short")->string_value(), a.substr(0, 12));

  StatusOr<std::string> bad = repo->Resolve("no-such-branch");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  EXPECT_NE(bad.status().message().find("no-such-branch"), std::string::npos);
  // Reopening sees the same history.
  StatusOr<std::unique_ptr<GitRepo>> again = GitRepo::Open(tmp / "r");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*(*again)->Resolve("main"), b);
}

TEST(GitRepoTest, FirstParentRangeSkipsMergedSideBranch) {
  TempDir tmp;
  auto repo = MakeRepo(tmp / "r");
  ASSERT_TRUE(repo);
  const std::string c0 = Commit(*repo, "", {{"f", "0"}}, "c0");
  const std::string c1 = Commit(*repo, c0, {{"f", "1"}}, "c1");
  const std::string side =
      Commit(*repo, c1, {{"side", "s"}}, "side", "refs/heads/side");
  const std::string side2 =
      Commit(*repo, side, {{"side", "s2"}}, "side2", "refs/heads/side");
  const std::string c2 = Commit(*repo, c1, {{"f", "2"}}, "c2");
  // c3 merges side (parents c2, side2): side's commits are not on the
  // first-parent line.
  const std::string c3 = Commit(*repo, c2, {{"side", "s2"}}, "merge side",
                                "refs/heads/main", side2);
  const std::string c4 = Commit(*repo, c3, {{"f", "4"}}, "c4");
  StatusOr<std::vector<std::string>> range = repo->FirstParentRange(c0, c4);
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(*range, (std::vector<std::string>{c1, c2, c3, c4}));
  EXPECT_EQ(*repo->FirstParentRange(c2, c3), std::vector<std::string>{c3});

  StatusOr<std::vector<std::string>> same = repo->FirstParentRange(c1, c1);
  EXPECT_EQ(same.status().code(), StatusCode::kInvalidArgument);
  StatusOr<std::vector<std::string>> unrelated =
      repo->FirstParentRange(c2, side2);
  EXPECT_EQ(unrelated.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(unrelated.status().message().find("not an ancestor"),
            std::string::npos);
}

TEST(GitRepoTest, ContainsFollowsEveryParent) {
  TempDir tmp;
  auto repo = MakeRepo(tmp / "r");
  ASSERT_TRUE(repo);
  const std::string c0 = Commit(*repo, "", {{"f", "0"}}, "c0");
  const std::string side =
      Commit(*repo, c0, {{"side", "s"}}, "side", "refs/heads/side");
  const std::string c1 = Commit(*repo, c0, {{"f", "1"}}, "c1");
  const std::string merge =
      Commit(*repo, c1, {{"side", "s"}}, "merge", "refs/heads/main", side);
  EXPECT_TRUE(*repo->Contains(c1, c1));
  EXPECT_TRUE(*repo->Contains(c1, c0));
  EXPECT_TRUE(*repo->Contains(merge, side));  // Through the second parent.
  EXPECT_FALSE(*repo->Contains(c0, c1));
  EXPECT_FALSE(*repo->Contains(side, c1));
  EXPECT_EQ(repo->Contains(c1, "no-such-rev").status().code(),
            StatusCode::kNotFound);
}

TEST(GitRepoTest, FirstParentRangeAgreesWithGitRevList) {
  if (std::system("git --version >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no git CLI to cross-check with";
  }
  TempDir tmp;
  const std::string dir = tmp / "r";
  auto repo = MakeRepo(dir);
  ASSERT_TRUE(repo);
  std::string head = Commit(*repo, "", {{"f", "0"}}, "c0");
  const std::string first = head;
  for (int i = 1; i <= 12; ++i) {
    head = Commit(*repo, head,
                  {{"f" + std::to_string(i % 3), "v" + std::to_string(i)}},
                  "c" + std::to_string(i));
  }
  const std::string out = (fs::path(dir) / "revlist.txt").string();
  ASSERT_EQ(
      std::system(("git -C " + dir + " rev-list --first-parent --reverse " +
                   first + ".." + head + " > " + out)
                      .c_str()),
      0);
  std::istringstream lines(ReadText(out));
  std::vector<std::string> expected;
  for (std::string l; std::getline(lines, l);) expected.push_back(l);
  StatusOr<std::vector<std::string>> range =
      repo->FirstParentRange(first, head);
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(*range, expected);
  EXPECT_EQ(range->size(), 12u);
}

TEST(GitRepoTest, CheckoutRewritesOnlyChangedFilesAndKeepsUntracked) {
  TempDir tmp;
  auto repo = MakeRepo(tmp / "r");
  ASSERT_TRUE(repo);
  const std::string a =
      Commit(*repo, "",
             {{"keep.txt", "same\n"},
              {"change.txt", "old\n"},
              {"gone.txt", "bye\n"},
              {"dir/run.sh", "#!/bin/sh\necho hi\n", /*executable=*/true}},
             "a");
  const std::string b = Commit(
      *repo, a,
      {{"change.txt", "new\n"}, {"gone.txt", std::nullopt}, {"added.txt", "+"}},
      "b");
  const fs::path wt = tmp / "wt";
  ASSERT_TRUE(repo->CheckoutTo(a, wt.string()).ok());
  EXPECT_EQ(ReadText(wt / "keep.txt"), "same\n");
  EXPECT_EQ(ReadText(wt / "gone.txt"), "bye\n");
  EXPECT_TRUE((fs::status(wt / "dir/run.sh").permissions() &
               fs::perms::owner_exec) != fs::perms::none);
  // Age the files, add an untracked build directory, then move to b.
  const auto old_time =
      fs::last_write_time(wt / "keep.txt") - std::chrono::hours(24);
  fs::last_write_time(wt / "keep.txt", old_time);
  fs::last_write_time(wt / "change.txt", old_time);
  fs::create_directories(wt / "build");
  std::ofstream(wt / "build" / "obj.o") << "object";

  Status st = repo->CheckoutTo(b, wt.string());
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(ReadText(wt / "change.txt"), "new\n");
  EXPECT_EQ(ReadText(wt / "added.txt"), "+");
  EXPECT_FALSE(fs::exists(wt / "gone.txt"));
  EXPECT_EQ(fs::last_write_time(wt / "keep.txt"), old_time);
  EXPECT_NE(fs::last_write_time(wt / "change.txt"), old_time);
  EXPECT_EQ(ReadText(wt / "build" / "obj.o"), "object");

  // A file modified on disk is restored; going back to a restores gone.txt.
  std::ofstream(wt / "keep.txt") << "edited by the build";
  fs::remove(wt / "dir/run.sh");
  ASSERT_TRUE(repo->CheckoutTo(a, wt.string()).ok());
  EXPECT_EQ(ReadText(wt / "dir/run.sh"), "#!/bin/sh\necho hi\n");
  EXPECT_EQ(ReadText(wt / "keep.txt"), "same\n");
  EXPECT_EQ(ReadText(wt / "change.txt"), "old\n");
  EXPECT_EQ(ReadText(wt / "gone.txt"), "bye\n");
  EXPECT_FALSE(fs::exists(wt / "added.txt"));
  // The repository's own HEAD did not move (it is unborn: no checkout).
  EXPECT_FALSE(fs::exists(fs::path(tmp / "r") / "keep.txt"));
}

TEST(GitRepoTest, RevertOntoLaterCommit) {
  TempDir tmp;
  auto repo = MakeRepo(tmp / "r");
  ASSERT_TRUE(repo);
  const std::string c0 =
      Commit(*repo, "", {{"x.txt", "1\n2\n3\n4\n5\n6\n7\n8\n"}}, "base");
  const std::string bug = Commit(
      *repo, c0, {{"x.txt", "1\n2\nBUG\n4\n5\n6\n7\n8\n"}}, "introduce bug");
  const std::string later = Commit(
      *repo, bug, {{"x.txt", "1\n2\nBUG\n4\n5\n6\n7\nlater\n"}, {"y", "y"}},
      "later change");
  StatusOr<RevertResult> r = repo->RevertOnto(bug, later);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->patch_hash.size(), 16u);
  EXPECT_EQ(*repo->Resolve(r->branch), r->sha);
  EXPECT_EQ(*repo->Resolve(r->sha + "~1"), later);
  EXPECT_EQ(repo->Describe(r->sha)->summary, "Revert \"introduce bug\"");
  const fs::path wt = tmp / "wt";
  ASSERT_TRUE(repo->CheckoutTo(r->sha, wt.string()).ok());
  EXPECT_EQ(ReadText(wt / "x.txt"), "1\n2\n3\n4\n5\n6\n7\nlater\n");
  EXPECT_EQ(ReadText(wt / "y"), "y");
  // Same revert again: same patch hash (the cache key of its build).
  StatusOr<RevertResult> again = repo->RevertOnto(bug, later);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->patch_hash, r->patch_hash);

  // A later commit that rewrites the culprit's line makes the revert
  // conflict.
  const std::string over = Commit(
      *repo, later, {{"x.txt", "1\n2\nBUG2\n4\n5\n6\n7\nlater\n"}}, "over");
  StatusOr<RevertResult> conflict = repo->RevertOnto(bug, over);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(conflict.status().message().find("conflicts in: x.txt"),
            std::string::npos)
      << conflict.status().message();
}

}  // namespace
}  // namespace trench::hlo_bisect
