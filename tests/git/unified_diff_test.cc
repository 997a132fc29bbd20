// git/unified_diff.h: parse, render, invert, select, relocate, apply;
// round trips over the bug zoo's patches and hand-made edge cases.
#include "git/unified_diff.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace trench::agents {
namespace {

std::string ReadText(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

UnifiedDiff Parse(const std::string& text) {
  StatusOr<UnifiedDiff> d = ParseUnifiedDiff(text);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? *d : UnifiedDiff();
}

std::string Err(const std::string& text) {
  StatusOr<UnifiedDiff> d = ParseUnifiedDiff(text);
  EXPECT_FALSE(d.ok()) << text;
  return d.ok() ? "" : d.status().message();
}

std::vector<std::string> Numbered(int n, const std::string& prefix = "l") {
  std::vector<std::string> v;
  for (int i = 1; i <= n; ++i) v.push_back(prefix + std::to_string(i));
  return v;
}

// A diff of Numbered(20) with three hunks: l3 changed, l10 removed, a line
// added after l17.
const char kThreeHunks[] =
    "diff --git a/f.txt b/f.txt\n"
    "--- a/f.txt\n"
    "+++ b/f.txt\n"
    "@@ -2,3 +2,3 @@ section one\n"
    " l2\n"
    "-l3\n"
    "+L3\n"
    " l4\n"
    "@@ -9,3 +9,2 @@\n"
    " l9\n"
    "-l10\n"
    " l11\n"
    "@@ -17,2 +16,3 @@\n"
    " l17\n"
    "+new\n"
    " l18\n";

TEST(UnifiedDiffTest, ZooPatchesRoundTrip) {
  const std::filesystem::path zoo =
      std::filesystem::path(TRENCH_SOURCE_DIR) / "tests" / "bugzoo";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(zoo)) {
    const auto patch = entry.path() / "bug.patch";
    if (!std::filesystem::exists(patch)) continue;
    const std::string text = ReadText(patch);
    const UnifiedDiff d = Parse(text);
    ASSERT_EQ(d.files.size(), 1u) << patch;
    EXPECT_EQ(RenderUnifiedDiff(d), text) << patch;
    // Reverting twice gives the patch back.
    EXPECT_EQ(RenderUnifiedDiff(InvertDiff(InvertDiff(d))), text) << patch;
    ++seen;
  }
  EXPECT_GE(seen, 12);
}

TEST(UnifiedDiffTest, ParsesCountsAndSections) {
  const UnifiedDiff d = Parse(kThreeHunks);
  ASSERT_EQ(d.files.size(), 1u);
  EXPECT_EQ(d.files[0].path(), "f.txt");
  ASSERT_EQ(d.HunkCount(), 3);
  EXPECT_EQ(d.ChangedLines(), 4);
  const Hunk& h = d.files[0].hunks[1];
  EXPECT_EQ(h.old_start, 9);
  EXPECT_EQ(h.old_count, 3);
  EXPECT_EQ(h.new_count, 2);
  EXPECT_EQ(d.files[0].hunks[0].section, "section one");
  EXPECT_EQ(RenderUnifiedDiff(d), kThreeHunks);
}

TEST(UnifiedDiffTest, ApplyAndRevertRestoreTheText) {
  const UnifiedDiff d = Parse(kThreeHunks);
  const std::vector<std::string> before = Numbered(20);
  StatusOr<std::vector<std::string>> after = ApplyHunks(d.files[0], before);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ((*after)[2], "L3");
  EXPECT_EQ(after->size(), 20u);
  const UnifiedDiff r = InvertDiff(d);
  StatusOr<std::vector<std::string>> back = ApplyHunks(r.files[0], *after);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, before);
  // The revert does not apply to the original text.
  EXPECT_FALSE(ApplyHunks(r.files[0], before).ok());
}

