// git/patch_normalize.h: the forms of unified diff a model writes, parsed
// into git's format, and the precise errors for the rest.
#include "git/patch_normalize.h"

#include <gtest/gtest.h>

namespace trench::agents {
namespace {

UnifiedDiff Parse(const std::string& text) {
  StatusOr<UnifiedDiff> d = ParsePatchText(text);
  EXPECT_TRUE(d.ok()) << d.status().ToString() << "\n" << text;
  return d.ok() ? *d : UnifiedDiff();
}

std::string Err(const std::string& text) {
  StatusOr<UnifiedDiff> d = ParsePatchText(text);
  EXPECT_FALSE(d.ok()) << text;
  if (d.ok()) return "";
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  return d.status().message();
}

constexpr char kGitForm[] =
    "diff --git a/src/x.cc b/src/x.cc\n"
    "--- a/src/x.cc\n"
    "+++ b/src/x.cc\n"
    "@@ -1,2 +1,2 @@\n"
    " keep\n"
    "-old\n"
    "+new\n";

TEST(PatchNormalizeTest, PlainFormsRenderAsGitsForm) {
  const std::string plain = std::string(kGitForm).substr(33);  // No diff --git.
  ASSERT_EQ(plain.rfind("--- a/src/x.cc", 0), 0u);
  for (const std::string& text : {
           plain,
           // diff -u with timestamps (a tab, as GNU diff writes them).
           std::string("--- a/src/x.cc\t2026-01-01 10:00:00.000000000 +0000\n"
                       "+++ b/src/x.cc\t2026-01-02 11:00:00.123456789 +0100\n"
                       "@@ -1,2 +1,2 @@\n keep\n-old\n+new\n"),
           // Timestamps after spaces, no prefixes.
           std::string("--- src/x.cc 2026-01-01 10:00:00\n"
                       "+++ src/x.cc 2026-01-01 10:00:01 +0000\n"
                       "@@ -1,2 +1,2 @@\n keep\n-old\n+new\n"),
           // CRLF line ends and no final newline.
           std::string("--- a/src/x.cc\r\n+++ b/src/x.cc\r\n@@ -1,2 +1,2 @@\r\n"
                       " keep\r\n-old\r\n+new"),
           // Prose and a markdown fence around it.
           "Here is the fix:\n\n```diff\n" + plain + "```\nIt renames old.\n",
       }) {
    EXPECT_EQ(RenderUnifiedDiff(Parse(text)), kGitForm) << text;
  }
}

TEST(PatchNormalizeTest, PrefixesAreStrippedOnlyAsAPair) {
  // git diff --no-prefix in a repository with a top directory "a".
  const UnifiedDiff d = Parse(
      "--- a/x.cc\n+++ a/x.cc\n@@ -1 +1 @@\n-o\n+n\n"
      "--- b/y.cc\n+++ b/y.cc\n@@ -1 +1 @@\n-o\n+n\n");
  ASSERT_EQ(d.files.size(), 2u);
  EXPECT_EQ(d.files[0].path(), "a/x.cc");
  EXPECT_EQ(d.files[1].path(), "b/y.cc");
  // patch(1)'s form: "x.cc.orig" against "x.cc" patches x.cc.
  const UnifiedDiff orig =
      Parse("--- x.cc.orig\n+++ x.cc\n@@ -1 +1 @@\n-o\n+n\n");
  EXPECT_EQ(orig.files[0].old_path, "x.cc");
  EXPECT_EQ(orig.files[0].new_path, "x.cc");
  EXPECT_FALSE(orig.files[0].is_rename);
}

TEST(PatchNormalizeTest, DevNullMakesNewAndDeletedFiles) {
  const UnifiedDiff d = Parse(
      "--- /dev/null\n+++ b/new.cc\n@@ -0,0 +1,2 @@\n+a\n+b\n"
      "\\ No newline at end of file\n"
      "--- a/gone.cc\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n");
  ASSERT_EQ(d.files.size(), 2u);
  EXPECT_TRUE(d.files[0].is_new);
  EXPECT_EQ(d.files[0].new_mode, "100644");
  EXPECT_EQ(d.files[0].path(), "new.cc");
  EXPECT_TRUE(d.files[0].hunks[0].lines[1].no_newline);
  EXPECT_TRUE(d.files[1].is_deleted);
  EXPECT_EQ(d.files[1].path(), "gone.cc");
  const std::string git = RenderUnifiedDiff(d);
  EXPECT_NE(git.find("diff --git a/new.cc b/new.cc\nnew file mode 100644\n"
                     "--- /dev/null\n+++ b/new.cc\n"),
            std::string::npos)
      << git;
  EXPECT_NE(git.find("deleted file mode 100644\n--- a/gone.cc\n+++ /dev/null"),
            std::string::npos)
      << git;
}

TEST(PatchNormalizeTest, MalformedFormsSayWhereAndWhatWasExpected) {
  EXPECT_EQ(Err("   \n\n"), "the patch is empty");
  EXPECT_EQ(Err("--- a/x.cc\n+++ b/x.cc\n-old\n+new\n"),
            "line 3: a hunk header '@@ -a,b +c,d @@' expected after '+++ "
            "b/x.cc', got '-old'");
  EXPECT_EQ(Err("--- a/x.cc\n+++ b/x.cc\n"),
            "line 3: a hunk header '@@ -a,b +c,d @@' expected after '+++ "
            "b/x.cc', got the end of the patch");
  EXPECT_EQ(Err("--- a/x.cc\n@@ -1 +1 @@\n-o\n+n\n"),
            "line 2: a '+++ ' line expected after '--- a/x.cc', got '@@ -1 "
            "+1 @@'");
  EXPECT_EQ(Err("--- a/x.cc\n+++ b/x.cc\n@@ -1 +1\n-o\n+n\n"),
            "line 3:9: malformed hunk header '@@ -1 +1' (expected '@@ "
            "-a,b +c,d @@'): ' @@' after the new range expected, got the end "
            "of the line");
  EXPECT_EQ(Err("--- a/x.cc\n+++ b/x.cc\n@@ -a +1 @@\n-o\n+n\n"),
            "line 3:5: malformed hunk header '@@ -a +1 @@' (expected '@@ "
            "-a,b +c,d @@'): the old start line (a number up to 10^9) "
            "expected, got 'a +1 @@'");
  EXPECT_EQ(Err("--- \n+++ b/x.cc\n@@ -1 +1 @@\n-o\n+n\n"),
            "line 1: '---' line names no file (use /dev/null for a new or "
            "deleted file)");
  // Counts that do not match the body: too many, too few (the next hunk
  // starts early), an unknown prefix.
  EXPECT_EQ(Err("--- a/x.cc\n+++ b/x.cc\n@@ -1,2 +1,2 @@\n-o\n+n\n"
                "@@ -9 +9 @@\n-p\n+q\n"),
            "line 6: hunk 1 of 'x.cc' (line 3: '@@ -1,2 +1,2 @@') ends early: "
            "1 old and 1 new lines missing (its header counts 2 old and 2 "
            "new lines)");
  EXPECT_EQ(Err("--- a/x.cc\n+++ b/x.cc\n@@ -1 +1 @@\n-o\n+n\n+m\n"),
            "line 6: hunk 1 of 'x.cc' (line 3: '@@ -1 +1 @@') has more lines "
            "than its header counts (1 old, 1 new)");
  EXPECT_EQ(Err("--- a/x.cc\n+++ b/x.cc\n@@ -1,2 +1,2 @@\n-o\n*n\n"),
            "line 5:1: a hunk body line starts with ' ', '-', '+' or '\\', "
            "got '*n' (in hunk 1 of 'x.cc' (line 3: '@@ -1,2 +1,2 @@'); its "
            "counts may be wrong)");
  // Untrusted text is escaped in messages.
  EXPECT_EQ(Err("--- a/x.cc\n+++ b/x.cc\n@@ -1 +1 @@\n-o\n\x1b[2Jx\n"),
            "line 5:1: a hunk body line starts with ' ', '-', '+' or '\\', "
            "got '\\033[2Jx' (in hunk 1 of 'x.cc' (line 3: '@@ -1 +1 @@'); "
            "its counts may be wrong)");
}

TEST(PatchNormalizeTest, PathsThatLeaveTheRepositoryAreRefused) {
  auto diff_of = [](const std::string& path) {
    return "prose\n--- a/" + path + "\n+++ b/" + path +
           "\n@@ -1 +1 @@\n-o\n+n\n";
  };
  EXPECT_EQ(Err(diff_of("../etc/passwd")),
            "line 2: unsafe path '../etc/passwd': a '..' component leaves "
            "the repository");
  EXPECT_EQ(Err(diff_of("src/../../x")),
            "line 2: unsafe path 'src/../../x': a '..' component leaves the "
            "repository");
  EXPECT_EQ(Err(diff_of(".git/hooks/pre-commit")),
            "line 2: unsafe path '.git/hooks/pre-commit': the repository's "
            "own .git directory");
  EXPECT_EQ(Err(diff_of("sub/.GIT/config")),
            "line 2: unsafe path 'sub/.GIT/config': the repository's own "
            ".git directory");
  EXPECT_EQ(Err("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-o\n+n\n"),
            "line 1: unsafe path '/etc/passwd': an absolute path (paths are "
            "relative to the repository root)");
  EXPECT_EQ(Err("diff --git a/x b/x\nrename from x\nrename to ../y\n"),
            "line 1: unsafe path '../y': a '..' component leaves the "
            "repository");
  EXPECT_EQ(Err("diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n"
                "+++ b/l\n@@ -0,0 +1 @@\n+/etc\n"),
            "line 1: mode 120000 of 'l' is refused (a symbolic link): patches "
            "change regular files only");
  EXPECT_EQ(UnsafePathReason("a//b"),
            "an empty path component ('//' or a final '/')");
  EXPECT_EQ(UnsafePathReason("a\\..\\b"), "a backslash");
  EXPECT_EQ(UnsafePathReason("./x"), "a '.' component");
  EXPECT_EQ(UnsafePathReason("src/.gitignore"), "");
  EXPECT_EQ(UnsafePathReason("dir/file.cc"), "");
}

TEST(PatchNormalizeTest, CarriageReturnsAreDroppedOnlyWhenEveryLineHasOne) {
  EXPECT_EQ(DropTransportCarriageReturns("a\r\nb\r\n"), "a\nb\n");
  EXPECT_EQ(DropTransportCarriageReturns("a\r\nb\r"), "a\nb");
  EXPECT_EQ(DropTransportCarriageReturns("a\r\nb"), "a\nb");
  EXPECT_EQ(DropTransportCarriageReturns("a\nb\r\n"), "a\nb\r\n");
  EXPECT_EQ(DropTransportCarriageReturns("a\r\nb\n"), "a\r\nb\n");
  EXPECT_EQ(DropTransportCarriageReturns(""), "");
}

}  // namespace
}  // namespace trench::agents
