// A directory bounded in bytes and in files: a tmpfs mounted on it (for
// tool runs' work dirs, which the daemon fills before a run and reads
// after it, so the bound must live on the host, not inside the sandbox).
//
// Mounting needs root (CAP_SYS_ADMIN). Elsewhere the directory stays a
// plain one, unbounded: LimitedDirError() says why, for the start-up log.
// The mounts are in the daemon's mount namespace; a daemon that dies
// leaves them behind, and SweepLimitedDirs() removes them at the next
// start.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace trench::sandbox {

// Creates `dir` (and its parents) when missing and mounts a tmpfs on it
// with size=`bytes`, nr_inodes=`inodes`, mode 0755, nosuid, nodev. A write
// past the size fails with ENOSPC, a file past the inodes with ENOSPC too.
// Returns true when mounted, false when this process cannot mount
// (LimitedDirError() is not empty): `dir` is then a plain directory.
// Errors: IoError when the directory cannot be created or the mount fails
// for another reason.
StatusOr<bool> MountLimitedDir(const std::string& dir, uint64_t bytes,
                               uint64_t inodes);

// Lazily unmounts every tmpfs mounted at `dir` (its contents go); a
// directory without one is left as it is. Errors: IoError from umount2.
Status UnmountLimitedDir(const std::string& dir);

// Unmounts every tmpfs mounted strictly below `root` (read from
// /proc/self/mountinfo), deepest first: those a crashed daemon left.
// Returns how many.
int SweepLimitedDirs(const std::string& root);

// "" when this process can mount limited directories (probed once, on a
// scratch directory under /tmp), else why not.
const std::string& LimitedDirError();

}  // namespace trench::sandbox