TEST(UnifiedDiffTest, SelectedHunksApplyOnTheirOwn) {
  const UnifiedDiff r = InvertDiff(Parse(kThreeHunks));
  const std::vector<std::string> after =
      *ApplyHunks(Parse(kThreeHunks).files[0], Numbered(20));
  // Only the last two hunks of the revert: l10 back, "new" gone; l3 stays.
  const UnifiedDiff part = SelectHunks(r, {1, 2});
  ASSERT_EQ(part.HunkCount(), 2);
  EXPECT_EQ(part.files[0].hunks[0].new_start, 9);
  StatusOr<std::vector<std::string>> got = ApplyHunks(part.files[0], after);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::vector<std::string> want = Numbered(20);
  want[2] = "L3";
  EXPECT_EQ(*got, want);
  // The rendered subset parses back to itself (counts are consistent).
  EXPECT_EQ(RenderUnifiedDiff(Parse(RenderUnifiedDiff(part))),
            RenderUnifiedDiff(part));
  EXPECT_EQ(SelectHunks(r, {}).files.size(), 0u);
}

TEST(UnifiedDiffTest, RelocatesHunksOntoShiftedText) {
  const UnifiedDiff r = InvertDiff(Parse(kThreeHunks));
  std::vector<std::string> head =
      *ApplyHunks(Parse(kThreeHunks).files[0], Numbered(20));
  // A later commit put 5 lines on top and changed l18 (the context of the
  // last hunk).
  head.insert(head.begin(), {"a", "b", "c", "d", "e"});
  head[5 + 17] = "l18 changed";
  std::vector<int> dropped;
  const FileDiff moved = RelocateHunks(r.files[0], head, &dropped);
  EXPECT_EQ(dropped, std::vector<int>{2});
  ASSERT_EQ(moved.hunks.size(), 2u);
  EXPECT_EQ(moved.hunks[0].old_start, 7);
  StatusOr<std::vector<std::string>> got = ApplyHunks(moved, head);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)[5 + 2], "l3");
  EXPECT_EQ((*got)[5 + 9], "l10");
}

TEST(UnifiedDiffTest, NewDeletedModeRenameBinaryAndNoNewline) {
  const std::string text =
      "From 1234 Mon Sep 17 00:00:00 2001\n"
      "Subject: a commit message before the diff\n"
      "\n"
      "diff --git a/new.txt b/new.txt\n"
      "new file mode 100644\n"
      "index 0000000..3b18e51\n"
      "--- /dev/null\n"
      "+++ b/new.txt\n"
      "@@ -0,0 +1,2 @@\n"
      "+hello\n"
      "+world\n"
      "\\ No newline at end of file\n"
      "diff --git a/old.txt b/old.txt\n"
      "deleted file mode 100755\n"
      "index 3b18e51..0000000\n"
      "--- a/old.txt\n"
      "+++ /dev/null\n"
      "@@ -1 +0,0 @@\n"
      "-bye\n"
      "diff --git a/run.sh b/run.sh\n"
      "old mode 100644\n"
      "new mode 100755\n"
      "diff --git a/x y.c b/z.c\n"
      "similarity index 90%\n"
      "rename from x y.c\n"
      "rename to z.c\n"
      "diff --git a/img.png b/img.png\n"
      "index 1111111..2222222 100644\n"
      "Binary files a/img.png and b/img.png differ\n"
      "diff --git \"a/tab\\there\" \"b/tab\\there\"\n"
      "--- \"a/tab\\there\"\n"
      "+++ \"b/tab\\there\"\n"
      "@@ -1 +1 @@\n"
      "-x\n"
      "+y\n";
  const UnifiedDiff d = Parse(text);
  ASSERT_EQ(d.files.size(), 6u);
  EXPECT_TRUE(d.files[0].is_new);
  EXPECT_EQ(d.files[0].old_path, "");
  EXPECT_TRUE(d.files[0].hunks[0].lines[1].no_newline);
  EXPECT_TRUE(d.files[1].is_deleted);
  EXPECT_EQ(d.files[1].old_mode, "100755");
  EXPECT_EQ(d.files[2].new_mode, "100755");
  EXPECT_TRUE(d.files[3].is_rename);
  EXPECT_EQ(d.files[3].old_path, "x y.c");
  EXPECT_TRUE(d.files[4].binary);
  EXPECT_EQ(d.files[5].path(), "tab\there");
  // The preamble is not part of the rendering; the rest is exact.
  const std::string body = text.substr(text.find("diff --git"));
  EXPECT_EQ(RenderUnifiedDiff(d), body);
  const UnifiedDiff r = InvertDiff(d);
  EXPECT_TRUE(r.files[0].is_deleted);
  EXPECT_TRUE(r.files[1].is_new);
  EXPECT_EQ(r.files[1].new_mode, "100755");
  EXPECT_EQ(r.files[2].new_mode, "100644");
  EXPECT_EQ(r.files[0].hunks[0].old_count, 2);
  EXPECT_EQ(RenderUnifiedDiff(InvertDiff(r)), body);
}

