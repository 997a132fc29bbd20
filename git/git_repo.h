// A small RAII wrapper over libgit2 for the commit level of hlo-bisect
// (DESIGN.md "Data flowing through", point 5; "The daemon": the builder):
// resolve revisions, list the first-parent commits between a good and a bad
// commit, check a commit out into a worktree directory, revert a commit on
// top of another one, and commit files (tests, reverts). No `git` command is
// run; every error is a Status value whose message ends with libgit2's own
// error text ("... (libgit2: <message>)").
//
// The repository is only read, except that commits and revert branches
// (`refs/heads/trench/...`) are added by CommitFiles and RevertOnto. Neither
// the repository's HEAD, index nor working directory is ever written:
// worktrees are separate directories (CheckoutTo).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"

struct git_repository;

namespace trench::hlo_bisect {

// One commit, described for people.
struct CommitInfo {
  std::string sha;      // 40 hex digits.
  std::string summary;  // First line of the message.
  std::string author;   // "Name <email>".
  int64_t time = 0;     // Author time, seconds since the epoch.

  std::string ShortSha() const { return sha.substr(0, 12); }
  // {"sha", "short", "summary", "author", "time"}.
  Json ToJson() const;
};

// A file to write (content) or delete (nullopt) in CommitFiles.
struct FileChange {
  std::string path;  // Relative, '/'-separated.
  std::optional<std::string> content;
  bool executable = false;
};

// The result of RevertOnto.
struct RevertResult {
  std::string sha;         // The new commit (parent: the base).
  std::string branch;      // The ref it was stored under.
  std::string patch_hash;  // 16 hex: SHA-256 of the patch base -> revert.
};

class GitRepo {
 public:
  // Opens the repository at `path` (a working directory or a .git / bare
  // directory; no discovery of parents). NotFound when there is none. In
  // a repository this process may not write, new objects (a checkout's
  // empty tree, a revert) are kept in memory for this GitRepo, and no ref
  // is written.
  static StatusOr<std::unique_ptr<GitRepo>> Open(const std::string& path);
  // Creates a repository with a working directory at `path` (created).
  static StatusOr<std::unique_ptr<GitRepo>> Init(const std::string& path);

  GitRepo(const GitRepo&) = delete;
  GitRepo& operator=(const GitRepo&) = delete;
  ~GitRepo();

  // The repository's git directory.
  std::string git_dir() const;

  // The commit `revspec` names (any git revision syntax: sha, prefix,
  // branch, HEAD~3, tag). NotFound / InvalidArgument (ambiguous, malformed,
  // not a commit).
  StatusOr<std::string> Resolve(const std::string& revspec) const;
  StatusOr<CommitInfo> Describe(const std::string& revspec) const;

  // Creates a commit whose tree is `parent_rev`'s tree ("" : the empty tree,
  // a root commit) with `changes` applied, and points `ref` (e.g.
  // "refs/heads/main"; "" for none) at it (created or moved, force). The
  // author/committer is the repository's user.name/user.email, or
  // "trench <trench@localhost>". A non-empty `merge_rev` becomes the
  // second parent (a merge commit; the tree is still the first parent's
  // plus `changes`). Returns the new commit's sha.
  StatusOr<std::string> CommitFiles(const std::string& parent_rev,
                                    const std::vector<FileChange>& changes,
                                    const std::string& message,
                                    const std::string& ref,
                                    const std::string& merge_rev = "");

  // True when `rev`'s history holds `ancestor_rev`: it is `rev` or one of
  // its ancestors (any path, merges included), as `git merge-base
  // --is-ancestor`. NotFound / InvalidArgument as Resolve.
  StatusOr<bool> Contains(const std::string& rev,
                          const std::string& ancestor_rev) const;

  // The first-parent line from `bad_rev` (inclusive) back to `good_rev`
  // (exclusive), oldest first: like `git rev-list --first-parent
  // --reverse good..bad`. Errors: InvalidArgument when good == bad;
  // FailedPrecondition when good is not an ancestor of bad.
  StatusOr<std::vector<std::string>> FirstParentRange(
      const std::string& good_rev, const std::string& bad_rev) const;

  // Makes directory `dir` (created if missing) hold `rev`'s tree. The
  // commit checked out last is recorded in `dir`/.trench-checkout and
  // serves as the baseline: only files that differ between the two trees
  // (or that were modified on disk) are written or removed, so unchanged
  // files keep their mtime and an incremental build in a reused worktree
  // stays incremental. Untracked files (e.g. a build directory) are kept.
  // Without a usable baseline every tracked file is written.
  Status CheckoutTo(const std::string& rev, const std::string& dir) const;

  // Reverts commit `culprit_rev` on top of `base_rev` (git revert, in
  // memory: neither HEAD nor the index moves) and commits the result
  // (parent: base; message "Revert \"<summary>\"") under
  // refs/heads/trench/revert-<culprit 12 hex>-on-<base 12 hex> (replaced if
  // present). Errors: FailedPrecondition "revert of C on B conflicts in:
  // a, b" when the revert does not apply cleanly.
  // In a repository this process may not write, the commit is kept in
  // memory for this GitRepo (branch "").
  StatusOr<RevertResult> RevertOnto(const std::string& culprit_rev,
                                    const std::string& base_rev);

  // The libgit2 handle, for helpers outside this class (git/patch_apply.h).
  // Owned by this object.
  git_repository* raw() const { return repo_; }

 private:
  explicit GitRepo(git_repository* repo) : repo_(repo) {}
  // Whether we may write the repository's objects and refs.
  bool Writable() const;
  // New objects go to memory from now on (for a read-only repository).
  Status KeepNewObjectsInMemory();

  git_repository* repo_;
  bool in_memory_ = false;
};

}  // namespace trench::hlo_bisect
