// Builds commits of a target repository and caches the binaries by commit
// (DESIGN.md "The daemon": the builder checks commits out into worktrees,
// builds them, and caches by commit and by patch hash).
//
// Layout under the work directory W (reused across commits and runs, so
// that builds stay incremental: the checkout only rewrites changed files,
// and the build directory keeps its objects):
//   W/src/     the worktree (GitRepo::CheckoutTo)
//   W/build/   the build directory (W/build-<flavour>/ for a build
//              flavour, e.g. the target's coverage flavour: its own
//              objects, so that plain and flavoured builds of successive
//              commits both stay incremental)
//   W/build.log  the last build's output
//   W/lock       flock'ed during a checkout + build: runs sharing W wait
//   W/out/<key>/ the entry of the last build of <key>, staged (below)
// The cache C (build_cache.h) holds one entry per key (a commit sha, or
// "<base sha>-p<patch hash>" for a patched commit such as a revert):
//   C/<key>/result.json   {"key", "commit", "built", "seconds", "exit_code",
//                          "timed_out", "reason", "log_tail", "sha256"}
//   C/<key>/bin/{hloc,tpusim,hlo-run}   when built
// A commit that does not build is cached too (built: false), so it is not
// built again.
//
// A build stages its entry in the output directory O (options.output_dir,
// default W/out) and then, when O is W/out, installs it into C itself
// (InstallBuild). With an output_dir of its own (the daemon's sandboxed
// builds) C is only read: the daemon installs the staged entry of the key
// it asked for, so a build cannot write another commit's entry.
//
// The build command runs through /bin/sh in W/src with its output in
// W/build.log and this environment (added to ours):
//   TRENCH_WORKTREE   W/src (also the working directory)
//   TRENCH_BUILD_DIR  W/build (or W/build-<flavour>): the binaries hloc,
//                     tpusim and hlo-run must be there when the command
//                     succeeds
//   TRENCH_COMMIT     the sha being built
//   TRENCH_JOBS       parallel jobs (the number of CPUs)
//   CCACHE_BASEDIR=W, CCACHE_NOHASHDIR=1 unless already set (ccache hits
//                     across work directories)
// A command that exits non-zero, or leaves a binary missing, means "does
// not build" -- unless the machine failed it (build_failure.h: an
// infrastructure marker in its log, death by a signal, a timeout): then
// the result says infra, and nothing is cached or staged.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "git/build_cache.h"
#include "git/git_repo.h"

namespace trench::hlo_bisect {

// Our own target side: configure with CMake (Ninja when present, ccache as
// the compiler launcher when present, -DTRENCH_TARGET_ONLY=ON, Release,
// then `cmake_flags`) and build hloc, tpusim and hlo-run.
// REQUIRES: each of `cmake_flags` is IsSafeCMakeDefine
// (base/cmake_define.h): they go into the shell command quoted, as they are.
std::string DefaultBuildCommand(
    const std::vector<std::string>& cmake_flags = {});
// Whether `flavour` names a build flavour: 1 to 32 of [a-z0-9].
bool IsValidFlavour(const std::string& flavour);

struct BuilderOptions {
  std::string work_dir;   // W (created).
  std::string cache_dir;  // C (created when this builder installs).
  // O: where new entries are staged; "" : W/out, installed into C here.
  std::string output_dir;
  std::string build_command;  // "" : DefaultBuildCommand().
  // "" : the plain build in W/build; else IsValidFlavour, built in
  // W/build-<flavour> (the key says which flavour an entry is).
  std::string flavour;
  double timeout_seconds = 3600;
  size_t log_tail_bytes = 4096;
};

class CommitBuilder {
 public:
  // REQUIRES: `repo` outlives the builder.
  CommitBuilder(GitRepo* repo, BuilderOptions options);

  // Builds commit `rev` under the key of its sha, or returns the cached
  // result. Errors are the harness's own (checkout, cache writes, the shell
  // cannot be started); a failing build is a result.
  StatusOr<BuildResult> Build(const std::string& rev);
  // Builds commit `rev` under cache key `key` (e.g. a revert commit under
  // "<base sha>-p<patch hash>", whose own sha changes with its time).
  StatusOr<BuildResult> BuildAs(const std::string& rev, const std::string& key);

  // Cached result for `key` (LookupBuild on C, then on O when O is this
  // run's own); NotFound otherwise. An entry LookupBuild refuses (a binary
  // changed since it was installed) is a miss too: the error says why, and
  // BuildAs puts it in the result's cache_problem.
  StatusOr<BuildResult> Lookup(const std::string& key) const;

  int builds() const { return builds_; }          // Builds run.
  int cache_hits() const { return cache_hits_; }  // Results from the cache.
  const BuilderOptions& options() const { return options_; }

 private:
  std::string StagingDir() const;  // O, absolute.

  GitRepo* repo_;
  BuilderOptions options_;
  int builds_ = 0;
  int cache_hits_ = 0;
};

}  // namespace trench::hlo_bisect
