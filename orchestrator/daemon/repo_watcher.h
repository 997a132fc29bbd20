// The repo watcher: polls the target repository's watched branch through
// libgit2 (never writing it) and reports the commits that landed since the
// last poll. Its position lives in the store (meta "watch.last_commit"),
// so a restarted daemon neither misses nor repeats commits.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "orchestrator/store/store.h"
#include "git/git_repo.h"

namespace trench::orchestrator {

class RepoWatcher {
 public:
  // Errors: the repository does not open (kNotFound), or the branch does
  // not resolve ("repo R: branch main: ...").
  static StatusOr<std::unique_ptr<RepoWatcher>> Create(
      const std::string& repo, const std::string& branch);

  // The commits on the branch's first-parent line after the recorded one,
  // oldest first. The first poll ever gives the head alone and records it
  // as the known-good base (meta "watch.base"), unless one is recorded.
  // After a force-push that dropped the recorded commit: the head alone.
  StatusOr<std::vector<std::string>> Poll(Store& store);
  // Records `sha` as handled (after its jobs are queued).
  Status Commit(Store& store, const std::string& sha);

 private:
  RepoWatcher(std::string repo, std::string branch)
      : repo_(std::move(repo)), branch_(std::move(branch)) {}
  std::string repo_, branch_;
};

}  // namespace trench::orchestrator
