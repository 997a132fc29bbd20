// The cache of built commits (commit_builder.h) and the one way into it.
//
// A build runs as an untrusted uid (in the daemon's sandbox) and leaves its
// entry in a staging directory S that it can write:
//   S/<key>/result.json   BuildResult::ToJson() without "cached"
//   S/<key>/bin/{hloc,tpusim,hlo-run}   when built
// InstallBuild, run by whoever owns the cache C (the daemon; the in-process
// `hlo-bisect commits` for its own cache), reads that entry without
// following links, checks it strictly, and installs it as
//   C/<key>/result.json   the same members plus "sha256": {binary: hex}
//   C/<key>/bin/...       copies of the staged binaries (0755)
// so that a build can only ever produce the entry of its own key, and a
// binary changed in the cache afterwards is seen: LookupBuild hashes the
// binaries again and treats a mismatch as a miss.
#pragma once

#include <map>
#include <string>

#include "base/json.h"
#include "base/status.h"

namespace trench::hlo_bisect {

struct BuildResult {
  std::string key;
  std::string commit;
  bool built = false;
  bool cached = false;  // Taken from the cache (no build ran now).
  std::string bin_dir;  // C/<key>/bin when built.
  double seconds = 0;   // Of the build (the original one when cached).
  int exit_code = -1;   // Of the build command (-1: signal or timeout).
  bool timed_out = false;
  // The machine, not the commit, failed the build (IsInfraFailure in
  // build_failure.h: fork or memory exhausted, the disk full, killed by a
  // signal, timed out): not a verdict, never cached; build again later.
  bool infra = false;
  std::string reason;    // Why it did not build ("" when built).
  std::string log_tail;  // The end of the build log when it did not build.
  // Binary name -> SHA-256 (hex) of the installed copy, when built.
  std::map<std::string, std::string> sha256;
  // A cache entry for the key that was refused (tampered with, malformed),
  // so that it was built again: the reason, for the report.
  std::string cache_problem;

  // {"key", "commit", "built", "cached", "seconds", "exit_code",
  //  "timed_out", "infra", "reason", "log_tail"}, plus "sha256" when set
  //  and "cache_problem" when not empty.
  Json ToJson() const;
};

// The binaries a build must produce.
const std::vector<std::string>& TargetBinaries();

// The SHA-256 (hex) of the regular file `path` (not through a link).
StatusOr<std::string> FileSha256(const std::string& path);

// A cache key: a commit sha, or "<sha>-p<hex>", made of [0-9a-z-] only.
bool IsValidBuildKey(const std::string& key);

// The complete entry C/<key>: its result, with bin_dir set and every
// binary's SHA-256 checked when built. Errors: kNotFound when there is no
// entry; kFailedPrecondition when there is one that must not be used
// (malformed, a binary missing, not a regular file, or not matching its
// recorded hash): the caller builds again and says so.
StatusOr<BuildResult> LookupBuild(const std::string& cache_dir,
                                  const std::string& key);

// Installs the staged entry `staging_dir`/<key> (written by a build that is
// not trusted) as C/<key>, replacing what is there, and returns it as
// LookupBuild would (cached false). Nothing under `staging_dir` is followed
// if it is a link; a FIFO or device is refused. The staged result.json
// must be an object of BuildResult's members only (at most 1 MiB), its
// "key" equal to `key`, "commit" a 40-digit sha, "built" a bool, and not
// "infra"; a built entry needs every binary as a regular file of at most
// `max_binary_bytes`. Errors: kNotFound when nothing is staged for `key`;
// kFailedPrecondition for a staged entry that breaks these rules (nothing is
// installed); kIoError for the cache's own writes.
StatusOr<BuildResult> InstallBuild(const std::string& staging_dir,
                                   const std::string& key,
                                   const std::string& cache_dir,
                                   uint64_t max_binary_bytes = 4ull << 30);

}  // namespace trench::hlo_bisect
