// The target side's own history, read from a trench checkout's git
// repository with libgit2: the last N first-parent commits that change the
// target side, each as the files it writes or deletes there, and the
// target side's files at the commit before the oldest of them. The demo
// replays it (demo_repo.h, DemoHistory::kReplay) so that a zoo bug lands
// among real commits that touch the same files, as a culprit search meets
// it in a real repository.
//
// The target side here is what a target-only build of any of those
// commits reads: CMakeLists.txt, cmake/, base/, compiler/, tpu/, tools/
// (older commits kept the target's libraries under tools/).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "git/git_repo.h"

namespace trench::orchestrator {

// The paths (repository-relative) the history is read for.
const std::vector<std::string>& TargetSidePaths();

struct HistoryCommit {
  std::string sha;                              // In the source repository.
  std::string message;                          // The original message, whole.
  std::vector<hlo_bisect::FileChange> changes;  // Target side only.
};

struct TargetHistory {
  std::string base_sha;  // The parent of the oldest commit below.
  std::vector<hlo_bisect::FileChange> base_files;  // Its target side.
  std::vector<HistoryCommit> commits;              // Oldest first.
};

// Reads the last `count` commits (first parents from HEAD) of the
// repository at `source_dir` that change the target side; merges count as
// their change against the first parent. Errors: kNotFound when
// `source_dir` is no git repository; kFailedPrecondition when its history
// holds fewer such commits (a shallow clone, say), naming how many;
// libgit2's errors as kIoError.
StatusOr<TargetHistory> ReadTargetHistory(const std::string& source_dir,
                                          int count);

}  // namespace trench::orchestrator