TEST(UnifiedDiffTest, PlainDiffUAndEmptyContextLines) {
  const UnifiedDiff d = Parse(
      "--- f.c\t2026-01-01 00:00:00\n"
      "+++ f.c\t2026-01-02 00:00:00\n"
      "@@ -1,3 +1,3 @@\n"
      " a\n"
      "\n"  // An editor stripped the context line's space.
      "-b\n"
      "+c\n");
  ASSERT_EQ(d.files.size(), 1u);
  EXPECT_EQ(d.files[0].old_path, "f.c");
  EXPECT_EQ(d.files[0].hunks[0].lines[1].text, "");
}

TEST(UnifiedDiffTest, MalformedTextNamesTheLine) {
  const std::string head = "diff --git a/f b/f\n--- a/f\n+++ b/f\n";
  EXPECT_EQ(Err(head + "@@ -1,x +1 @@\n-a\n"),
            "line 4:7: malformed hunk header '@@ -1,x +1 @@' (expected "
            "'@@ -a,b +c,d @@'): the old line count (a number up to 10^9) "
            "after ',' expected, got 'x +1 @@'");
  EXPECT_EQ(Err(head + "@@ -1,2 +1,2 @@\n a\n"),
            "line 4: hunk 1 of 'f' (line 4: '@@ -1,2 +1,2 @@') ends early at "
            "the end of the patch: 1 old and 1 new lines missing (its header "
            "counts 2 old and 2 new lines)");
  EXPECT_NE(Err(head + "@@ -1,2 +1,2 @@\n a\n*b\n").find("line 6:"),
            std::string::npos);
  EXPECT_NE(Err(head + "@@ -1 +1,2 @@\n-a\n-b\n+c\n").find("line 6: more '-'"),
            std::string::npos);
  EXPECT_NE(Err("@@ -1 +1 @@\n-a\n+b\n").find("line 1: hunk outside"),
            std::string::npos);
  EXPECT_NE(Err("diff --git a/f b/f\n--- a/f\nfoo\n").find("line 2:"),
            std::string::npos);
  EXPECT_NE(Err("just some text\n").find("no file diff"), std::string::npos);
  EXPECT_NE(
      Err(head + "@@ -1 +1 @@\n\\ No newline at end of file\n").find("line 5:"),
      std::string::npos);
  EXPECT_NE(Err(head + "@@ -99999999999 +1 @@\n-a\n+b\n").find("line 4:"),
            std::string::npos);
}

TEST(UnifiedDiffTest, SplitLines) {
  EXPECT_EQ(SplitLines(""), std::vector<std::string>{});
  EXPECT_EQ(SplitLines("a\nb\n"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(SplitLines("a\n\nb"), (std::vector<std::string>{"a", "", "b"}));
}

}  // namespace
}  // namespace trench::agents
