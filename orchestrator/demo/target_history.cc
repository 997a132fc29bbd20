#include "orchestrator/demo/target_history.h"

#include <git2.h>

#include <algorithm>

#include "git/git_util.h"

namespace trench::orchestrator {

namespace git = hlo_bisect::git;
using hlo_bisect::FileChange;
using hlo_bisect::GitRepo;

const std::vector<std::string>& TargetSidePaths() {
  static const std::vector<std::string> kPaths = {
      "CMakeLists.txt", "cmake", "base", "compiler", "tpu", "tools"};
  return kPaths;
}

namespace {

bool OnTargetSide(const std::string& path) {
  for (const std::string& p : TargetSidePaths()) {
    if (path == p || (path.size() > p.size() && path.starts_with(p) &&
                      path[p.size()] == '/')) {
      return true;
    }
  }
  return false;
}

StatusOr<FileChange> BlobChange(git_repository* repo, const std::string& path,
                                const git_oid* id, git_filemode_t mode) {
  git_blob* raw = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(git_blob_lookup(&raw, repo, id),
                             "cannot read " + path);
  git::Blob blob(raw);
  const char* data = static_cast<const char*>(git_blob_rawcontent(blob.get()));
  return FileChange{
      path,
      std::string(data, static_cast<size_t>(git_blob_rawsize(blob.get()))),
      mode == GIT_FILEMODE_BLOB_EXECUTABLE};
}

// The target side's files in `tree`.
StatusOr<std::vector<FileChange>> TargetFilesOf(git_repository* repo,
                                                git_tree* tree) {
  struct Walk {
    git_repository* repo;
    std::vector<FileChange> files;
    Status status = Status::Ok();
  } walk{repo, {}, Status::Ok()};
  auto cb = [](const char* root, const git_tree_entry* e, void* payload) {
    Walk* w = static_cast<Walk*>(payload);
    const std::string path = std::string(root) + git_tree_entry_name(e);
    if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
      // Descend only where the target side can be.
      for (const std::string& p : TargetSidePaths()) {
        if (p == path || p.starts_with(path + "/") ||
            path.starts_with(p + "/")) {
          return 0;
        }
      }
      return 1;  // Skip this subtree.
    }
    const git_filemode_t mode = git_tree_entry_filemode(e);
    if (git_tree_entry_type(e) != GIT_OBJECT_BLOB || !OnTargetSide(path) ||
        (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE)) {
      return 0;
    }
    StatusOr<FileChange> f =
        BlobChange(w->repo, path, git_tree_entry_id(e), mode);
    if (!f.ok()) {
      w->status = f.status();
      return -1;
    }
    w->files.push_back(std::move(*f));
    return 0;
  };
  const int rc = git_tree_walk(tree, GIT_TREEWALK_PRE, cb, &walk);
  if (!walk.status.ok()) return walk.status;
  TRENCH_GIT_RETURN_IF_ERROR(rc, "cannot walk a tree");
  return std::move(walk.files);
}

// What `commit` changes on the target side against its first parent.
StatusOr<std::vector<FileChange>> TargetChanges(git_repository* repo,
                                                git_commit* commit,
                                                git_commit* parent) {
  ASSIGN_OR_RETURN(git::Tree tree, git::TreeOf(commit));
  ASSIGN_OR_RETURN(git::Tree parent_tree, git::TreeOf(parent));
  std::vector<std::string> specs = TargetSidePaths();
  std::vector<char*> spec_ptrs;
  for (std::string& s : specs) spec_ptrs.push_back(s.data());
  git_diff_options opts;
  git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
  opts.pathspec.strings = spec_ptrs.data();
  opts.pathspec.count = spec_ptrs.size();
  git_diff* raw = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(
      git_diff_tree_to_tree(&raw, repo, parent_tree.get(), tree.get(), &opts),
      "cannot diff a commit");
  git::Diff diff(raw);
  std::vector<FileChange> changes;
  for (size_t i = 0; i < git_diff_num_deltas(diff.get()); ++i) {
    const git_diff_delta* d = git_diff_get_delta(diff.get(), i);
    if (d->status == GIT_DELTA_DELETED) {
      changes.push_back({d->old_file.path, std::nullopt, false});
      continue;
    }
    const git_filemode_t mode = static_cast<git_filemode_t>(d->new_file.mode);
    if (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE) {
      continue;  // Links and submodules are not replayed.
    }
    ASSIGN_OR_RETURN(FileChange f,
                     BlobChange(repo, d->new_file.path, &d->new_file.id, mode));
    changes.push_back(std::move(f));
  }
  return changes;
}

}  // namespace

StatusOr<TargetHistory> ReadTargetHistory(const std::string& source_dir,
                                          int count) {
  StatusOr<std::unique_ptr<GitRepo>> opened = GitRepo::Open(source_dir);
  if (!opened.ok()) {
    return NotFound(
        "no git repository at " + source_dir +
        " to replay the target's history from: " + opened.status().message());
  }
  git_repository* repo = (*opened)->raw();
  git_revwalk* raw_walk = nullptr;
  TRENCH_GIT_RETURN_IF_ERROR(git_revwalk_new(&raw_walk, repo),
                             "cannot walk the history");
  git::Revwalk walk(raw_walk);
  git_revwalk_simplify_first_parent(walk.get());
  TRENCH_GIT_RETURN_IF_ERROR(git_revwalk_push_head(walk.get()),
                             "cannot walk from HEAD");
  TargetHistory h;
  git_oid oid;
  int seen = 0;
  while (static_cast<int>(h.commits.size()) < count &&
         git_revwalk_next(&oid, walk.get()) == 0) {
    ++seen;
    git_commit* raw = nullptr;
    TRENCH_GIT_RETURN_IF_ERROR(git_commit_lookup(&raw, repo, &oid),
                               "cannot read a commit");
    git::Commit commit(raw);
    git_commit* raw_parent = nullptr;
    // A root commit, or a shallow clone's graft: the history ends here.
    if (git_commit_parentcount(commit.get()) == 0 ||
        git_commit_parent(&raw_parent, commit.get(), 0) != 0) {
      break;
    }
    git::Commit parent(raw_parent);
    ASSIGN_OR_RETURN(std::vector<FileChange> changes,
                     TargetChanges(repo, commit.get(), parent.get()));
    if (changes.empty()) continue;
    HistoryCommit c;
    c.sha = git::OidHex(&oid);
    const char* message = git_commit_message(commit.get());
    c.message = message ? message : "";
    c.changes = std::move(changes);
    h.commits.push_back(std::move(c));
    if (static_cast<int>(h.commits.size()) == count) {
      h.base_sha = git::OidHex(git_commit_id(parent.get()));
      ASSIGN_OR_RETURN(git::Tree base_tree, git::TreeOf(parent.get()));
      ASSIGN_OR_RETURN(h.base_files, TargetFilesOf(repo, base_tree.get()));
    }
  }
  if (static_cast<int>(h.commits.size()) < count) {
    return FailedPrecondition(
        "the history of " + source_dir + " has " +
        std::to_string(h.commits.size()) +
        " commits that change the target side (of " + std::to_string(seen) +
        " read), fewer than the " + std::to_string(count) +
        " to replay (a shallow clone?); use the short history");
  }
  std::reverse(h.commits.begin(), h.commits.end());
  return h;
}

}  // namespace trench::orchestrator
