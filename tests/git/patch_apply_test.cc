// git/patch_apply.h on real repositories made in temporary directories
// with GitRepo::Init / CommitFiles.
#include "git/patch_apply.h"

#include <git2.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "git/unified_diff.h"

namespace trench::agents {
namespace {

namespace fs = std::filesystem;
using hlo_bisect::FileChange;
using hlo_bisect::GitRepo;

class GitPatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/git-patch-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    StatusOr<std::unique_ptr<GitRepo>> r = GitRepo::Init(dir_ + "/repo");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    repo_ = std::move(*r);
    base_ = Commit(
        "", {{"a.txt", "one\ntwo\nthree\nfour\n"}, {"dir/b.txt", "bee\n"}},
        "base");
    next_ = Commit(
        base_, {{"a.txt", "one\nTWO\nthree\nfour\n"}, {"dir/c.txt", "sea\n"}},
        "next");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Commit(const std::string& parent, std::vector<FileChange> files,
                     const std::string& msg) {
    StatusOr<std::string> sha =
        repo_->CommitFiles(parent, files, msg, "refs/heads/main");
    EXPECT_TRUE(sha.ok()) << sha.status().ToString();
    return sha.ok() ? *sha : "";
  }
  std::string HeadTarget() {
    git_reference* head = nullptr;
    EXPECT_EQ(git_reference_lookup(&head, repo_->raw(), "HEAD"), 0);
    std::string target = git_reference_symbolic_target(head);
    git_reference_free(head);
    return target;
  }

  std::string dir_;
  std::unique_ptr<GitRepo> repo_;
  std::string base_, next_;
};

TEST_F(GitPatchTest, DiffOfCommitWithFilters) {
  StatusOr<std::string> all = DiffOfCommit(*repo_, next_);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_NE(all->find("diff --git a/a.txt b/a.txt"), std::string::npos);
  EXPECT_NE(all->find("+TWO"), std::string::npos);
  EXPECT_NE(all->find("new file mode 100644"), std::string::npos);
  // git's own text parses and renders back byte for byte.
  StatusOr<UnifiedDiff> parsed = ParseUnifiedDiff(*all);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(RenderUnifiedDiff(*parsed), *all);

  StatusOr<std::string> only_dir = DiffOfCommit(*repo_, next_, "dir");
  ASSERT_TRUE(only_dir.ok());
  EXPECT_NE(only_dir->find("dir/c.txt"), std::string::npos);
  EXPECT_EQ(only_dir->find("a.txt"), std::string::npos);
  EXPECT_EQ(*DiffOfCommit(*repo_, next_, "nothing/here"), "");
  // A root commit is diffed against the empty tree.
  StatusOr<std::string> root = DiffOfCommit(*repo_, base_, "a.txt");
  ASSERT_TRUE(root.ok());
  EXPECT_NE(root->find("+four"), std::string::npos);
  EXPECT_EQ(DiffOfCommit(*repo_, "no-such-rev").status().code(),
            StatusCode::kNotFound);
}

TEST_F(GitPatchTest, RevertAppliedOntoACommitAndABranch) {
  const UnifiedDiff forward = *ParseUnifiedDiff(*DiffOfCommit(*repo_, next_));
  const std::string revert = RenderUnifiedDiff(InvertDiff(forward));
  StatusOr<std::string> sha =
      ApplyPatchOnto(*repo_, next_, revert, "Revert next",
                     "refs/heads/trench/bug-1", "refs/heads/main");
  ASSERT_TRUE(sha.ok()) << sha.status().ToString();
  EXPECT_EQ(*repo_->Resolve("refs/heads/trench/bug-1"), *sha);
  EXPECT_EQ(*ReadFileAt(*repo_, *sha, "a.txt"), "one\ntwo\nthree\nfour\n");
  EXPECT_EQ(ReadFileAt(*repo_, *sha, "dir/c.txt").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(repo_->Describe(*sha)->summary, "Revert next");
  // main, HEAD's branch and the working directory are untouched.
  EXPECT_EQ(*repo_->Resolve("refs/heads/main"), next_);
  EXPECT_FALSE(fs::exists(dir_ + "/repo/a.txt"));
  // No ref: only the commit.
  StatusOr<std::string> bare = ApplyPatchOnto(*repo_, next_, revert, "m", "");
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_EQ(*DiffOfCommit(*repo_, *bare), revert);
}

TEST_F(GitPatchTest, PatchThatDoesNotApplyNamesTheFile) {
  const std::string forward = *DiffOfCommit(*repo_, next_, "a.txt");
  // The change is already in next: applying it again fails on a.txt.
  StatusOr<std::string> sha = ApplyPatchOnto(*repo_, next_, forward, "m", "");
  ASSERT_FALSE(sha.ok());
  EXPECT_EQ(sha.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(sha.status().message().rfind(
                "patch does not apply to " + next_ + ": a.txt", 0),
            0u)
      << sha.status().message();
}

TEST_F(GitPatchTest, HunksMoveToWhereTheirContextIs) {
  // Another line of history put a line on top of a.txt: next's change
  // (two -> TWO) still applies there, one line further down, like git
  // apply's offset search.
  const std::string other =
      Commit(base_, {{"a.txt", "zero\none\ntwo\nthree\nfour\n"}}, "other");
  const std::string change = *DiffOfCommit(*repo_, next_, "a.txt");
  StatusOr<std::string> sha = ApplyPatchOnto(*repo_, other, change, "m", "");
  ASSERT_TRUE(sha.ok()) << sha.status().ToString();
  EXPECT_EQ(*ReadFileAt(*repo_, *sha, "a.txt"),
            "zero\none\nTWO\nthree\nfour\n");
}

TEST_F(GitPatchTest, RefusesProtectedRefsAndBadInput) {
  const std::string revert = RenderUnifiedDiff(
      InvertDiff(*ParseUnifiedDiff(*DiffOfCommit(*repo_, next_))));
  for (const std::string& ref :
       {std::string("refs/heads/main"), std::string("HEAD"), HeadTarget(),
        std::string("refs/heads/a..b"), std::string("trench/bug-1")}) {
    StatusOr<std::string> r =
        ApplyPatchOnto(*repo_, next_, revert, "m", ref, "refs/heads/main");
    ASSERT_FALSE(r.ok()) << ref;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << ref;
  }
  EXPECT_EQ(ApplyPatchOnto(*repo_, next_, "", "m", "").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ApplyPatchOnto(*repo_, next_, "diff --git a/x b/x\n@@ bad\n", "m", "")
          .status()
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(ApplyPatchOnto(*repo_, "nope", revert, "m", "").status().code(),
            StatusCode::kNotFound);
}

TEST_F(GitPatchTest, ReadFileAt) {
  EXPECT_EQ(*ReadFileAt(*repo_, base_, "dir/b.txt"), "bee\n");
  EXPECT_EQ(ReadFileAt(*repo_, base_, "dir/c.txt").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(ReadFileAt(*repo_, base_, "dir").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadFileAt(*repo_, "zzz", "a.txt").status().code(),
            StatusCode::kNotFound);
  // A size cap: a file up to it is read, a larger one refused by size.
  EXPECT_EQ(*ReadFileAt(*repo_, base_, "dir/b.txt", 4), "bee\n");
  StatusOr<std::string> big = ReadFileAt(*repo_, base_, "dir/b.txt", 3);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(big.status().message().find("is 4 bytes, more than the 3 read"),
            std::string::npos)
      << big.status().message();
}

}  // namespace
}  // namespace trench::agents
