#include "git/git_util.h"

namespace trench::hlo_bisect::git {

void EnsureInit() {
  static const int once = [] {
    const int n = git_libgit2_init();
    // GitRepo::Open never searches parents and opens only the paths it is
    // given: a repository another uid owns (the daemon's mirror, read by a
    // sandboxed build) is opened as asked.
    git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
    return n;
  }();
  (void)once;
}

std::string LastErrorText() {
  const git_error* e = git_error_last();
  return std::string(" (libgit2: ") +
         (e && e->message ? e->message : "unknown error") + ")";
}

Status Error(int code, const std::string& what) {
  const std::string msg = what + LastErrorText();
  switch (code) {
    case GIT_ENOTFOUND:
      return NotFound(msg);
    case GIT_EAMBIGUOUS:
    case GIT_EINVALIDSPEC:
    case GIT_EINVALID:
      return InvalidArgument(msg);
    case GIT_ECONFLICT:
    case GIT_EMERGECONFLICT:
    case GIT_EUNMERGED:
    case GIT_ELOCKED:
      return FailedPrecondition(msg);
    default:
      return IoError(msg);
  }
}

std::string OidHex(const git_oid* oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof(buf), oid);
  return buf;
}

StatusOr<Commit> LookupCommit(git_repository* repo, const std::string& rev) {
  git_object* obj = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(git_revparse_single(&obj, repo, rev.c_str()),
                             "cannot resolve revision '" + rev + "'");
  Object owned(obj);
  git_object* peeled = nullptr;
  if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) < 0) {
    return InvalidArgument("revision '" + rev + "' does not name a commit" +
                           LastErrorText());
  }
  return Commit(reinterpret_cast<git_commit*>(peeled));
}

StatusOr<Tree> TreeOf(git_commit* commit) {
  git_tree* tree = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(
      git_commit_tree(&tree, commit),
      "cannot read the tree of commit " + OidHex(git_commit_id(commit)));
  return Tree(tree);
}

StatusOr<Signature> DefaultSignature(git_repository* repo) {
  git_signature* sig = nullptr;
  if (git_signature_default(&sig, repo) == 0) return Signature(sig);
  TRENCH_GIT_RETURN_IF_ERROR(
      git_signature_now(&sig, "trench", "trench@localhost"),
      "cannot make a commit signature");
  return Signature(sig);
}

}  // namespace trench::hlo_bisect::git
