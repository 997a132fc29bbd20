// A target repository with a realistic history, made from the project's
// own target-side sources (base/, compiler/, tpu/, the target tools and
// CMakeLists.txt): the base commit, a few ordinary commits, one commit
// that brings a bugzoo bug (its bug.patch, under meta.json's "commit"
// summary), and more ordinary commits after it. Used by `trench demo` and
// the daemon's end-to-end tests.
//
// Only the base is on the branch at first; Land() moves the branch along
// the prepared history, as if the commits were pushed one by one.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace trench::orchestrator {

struct DemoRepoOptions {
  std::string source_dir;  // A trench checkout (its target side is copied).
  std::string bug_dir;     // tests/bugzoo/<id>/ (bug.patch, meta.json).
  std::string branch = "main";
  int commits_before = 2;  // Ordinary commits between base and the bug.
  int commits_after = 1;   // After the bug.
};

struct DemoRepo {
  std::string path;
  std::string base;                  // On the branch at creation.
  std::string bug_commit;            // The culprit.
  std::vector<std::string> history;  // After base, oldest first.
};

// Creates the repository at `dir` (must not exist). Errors: kNotFound for
// missing sources or bug files; kFailedPrecondition when the bug's patch
// does not apply to the sources; libgit2's errors.
StatusOr<DemoRepo> MakeDemoRepo(const std::string& dir,
                                const DemoRepoOptions& options);

// Points `branch` of the repository at `dir` to commit `sha` (force).
Status Land(const std::string& dir, const std::string& branch,
            const std::string& sha);

}  // namespace trench::orchestrator
