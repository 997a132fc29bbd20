// libgit2 helpers shared by the code that works on git objects directly
// (git_repo.cc, git/patch_apply.cc): owning pointers, error Statuses that
// end with libgit2's own text, commit lookup and signatures.
#pragma once

#include <git2.h>

#include <memory>
#include <string>

#include "base/status.h"

namespace trench::hlo_bisect::git {

// libgit2 is initialized once per process and stays so.
void EnsureInit();

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const {
    if (p) Free(p);
  }
};
template <typename T, void (*Free)(T*)>
using Ptr = std::unique_ptr<T, Deleter<T, Free>>;
using Commit = Ptr<git_commit, git_commit_free>;
using Tree = Ptr<git_tree, git_tree_free>;
using TreeEntry = Ptr<git_tree_entry, git_tree_entry_free>;
using Blob = Ptr<git_blob, git_blob_free>;
using Index = Ptr<git_index, git_index_free>;
using Object = Ptr<git_object, git_object_free>;
using Reference = Ptr<git_reference, git_reference_free>;
using Revwalk = Ptr<git_revwalk, git_revwalk_free>;
using Signature = Ptr<git_signature, git_signature_free>;
using Diff = Ptr<git_diff, git_diff_free>;
using ConflictIterator =
    Ptr<git_index_conflict_iterator, git_index_conflict_iterator_free>;

// " (libgit2: <message>)" for the last libgit2 error.
std::string LastErrorText();
// A Status for libgit2 error `code` while doing `what`: kNotFound,
// kInvalidArgument (ambiguous, invalid spec), kFailedPrecondition
// (conflicts, locks), kIoError otherwise.
Status Error(int code, const std::string& what);
std::string OidHex(const git_oid* oid);
// The commit `rev` names (any revision syntax, peeled to a commit).
StatusOr<Commit> LookupCommit(git_repository* repo, const std::string& rev);
StatusOr<Tree> TreeOf(git_commit* commit);
// The repository's user.name/user.email, else "trench <trench@localhost>".
StatusOr<Signature> DefaultSignature(git_repository* repo);

}  // namespace trench::hlo_bisect::git

// Returns the libgit2 error Status when `call` fails.
#define TRENCH_GIT_RETURN_IF_ERROR(call, what)                         \
  do {                                                                 \
    const int _rc = (call);                                            \
    if (_rc < 0) return ::trench::hlo_bisect::git::Error(_rc, (what)); \
  } while (0)
