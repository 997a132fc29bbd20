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

// Everything since an older commit, in the newer commit's line numbers:
// a line changed by the middle commit and moved by the last one.
TEST_F(GitPatchTest, DiffBetweenTwoCommits) {
  const std::string third =
      Commit(next_, {{"a.txt", "zero\none\nTWO\nthree\nFOUR\n"}}, "third");
  StatusOr<std::string> d = DiffBetween(*repo_, base_, third);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  StatusOr<UnifiedDiff> parsed = ParseUnifiedDiff(*d);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_NE(d->find("+zero\n"), std::string::npos) << *d;
  EXPECT_NE(d->find("+TWO\n"), std::string::npos) << *d;
  EXPECT_NE(d->find("+FOUR\n"), std::string::npos) << *d;
  EXPECT_NE(d->find("+++ b/dir/c.txt"), std::string::npos) << *d;
  EXPECT_NE(d->find("@@ -1,4 +1,5 @@"), std::string::npos) << *d;
  EXPECT_EQ(*DiffBetween(*repo_, third, third), "");
  EXPECT_EQ(DiffBetween(*repo_, base_, "no-such-rev").status().code(),
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

// The forms the patch drafter writes: plain unified diffs apply like git's.
TEST_F(GitPatchTest, PlainUnifiedDiffsApply) {
  const std::string plain =
      "--- a/a.txt\n+++ b/a.txt\n@@ -1,4 +1,4 @@\n one\n-two\n+2\n three\n"
      " four\n";
  StatusOr<std::string> sha = ApplyPatchOnto(*repo_, base_, plain, "m", "");
  ASSERT_TRUE(sha.ok()) << sha.status().ToString();
  EXPECT_EQ(*ReadFileAt(*repo_, *sha, "a.txt"), "one\n2\nthree\nfour\n");

  // diff -u with timestamps, no prefixes, in a markdown fence, CRLF.
  const std::string diff_u =
      "The fix:\r\n```diff\r\n"
      "--- dir/b.txt\t2026-12-04 10:00:00.000000000 +0000\r\n"
      "+++ dir/b.txt\t2026-12-04 10:05:00.000000000 +0000\r\n"
      "@@ -1 +1,2 @@\r\n bee\r\n+wasp\r\n```\r\n";
  sha = ApplyPatchOnto(*repo_, base_, diff_u, "m", "");
  ASSERT_TRUE(sha.ok()) << sha.status().ToString();
  EXPECT_EQ(*ReadFileAt(*repo_, *sha, "dir/b.txt"), "bee\nwasp\n");
}

TEST_F(GitPatchTest, PlainDiffCreatesAndDeletesFilesThroughDevNull) {
  const std::string text =
      "--- /dev/null\n+++ b/src/new.cc\n@@ -0,0 +1,2 @@\n+int x;\n+int y;\n"
      "\\ No newline at end of file\n"
      "--- a/dir/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bee\n";
  StatusOr<std::string> sha =
      ApplyPatchOnto(*repo_, base_, text, "m", "refs/heads/trench/new");
  ASSERT_TRUE(sha.ok()) << sha.status().ToString();
  EXPECT_EQ(*ReadFileAt(*repo_, *sha, "src/new.cc"), "int x;\nint y;");
  EXPECT_EQ(ReadFileAt(*repo_, *sha, "dir/b.txt").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(*ReadFileAt(*repo_, *sha, "a.txt"), "one\ntwo\nthree\nfour\n");
}

TEST_F(GitPatchTest, PatchErrorsSayWhatWasExpected) {
  auto error = [&](const std::string& text) {
    StatusOr<std::string> r =
        ApplyPatchOnto(*repo_, base_, text, "m", "refs/heads/trench/x");
    EXPECT_FALSE(r.ok()) << text;
    EXPECT_EQ(repo_->Resolve("refs/heads/trench/x").status().code(),
              StatusCode::kNotFound);
    return r.ok() ? "" : r.status().message();
  };
  EXPECT_EQ(error("--- a/a.txt\n+++ b/a.txt\n-two\n+2\n"),
            "line 3: a hunk header '@@ -a,b +c,d @@' expected after '+++ "
            "b/a.txt', got '-two'");
  EXPECT_EQ(error("--- a/a.txt\n+++ b/a.txt\n@@ -2,2 +2,2 @@\n-two\n+2\n"),
            "line 3: hunk 1 of 'a.txt' (line 3: '@@ -2,2 +2,2 @@') ends early "
            "at the end of the patch: 1 old and 1 new lines missing (its "
            "header counts 2 old and 2 new lines)");
  EXPECT_EQ(error("--- a/../outside.txt\n+++ b/../outside.txt\n@@ -1 +1 @@\n"
                  "-x\n+y\n"),
            "line 1: unsafe path '../outside.txt': a '..' component leaves "
            "the repository");
  EXPECT_EQ(error("--- /dev/null\n+++ b/.git/hooks/post-checkout\n"
                  "@@ -0,0 +1 @@\n+rm -rf /\n"),
            "line 1: unsafe path '.git/hooks/post-checkout': the "
            "repository's own .git directory");
  // The context does not match: the file, the hunk and the line.
  EXPECT_EQ(error("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-TWO\n+2\n"
                  " three\n"),
            "patch does not apply to " + base_ +
                ": a.txt: hunk 1 (patch line 3, '@@ -1,3 +1,3 @@') matches "
                "nowhere in the file: at line 2 the file has 'two' where the "
                "hunk expects 'TWO' (context and '-' lines must be copied "
                "exactly)");
  EXPECT_EQ(error("--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+b\n"),
            "patch does not apply to " + base_ +
                ": nope.txt: no such file (a new file needs '--- /dev/null')");
  EXPECT_EQ(error("--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+a\n"),
            "patch does not apply to " + base_ +
                ": a.txt: the patch creates the file, but it exists");
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
