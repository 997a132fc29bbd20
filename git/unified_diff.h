// Unified diffs as data (git's format): parse, invert (revert), select
// hunks, move hunks onto a newer version of a file, render.
//
// The patch drafter (agents/patch_strategies.h) works on these: it turns
// the culprit commit's diff into reverts of some of its hunks, and writes
// one-hunk fixes of its own. The text it hands to try_patch is Render()'s.
//
// Accepted input: git's `diff`/`format-patch` output and plain `diff -u`:
// optional preamble text (commit message), per file an optional
// "diff --git a/X b/Y" line, the extended headers git writes (new/deleted
// file mode, old/new mode, index, similarity/rename/copy, binary markers),
// "--- a/X" / "+++ b/Y" (or /dev/null), and hunks "@@ -s[,c] +s[,c] @@
// section" whose bodies must hold exactly the counted lines (' ', '-', '+',
// an empty line as empty context, "\ No newline at end of file"). Lines
// between files that fit none of these are ignored (text an author put
// between hunks, a markdown fence); inside a hunk body nothing is ignored.
//
// File names on ---/+++ lines: a tab and what follows (diff -u's
// timestamp) is dropped, and in a plain diff (no "diff --git" line) also
// trailing blanks and a trailing " YYYY-MM-DD hh:mm:ss[.frac][ +zone]";
// "a/" and "b/" are stripped only as a pair (old "a/..." or
// /dev/null, new "b/..." or /dev/null), so `git diff --no-prefix` paths
// stay whole. A file without a "diff --git" line (plain diff): "/dev/null"
// on the old side makes it a new file (mode 100644), on the new side a
// deletion (mode 100644), and when the two names differ the "+++" one is
// the file patched (as patch(1) does; no rename).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trench::agents {

struct DiffLine {
  char kind = ' ';          // ' ' context, '-' removed, '+' added.
  std::string text;         // Without the kind character and the '\n'.
  bool no_newline = false;  // Followed by "\ No newline at end of file".
};

struct Hunk {
  // Git's numbering: 1-based first line; with a count of 0 the start is
  // the line BEFORE the (empty) range.
  int64_t old_start = 0, old_count = 0;
  int64_t new_start = 0, new_count = 0;
  std::string section;  // Text after the closing "@@" (may be empty).
  std::vector<DiffLine> lines;
  int64_t line = 0;  // 1-based line of its "@@" in the parsed text (0: made).
};

struct FileDiff {
  std::string old_path;     // Without "a/"; "" for /dev/null (a new file).
  std::string new_path;     // Without "b/"; "" for /dev/null (a deletion).
  bool is_new = false;      // "new file mode <new_mode>".
  bool is_deleted = false;  // "deleted file mode <old_mode>".
  bool is_rename = false;   // "rename from/to" (old_path != new_path).
  bool is_copy = false;     // "copy from/to".
  std::string similarity;   // "similarity index" value, e.g. "90%".
  std::string old_mode, new_mode;                // "" when not given.
  std::string index_old, index_new, index_mode;  // From the "index" line.
  bool binary = false;  // A binary change (kept, but has no hunks).
  std::vector<Hunk> hunks;
  int64_t line = 0;  // 1-based line of its first header line (0: made).

  // The path the change is about: new_path, or old_path for a deletion.
  const std::string& path() const {
    return new_path.empty() ? old_path : new_path;
  }
};

struct UnifiedDiff {
  std::vector<FileDiff> files;

  int HunkCount() const;
  // Number of '+' and '-' lines over all hunks (the size of the change).
  int ChangedLines() const;
};

// Parses `text`. Errors (kInvalidArgument, "line N: ..." or "line N:C: ..."
// with 1-based lines and columns; offending text is quoted C-style and cut
// at 60 characters):
//   a malformed "@@" header ("line 4:5: malformed hunk header '...'
//   (expected '@@ -a,b +c,d @@'): <what> expected, got '...'");
//   in a plain diff, a "+++" line not followed by a hunk header ("line 3: a
//   hunk header '@@ -a,b +c,d @@' expected after '+++ b/x.cc', got '...'");
//   a hunk outside of a file, "---" without "+++" (and the reverse), a
//   "---"/"+++" line that names no file;
//   a hunk body shorter or longer than its header counts (naming the hunk,
//   its file and its header's line), a body line with an unknown prefix;
//   no file diff at all.
StatusOr<UnifiedDiff> ParseUnifiedDiff(std::string_view text);

// Git-style text: "diff --git" line, headers, ---/+++ (omitted for a file
// with no hunks), hunks with counts (",1" omitted as git does). Parsing the
// result gives back an equal diff.
std::string RenderUnifiedDiff(const UnifiedDiff& diff);

// The reverse patch: applying it to the post-image gives the pre-image
// (paths, modes, new/deleted and index swapped; '+' and '-' swapped).
UnifiedDiff InvertDiff(const UnifiedDiff& diff);

// Only the hunks whose global index (file order, then hunk order, from 0)
// is in `hunks`; a file is kept iff one of its hunks is (so mode-only and
// binary changes are dropped). The new-side starts are renumbered
// (RenumberNewSide) so the result applies on its own.
UnifiedDiff SelectHunks(const UnifiedDiff& diff, const std::vector<int>& hunks);

// Recomputes each hunk's new_start from its old_start and the line-count
// changes of the hunks before it in the file; recomputes the counts from
// the lines. REQUIRES: hunks sorted by old_start, not overlapping.
void RenumberNewSide(FileDiff* file);

// Moves the hunks of `file` onto `lines` (the current version of the file,
// one element per line without '\n'): each hunk's pre-image (context and
// '-' lines) is looked for at its stated place first, then at the nearest
// place where it matches exactly. Hunks whose pre-image is nowhere (or
// that would overlap a hunk placed before them) are dropped and their
// indices (within `file`) appended to `dropped`. Returns the moved file
// diff, renumbered.
FileDiff RelocateHunks(const FileDiff& file,
                       const std::vector<std::string>& lines,
                       std::vector<int>* dropped);

// Applies the hunks of `file` to `lines` at exactly their stated places
// (no search, like git apply without fuzz). kFailedPrecondition "hunk K
// (@@ -s,c) does not match line s" when a pre-image line differs or hunks
// overlap. "\ No newline" markers are ignored.
StatusOr<std::vector<std::string>> ApplyHunks(
    const FileDiff& file, const std::vector<std::string>& lines);

// `s` for an error message: in single quotes, C-style escapes for
// quotes, backslashes and control characters, cut at 60 characters
// ("...'" then).
std::string ShownInMessage(std::string_view s);

// Splits text into lines without their '\n' (a final line without '\n'
// counts as a line; "" gives no lines).
std::vector<std::string> SplitLines(std::string_view text);
// Same, as views into `text` (which must outlive them).
std::vector<std::string_view> SplitLineViews(std::string_view text);

}  // namespace trench::agents
