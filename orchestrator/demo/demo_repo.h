// A target repository made from the project's own target side, with one
// commit that brings a bugzoo bug (its bug.patch, under meta.json's
// "commit" summary). Used by `trench demo` and the daemon's end-to-end
// tests. Two histories:
//   - kShort: the target side of the checkout's files as the base, a few
//     comment-only commits, the bug, more comment-only commits. Quick: the
//     culprit search has one candidate that touches code.
//   - kReplay: the checkout's own git history of the target side
//     (target_history.h): its last `replay_commits` commits that change
//     it, replayed on the target side as of the commit before them, with
//     `broken_builds` commits that do not compile (each followed by the
//     commit that repairs it). The bug goes in at a random point (`seed`)
//     where it applies, rebased there, and the later commits are rebased
//     on top of it. It is never placed right after a commit that does not
//     build (the search could not tell the two apart).
//
// Only the base is on the branch at first; Land() moves the branch along
// the prepared history, as if the commits were pushed one by one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace trench::orchestrator {

enum class DemoHistory { kShort, kReplay };

struct DemoRepoOptions {
  std::string source_dir;  // A trench checkout (its target side is copied).
  std::string bug_dir;     // tests/bugzoo/<id>/ (bug.patch, meta.json).
  std::string branch = "main";
  DemoHistory history = DemoHistory::kShort;
  int commits_before = 2;   // kShort: ordinary commits before the bug.
  int commits_after = 1;    // kShort: after the bug.
  int replay_commits = 32;  // kReplay: real commits replayed.
  int broken_builds = 2;    // kReplay: commits that do not build.
  uint64_t seed = 1;        // kReplay: where the bug goes.
};

struct DemoRepo {
  std::string path;
  std::string base;                      // On the branch at creation.
  std::string bug_commit;                // The culprit.
  std::vector<std::string> history;      // After base, oldest first.
  std::vector<std::string> unbuildable;  // Commits of history that do not
                                         // compile (kReplay).
};

// Creates the repository at `dir` (must not exist). Errors: kNotFound for
// missing sources or bug files, or (kReplay) no git history at
// source_dir; kFailedPrecondition when the bug's patch does not apply to
// the sources (kReplay: at no point of the history where the later
// commits rebase onto it) or the history is too short; libgit2's errors.
StatusOr<DemoRepo> MakeDemoRepo(const std::string& dir,
                                const DemoRepoOptions& options);

// Points `branch` of the repository at `dir` to commit `sha` (force).
Status Land(const std::string& dir, const std::string& branch,
            const std::string& sha);

}  // namespace trench::orchestrator
