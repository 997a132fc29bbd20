// Patches as git objects (libgit2, over git/git_repo.h): the
// diff of a commit, a unified diff committed on top of a revision, a file
// at a revision. The daemon uses ApplyPatchOnto for try_patch, for its
// verification builds and for the trench/bug-<id> branch; the ToolBox
// uses DiffOfCommit / ReadFileAt for culprit_diff / read_source.
//
// Nothing here moves the repository's HEAD, index or working directory:
// new commits are written to the object database and, when asked, to one
// ref that is neither HEAD, the branch HEAD points to, nor `protected_ref`.
// Errors carry libgit2's own text ("... (libgit2: <message>)").
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "git/git_repo.h"

namespace trench::agents {

// The unified diff (git format, 3 lines of context, "a/" "b/" prefixes) of
// commit `rev` against its first parent (against the empty tree for a root
// commit), limited to paths matching `path_filter` (a file, a directory,
// or a git pathspec glob; "" = everything). "" when nothing matches.
// Errors: NotFound / InvalidArgument for a bad revision.
StatusOr<std::string> DiffOfCommit(const hlo_bisect::GitRepo& repo,
                                   const std::string& rev,
                                   const std::string& path_filter = "");
// The same between any two commits: what `to_rev`'s tree changes from
// `from_rev`'s (e.g. everything landed since a known-good commit, in the
// newer commit's line numbers). Errors: as above, for either revision.
StatusOr<std::string> DiffBetween(const hlo_bisect::GitRepo& repo,
                                  const std::string& from_rev,
                                  const std::string& to_rev);

// Applies `diff_text` (a unified diff whose paths are relative to the
// repository root: git's format or a plain one, as git/patch_normalize.h
// accepts; it is untrusted) to the tree of `base_rev` and commits the
// result with parent `base_rev` and `message`, authored by the
// repository's user or "trench <trench@localhost>". Like git apply, a hunk
// whose context is not at its stated line is applied at the nearest line
// where it matches exactly (no fuzz). When `ref` is non-empty (a full name
// like "refs/heads/trench/bug-7") it is created or moved to the new
// commit. Returns the new commit's sha.
// Errors:
//   InvalidArgument     the diff is empty, does not parse ("line N[:C]:
//                       ..." from ParsePatchText, naming what was expected
//                       and what was found), names an unsafe path or a
//                       symlink/submodule mode, or holds no change; `ref`
//                       is "HEAD", the branch HEAD points to,
//                       `protected_ref`, or not a valid "refs/..." name;
//   FailedPrecondition  "patch does not apply to <sha>: <file>: <why>"
//                       (<why>: the file is missing, exists although the
//                       patch creates it, is not a regular file, or "hunk
//                       K (patch line L, '@@ ...') matches nowhere in the
//                       file: at line M the file has '...' where the hunk
//                       expects '...'"); libgit2's own refusal as
//                       "patch does not apply to <sha>: <file> (libgit2:
//                       ...)";
//   NotFound            `base_rev` does not exist.
StatusOr<std::string> ApplyPatchOnto(hlo_bisect::GitRepo& repo,
                                     const std::string& base_rev,
                                     const std::string& diff_text,
                                     const std::string& message,
                                     const std::string& ref,
                                     const std::string& protected_ref = "");

// The contents of `path` (repository-relative, '/'-separated) in the tree
// of `rev`. Errors: NotFound for a missing revision or path;
// InvalidArgument when `path` names a directory or a submodule, or a file
// larger than `max_bytes` ("'<path>' at <rev> is N bytes, more than the M
// read"; the size comes from the object's header, so a huge file is never
// loaded).
StatusOr<std::string> ReadFileAt(const hlo_bisect::GitRepo& repo,
                                 const std::string& rev,
                                 const std::string& path,
                                 uint64_t max_bytes = UINT64_MAX);

}  // namespace trench::agents
