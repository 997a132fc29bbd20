// A bare mirror of the target repository, for the sandboxed tools (builds,
// commit bisection). They may write into it (revert branches, candidate
// patch commits); the user's repository is only ever read, except for the
// proposed branches trench/bug-<id> the daemon writes itself.
#pragma once

#include <string>

#include "base/status.h"

namespace trench::orchestrator {

// Creates `mirror_dir` as a bare repository when missing, then fetches
// every branch of `source` into it (+refs/heads/*:refs/heads/*; the
// mirror's own extra branches stay). Errors: kIoError with libgit2's
// message ("mirror of /srv/compiler: ... (libgit2: ...)").
Status SyncMirror(const std::string& source, const std::string& mirror_dir);

}  // namespace trench::orchestrator
