#include "orchestrator/daemon/repo_watcher.h"

namespace trench::orchestrator {

StatusOr<std::unique_ptr<RepoWatcher>> RepoWatcher::Create(
    const std::string& repo, const std::string& branch) {
  ASSIGN_OR_RETURN(auto git, hlo_bisect::GitRepo::Open(repo));
  StatusOr<std::string> head = git->Resolve("refs/heads/" + branch);
  if (!head.ok()) {
    return head.status().WithContext("repo " + repo + ": branch " + branch);
  }
  return std::unique_ptr<RepoWatcher>(new RepoWatcher(repo, branch));
}

StatusOr<std::vector<std::string>> RepoWatcher::Poll(Store& store) {
  // Opened per poll: the repository changes under us (new objects, packs).
  ASSIGN_OR_RETURN(auto git, hlo_bisect::GitRepo::Open(repo_));
  ASSIGN_OR_RETURN(std::string head, git->Resolve("refs/heads/" + branch_));
  ASSIGN_OR_RETURN(std::optional<std::string> last,
                   store.GetMeta("watch.last_commit"));
  if (last && *last == head) return std::vector<std::string>();
  if (!last) {
    ASSIGN_OR_RETURN(std::optional<std::string> base,
                     store.GetMeta("watch.base"));
    if (!base) RETURN_IF_ERROR(store.SetMeta("watch.base", head));
    return std::vector<std::string>{head};
  }
  StatusOr<std::vector<std::string>> line = git->FirstParentRange(*last, head);
  if (!line.ok()) return std::vector<std::string>{head};  // History rewritten.
  return *line;
}

Status RepoWatcher::Commit(Store& store, const std::string& sha) {
  return store.SetMeta("watch.last_commit", sha);
}

}  // namespace trench::orchestrator
