// Patch text from an untrusted author (the patch drafter, a model), made
// into a diff libgit2 can apply: ApplyPatchOnto (git/patch_apply.h) reads
// every patch through ParsePatchText and hands libgit2 the git-format
// rendering (RenderUnifiedDiff), so plain unified diffs apply too.
//
// Accepted: what ParseUnifiedDiff accepts (git/unified_diff.h: git's
// format, `diff -u` with or without timestamps, `git diff --no-prefix`,
// "a/" "b/" prefixes or none, /dev/null for new and deleted files,
// "\ No newline at end of file", several files, prose or a markdown fence
// around the diff), with CRLF line ends (when every line ends in "\r\n"
// they are taken as the transport's and dropped; see
// DropTransportCarriageReturns) and without a final newline.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "git/unified_diff.h"

namespace trench::agents {

// Parses `text` for applying. Errors (kInvalidArgument):
//   "the patch is empty" (nothing but blanks);
//   ParseUnifiedDiff's "line N[:C]: ..." errors;
//   "line N: unsafe path '<p>': <why>" for a path that is absolute, has a
//   "..", "." or empty component, a ".git" component (any case), a
//   backslash or a control character (UnsafePathReason);
//   "line N: mode <m> of '<p>' is refused (...)" for a symbolic link
//   (120000) or a submodule (160000): patches change regular files only.
// N is the line of the file's first header line in `text`.
StatusOr<UnifiedDiff> ParsePatchText(std::string_view text);

// Why the repository-relative '/'-separated `path` (from untrusted text)
// may not be written, or "" when it may.
std::string UnsafePathReason(std::string_view path);

// `text` without the "\r" of "\r\n" line ends when every line ends in
// "\r\n" (a last line without '\n' may end in "\r" or in neither);
// otherwise unchanged.
std::string DropTransportCarriageReturns(std::string_view text);

}  // namespace trench::agents
