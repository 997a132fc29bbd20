// Building and fuzzing the target's commits, and filing what the fuzzer
// finds: what the commit steps, the stress-test author and patch
// verification share.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agents/claims.h"
#include "base/json.h"
#include "base/status.h"
#include "git/build_cache.h"
#include "orchestrator/pipeline/build_volume.h"
#include "orchestrator/pipeline/pipeline.h"
#include "triage/case/target_description.h"

namespace trench::orchestrator {

// The builder's start-up (the daemon's, as root): var/builder, the mirror
// and the cache belong to us (chowned back from the sandbox's uid where
// an older daemon let it own them), and var/builder/work is the builder
// volume (build_volume.h) of builder.disk_bytes and builder.inodes. Says
// on one line what the builds are bounded by; where the volume cannot be
// mounted (not root, no loop devices, disk_bytes 0), says so and leaves
// the plain directory. Errors: kIoError for a failed mount of a volume
// this machine could have.
StatusOr<BuildVolume> SetUpBuilder(const DaemonConfig& config,
                                   const DaemonPaths& paths);
// A sandboxed run of the builder (hlo-bisect build or commits), which
// owns var/builder/work while `lock` is held (one such run at a time per
// daemon: the work dir is chowned to each run's uid, and the staged
// outputs are the run's own). The work dir is its only writable place;
// the mirror and the cache are read-only; TMPDIR and CCACHE_DIR are in the
// work dir (ccache bounded to a quarter of the builder volume, or off with
// builder.clean, which also empties the whole work dir first: then no
// state passes from the build of one commit to the next).
struct BuilderRun {
  std::unique_lock<std::mutex> lock;
  sandbox::Options options;
};
StatusOr<BuilderRun> PrepareBuilderRun(StepContext& ctx,
                                       std::vector<std::string> argv,
                                       double timeout);
// After a builder run: when the work dir's file system has under 10% of
// its bytes or inodes free (a build filled it), empties it so that the
// next build has room (and starts cold), with a warning.
void ReclaimBuilderSpace(StepContext& ctx);
// Builds `rev` (of the mirror) in the sandbox and records the build of
// (sha, patch_hash); the cache key is sha, or "<sha>-p<patch_hash>". The
// daemon installs the entry the run staged for that key (InstallBuild:
// nothing else the build wrote reaches the cache); a cache entry
// LookupBuild verifies is taken without a build (one it refuses is
// warned about and built again). Returns the BuildResult JSON. A build
// the machine failed (build_failure.h; the sandbox failing to run, the
// run stopped by its memory, CPU or wall limit or a signal) records
// nothing and returns kResourceExhausted with the reason and the log's
// tail: the job is retried with backoff. Errors: also kInternal when the
// run's output cannot be installed; the store's.
StatusOr<Json> BuildCommit(StepContext& ctx, const std::string& rev,
                           const std::string& sha,
                           const std::string& patch_hash);
// Builds build flavour `flavour` (hlo-bisect build --flavour: its own build
// directory) of commit `sha` with `command` ("" : the default CMake build)
// under cache key "<sha>-<flavour>", taken from the cache when there. No
// build row is recorded (the commit's build is its plain one). Errors:
// BuildCommit's (kResourceExhausted when the machine failed the build).
StatusOr<hlo_bisect::BuildResult> BuildFlavour(StepContext& ctx,
                                               const std::string& sha,
                                               const std::string& flavour,
                                               const std::string& command);
// The fixed (or closed) bug with `signature` whose fix commit `commit`
// does not hold (not an ancestor of it, nor it), if any: a finding there
// predates the fix (a campaign of an older commit that ended after the fix
// landed), so it is that bug again. A commit holding the fix that fails
// the same way is a regression, a new bug.
StatusOr<std::optional<Bug>> FixedLaterThan(StepContext& ctx,
                                            const std::string& signature,
                                            const std::string& commit);
// Whether `bug` carries the coarse signature `sig`: as its signature
// ("sig:<sig>"), as one of its fuzz finding's coarse signatures
// (details.finding.coarse_signatures), or as the signature of its own
// reproduction (details.reproduction.verdict).
bool CarriesSignature(const Bug& bug, const std::string& sig);
// Dedup of a reproduced report: the bug already known under the coarse
// signature `sig` (hlo-diff's verdict signature "sig") that `self` failed
// with at `commit`. A bug carries `sig` as its signature ("sig:<sig>"),
// as one of its fuzz finding's coarse signatures
// (details.finding.coarse_signatures), or as the signature of its own
// reproduction (details.reproduction.verdict). Returns the oldest open bug
// other than `self` carrying it, else a fixed one whose fix `commit` does
// not hold (as FixedLaterThan), else nullopt. Errors: the store's; the
// mirror's when a fixed bug must be checked.
StatusOr<std::optional<Bug>> KnownBugOfReproduction(StepContext& ctx,
                                                    const Bug& self,
                                                    const std::string& sig,
                                                    const std::string& commit);
// Files a fuzz finding ({"case": dir, "sig", "status", ...}) found at
// `commit`: attached to the open bug with signature "sig:<sig>", else to
// FixedLaterThan's bug ("fixed_later": true), else a new bug (its
// reproduction queued). Returns what was done.
StatusOr<Json> FileFinding(StepContext& ctx, const std::string& commit,
                           const Json& finding);
// Files the findings of a stress-test author's claim found at `commit`,
// each as FileFinding does. The claim is the brain's (an LLM's, perhaps):
// its refused findings (claims.h) are logged, and a finding naming no
// stored case is skipped with a warning. Returns the array of
// FileFinding's results.
StatusOr<Json> FileAuthorFindings(StepContext& ctx, const std::string& commit,
                                  const agents::StressAuthorClaim& claim);
// What the target says about itself at commit `sha` built in `bin_dir`
// (README "The target contract"): the manifest trench-target.json in the
// commit's tree when there is one, else the built `hloc --capabilities`,
// run in the sandbox in `scratch`. A target that describes nothing gives
// a description with described() false. Errors: kInvalidArgument for a
// malformed description (also one over kMaxDescriptionBytes, never loaded
// whole) or an hloc that prints none; kResourceExhausted (retry later,
// nothing to store) for an hloc killed by SIGKILL or its timeout; the
// mirror's and the sandbox's.
StatusOr<hlo_diff::TargetDescription> DescribeTarget(
    StepContext& ctx, const std::string& sha, const std::string& bin_dir,
    const std::string& scratch);
// The description stored with the build of `sha` (Store::SetBuildTarget);
// when there is none yet, DescribeTarget's, stored (a malformed one is
// stored as describing nothing, with a warning). A target that describes
// nothing is logged once per repository and process, not per commit.
// Errors: kFailedPrecondition when `sha` was not built; DescribeTarget's
// other errors (nothing is stored then: the next call tries again).
StatusOr<hlo_diff::TargetDescription> TargetOfBuild(StepContext& ctx,
                                                    const std::string& sha,
                                                    const std::string& scratch);
// What a commit's diff touches: the passes and the emitters' ops whose
// source globs (the target's description) match the files it writes.
struct ChangedArea {
  std::vector<std::string> passes, ops;
  // The target's "large_arrays" from_elements when a changed file is one
  // of its large-array sources (the largest group of several), else 0, and
  // that group's module attributes.
  int64_t large_elements = 0;
  hlo_diff::FrontendAttributes large_attributes;
  // Adds `other`'s names not yet present (order kept).
  void Add(const ChangedArea& other);
};
ChangedArea ChangedAreaOf(const std::string& diff,
                          const hlo_diff::TargetDescription& target);
// What `commits` changed, for a campaign on the build of `head`: each
// commit's diff (in the mirror) through the description stored with its
// own build, else through head's (TargetOfBuild). Empty when the target
// describes nothing or the mirror cannot be read. Errors: TargetOfBuild's.
StatusOr<ChangedArea> ChangedAreaOfCommits(
    StepContext& ctx, const std::string& head,
    const std::vector<std::string>& commits, const std::string& scratch);
// A hlo-fuzz campaign on the build in `bin_dir`: its summary JSON. A
// non-empty `changed_diff` (the commit's diff) is written into the
// campaign's scratch and given as --changed-lines (changed-line reach on a
// coverage build, commit_reach.h).
StatusOr<Json> FuzzBuild(StepContext& ctx, int64_t job_id,
                         const std::string& bin_dir, double seconds,
                         const std::vector<std::string>& extra_flags,
                         const std::string& changed_diff = "");

}  // namespace trench::orchestrator
