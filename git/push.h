// Pushes one branch of a local repository to a remote with libgit2 (the
// review.on_approve "push" of a proposed patch's branch trench/bug-<id>).
//
// The push is forced (+src:dst): a redrafted patch replaces the branch.
// Only branches may be pushed (refs/heads/...), and never `protected_ref`:
// trench never writes the watched branch, wherever it is.
#pragma once

#include <string>

#include "base/status.h"

namespace trench::orchestrator {

struct PushRequest {
  std::string repo;           // The local repository (path).
  std::string remote;         // A git URL or a path.
  std::string branch;         // "trench/bug-3": pushed to the same name.
  std::string protected_ref;  // "refs/heads/main": refused as destination.
  // HTTPS credentials (user "x-access-token", this password); "": none.
  std::string token;
};

// Returns the commit the remote branch now points at. Errors:
// kFailedPrecondition for a destination that is `protected_ref` or not a
// branch; kNotFound when the local branch does not exist; kIoError with
// libgit2's message (unreachable remote, refused update, bad credentials).
StatusOr<std::string> PushBranch(const PushRequest& request);

}  // namespace trench::orchestrator
