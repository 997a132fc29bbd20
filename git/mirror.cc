#include "git/mirror.h"

#include <git2.h>

#include <filesystem>

namespace trench::orchestrator {
namespace {

Status GitError(const std::string& what) {
  const git_error* e = git_error_last();
  return IoError(what + " (libgit2: " + (e && e->message ? e->message : "?") +
                 ")");
}

}  // namespace

Status SyncMirror(const std::string& source, const std::string& mirror_dir) {
  git_libgit2_init();
  const std::string context = "mirror of " + source + " in " + mirror_dir;
  git_repository* repo = nullptr;
  std::error_code ec;
  const bool exists = std::filesystem::exists(mirror_dir + "/HEAD", ec);
  int rc = exists ? git_repository_open_bare(&repo, mirror_dir.c_str())
                  : git_repository_init(&repo, mirror_dir.c_str(), 1);
  if (rc != 0) {
    Status s = GitError(context + ": cannot open");
    git_libgit2_shutdown();
    return s;
  }
  const std::string url =
      std::filesystem::absolute(source, ec).lexically_normal().string();
  git_remote* remote = nullptr;
  Status result = Status::Ok();
  if (git_remote_create_anonymous(&remote, repo, url.c_str()) != 0) {
    result = GitError(context + ": bad source");
  } else {
    char refspec[] = "+refs/heads/*:refs/heads/*";
    char* specs[] = {refspec};
    git_strarray refspecs = {specs, 1};
    git_fetch_options opts;
    git_fetch_options_init(&opts, GIT_FETCH_OPTIONS_VERSION);
    if (git_remote_fetch(remote, &refspecs, &opts, nullptr) != 0) {
      result = GitError(context + ": fetch failed");
    }
    git_remote_free(remote);
  }
  git_repository_free(repo);
  git_libgit2_shutdown();
  return result;
}

}  // namespace trench::orchestrator
