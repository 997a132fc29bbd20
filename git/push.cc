#include "git/push.h"

#include <git2.h>

#include "git/git_util.h"

namespace trench::orchestrator {
namespace {

namespace g = hlo_bisect::git;
using Repository = g::Ptr<git_repository, git_repository_free>;
using Remote = g::Ptr<git_remote, git_remote_free>;

struct PushState {
  const PushRequest* request = nullptr;
  std::string rejected;  // The remote's reason for refusing the update.
  int credential_calls = 0;
};

int Credentials(git_credential** out, const char* /*url*/,
                const char* /*username*/, unsigned int allowed, void* payload) {
  auto* state = static_cast<PushState*>(payload);
  // One try: libgit2 asks again after a refusal.
  if (state->request->token.empty() || state->credential_calls++ > 0 ||
      !(allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT)) {
    return GIT_PASSTHROUGH;
  }
  return git_credential_userpass_plaintext_new(out, "x-access-token",
                                               state->request->token.c_str());
}

int PushUpdateReference(const char* refname, const char* status,
                        void* payload) {
  if (status != nullptr) {
    static_cast<PushState*>(payload)->rejected =
        std::string(refname) + ": " + status;
  }
  return 0;
}

}  // namespace

StatusOr<std::string> PushBranch(const PushRequest& r) {
  const std::string ref = "refs/heads/" + r.branch;
  g::EnsureInit();
  int valid = 0;
  if (r.branch.empty() ||
      git_reference_name_is_valid(&valid, ref.c_str()) < 0 || !valid) {
    return FailedPrecondition("push: '" + r.branch + "' is not a branch name");
  }
  if (ref == r.protected_ref) {
    return FailedPrecondition("push: refusing to write " + ref +
                              ", the watched branch");
  }
  git_repository* raw = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(
      git_repository_open_ext(&raw, r.repo.c_str(),
                              GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr),
      "push: cannot open " + r.repo);
  Repository repo(raw);
  git_oid oid;
  TRENCH_GIT_RETURN_IF_ERROR(
      git_reference_name_to_id(&oid, repo.get(), ref.c_str()),
      "push: no branch " + r.branch + " in " + r.repo);
  git_remote* remote_raw = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(
      git_remote_create_anonymous(&remote_raw, repo.get(), r.remote.c_str()),
      "push: bad remote " + r.remote);
  Remote remote(remote_raw);
  std::string spec = "+" + ref + ":" + ref;
  char* specs[] = {spec.data()};
  git_strarray refspecs = {specs, 1};
  PushState state;
  state.request = &r;
  git_push_options opts;
  git_push_options_init(&opts, GIT_PUSH_OPTIONS_VERSION);
  opts.callbacks.credentials = Credentials;
  opts.callbacks.push_update_reference = PushUpdateReference;
  opts.callbacks.payload = &state;
  const int rc = git_remote_push(remote.get(), &refspecs, &opts);
  if (rc < 0) {
    return IoError("push of " + r.branch + " to " + r.remote + " failed" +
                   g::LastErrorText());
  }
  if (!state.rejected.empty()) {
    return IoError("push of " + r.branch + " to " + r.remote +
                   " refused: " + state.rejected);
  }
  return g::OidHex(&oid);
}

}  // namespace trench::orchestrator
