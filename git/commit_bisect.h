// The commit level of localization (DESIGN.md "Data flowing through",
// point 5): which commit of the target repository introduced a failure.
//
// BisectCommits builds commits with a CommitBuilder, runs the case on each
// build through hlo-diff's verdict (triage/case/verdict.h, with
// TargetSpec::FromBinaryDir(the cached binaries)), and
//   1. checks that bad fails (a failure status of verdict_status.def:
//      hlo_diff::IsFailure) and that good passes (when good fails the same
//      way, but for a timeout, the bug predates the range: the report
//      says so, "fails_at_good": true, with no culprit), or that good's target
//      cannot run the case at all (target_unsupported: an older target
//      without the ops or the slice the case needs; the search then
//      finds the last commit that passes, and those whose target cannot
//      run the case are skipped like unbuildable ones, or judged by
//      CommitBisectOptions::judge_unsupported when it is set);
//   2. binary-searches the first-parent line good..bad (GitRepo::
//      FirstParentRange): a commit is bad when its verdict has the status
//      bad has, good when it passes, and skipped when it does not build or
//      fails otherwise (like `git bisect skip`: the next try is the
//      untested commit nearest the middle);
//   3. confirms the culprit: reverts it on top of bad (GitRepo::
//      RevertOnto), builds that (cached by bad's sha and the patch hash),
//      and re-tests: confirmed when the case passes there.
//
// Report JSON:
//   {"good": CommitInfo, "bad": CommitInfo, "commits": N (good..bad],
//    "bad_verdict": {"status", "signature"},
//    "fails_at_good": bool (the failure predates the range; no search),
//    "culprit": CommitInfo | null,
//    "candidates": [CommitInfo...]  (the first bad commit is one of these:
//                                    more than one when skipped commits
//                                    hide it),
//    "steps": [{"commit", "summary", "role": "bad"|"good"|"search"|
//               "revert", "built", "cached", "build_seconds",
//               "status": verdict status|null, "sig": its signature
//               hash|null, "outcome": "good"|"bad"|"skip", "reason"?,
//               "log_tail"? (not built), "run_status"?, "judged"? (a
//               target_unsupported commit judged by judge_unsupported:
//               its status is then "pass" or bad's), "seconds"}],
//    "confirmed": bool,
//    "confirmation": {"revert": sha|null, "built": bool, "status": verdict
//                     status|null, "reason"?: why not confirmed},
//    "builds": builds run, "cache_hits": N, "seconds": total}
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "git/commit_builder.h"
#include "git/git_repo.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_runner.h"

namespace trench::hlo_bisect {

enum class Outcome { kGood, kBad, kSkip };
const char* OutcomeName(Outcome o);

// Binary search with skips over commits 1..n of a range (0 is the good
// commit, n the bad one, both known). Pure logic, no builds.
class BisectSearch {
 public:
  explicit BisectSearch(size_t n);

  // The next commit to test: the untested, unskipped commit in
  // (last good, first bad) nearest the middle; nullopt when none is left.
  std::optional<size_t> Next() const;
  // Records the outcome of testing commit i (1 <= i < n).
  void Mark(size_t i, Outcome outcome);

  // When Next() is nullopt: the commits the first bad one is among
  // (last good + 1 .. first bad); exactly one when the search converged.
  std::vector<size_t> Candidates() const;
  size_t last_good() const { return lo_; }
  size_t first_bad() const { return hi_; }

 private:
  size_t lo_, hi_;
  std::vector<bool> skipped_;
};

struct CommitBisectOptions {
  std::string good, bad;  // Revisions.
  hlo_diff::TargetMode mode = hlo_diff::TargetMode::kHloRun;
  double run_timeout_seconds = 120;
  std::string work_dir;  // Verdict work directories (created).
  bool confirm = true;
  // Progress lines ("build 1a2b3c4d5e6f: ok (12.3 s)"), optional.
  std::function<void(const std::string&)> progress;
  // Asked at a commit whose target cannot run the case
  // (target_unsupported), with its binaries' directory and a fresh work
  // directory: true, the failure is there (bad); false, it is not (good);
  // nullopt, cannot tell (the commit is skipped). *why gets one line for
  // the step. Unset: such commits are skipped. (hlo-bisect commits --pass
  // judges the localized pass without running: triage/localize/
  // pass_check.h.)
  std::function<StatusOr<std::optional<bool>>(const std::string& bin_dir,
                                              const std::string& work_dir,
                                              std::string* why)>
      judge_unsupported;
};

// Runs the search on case `c`. Errors: FailedPrecondition when the search
// cannot start (bad or good does not build, bad does not fail, good
// neither passes nor is target_unsupported: the message says which, with
// the verdict status); the repository's and builder's errors.
StatusOr<Json> BisectCommits(const hlo_diff::Case& c, GitRepo& repo,
                             CommitBuilder& builder,
                             const CommitBisectOptions& options);

}  // namespace trench::hlo_bisect
