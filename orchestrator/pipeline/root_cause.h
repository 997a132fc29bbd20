// One root cause, one bug: grouping bugs by what caused them once that is
// known, and holding back new findings while an older bug that may share
// their root cause is still being worked on, until its verified patch can
// tell whether they share it.
//
//  - Culprit and site (the bisect step): a bug whose culprit commit and
//    localized site match another open bug's is that bug's duplicate. The
//    site is the localization's pass and rewrite site, or its pass and
//    opcode when it names no site (SiteOfBug).
//  - Culprit and fix (the draft step): a bug whose culprit matches another
//    open bug's and whose drafted diff is the same as a patch that bug
//    drafted (its changed lines, hunk positions aside), or the same revert
//    of the whole culprit (strategy "revert_commit" for both), is that
//    bug's duplicate.
//  - In both checks the other bug is the oldest such: an older one, or a
//    younger one that got there first. Bugs are bisected and drafted side
//    by side, and the younger may get its culprit or its draft first; it
//    is then the one further along, and the older joins it. A bug has its
//    culprit once its own culprit was judged, so both checks only see
//    bugs already judged. The judgements are serialized within the daemon
//    (HoldRootCauseJudgement): of two bugs judged at the same moment the
//    second sees the first, so they can neither both stay open nor become
//    each other's duplicates.
//  - Waiting (the reproduce step, root_cause_wait.cc): a fuzz finding
//    (state new) waits, instead of starting the pipeline, for an older
//    open bug that may share its root cause, found
//      * "coarse": with a coarse signature the finding carries too, on the
//        finding's commit or on an earlier one that commit holds;
//      * "campaign": on the same commit, under any signature (one commit's
//        campaign finds one change's failures under many signatures);
//      * "predates": on an earlier commit the finding's commit holds, the
//        finding's case failing on that commit's build too;
//      * "coarse" again, or "culprit", for a bug found on a later commit
//        that holds the finding's (commits that land together are fuzzed
//        newest first): with a coarse signature the finding carries too,
//        or when the finding's commit holds the culprit that bug was
//        bisected to; never when that bug's culprit is known and the
//        finding's commit lacks it.
//    The bug waited for is followed through duplicate_of to the bug it
//    duplicates, and bugs that wait themselves are not waited for. The
//    wait is kept in the bug's details ("waiting_for": {"bug", "rule",
//    "reason", "coarse_signature"?, "since_ms"}), so a restarted daemon
//    keeps it; the reconciler asks StillWaiting on every tick. The waiter
//    is released ("released": {"bug", "reason", "at_ms", "patch"?},
//    "waiting_for" null) once the older bug has a verified patch, or is
//    no longer worked on: closed, fixed, invalid, duplicate of nothing
//    open, not reproducible, gone, waiting for a human, or its step's job
//    failed or parked. It never waits again.
//  - The patch check (the reproduce step of a waiter released by a
//    verified patch): its case runs on the patch's base without the patch
//    and, twice, with it. Failing without and passing with it makes it the
//    older bug's duplicate before any reproduction (reason "fixed by bug
//    N's verified patch P"); otherwise it runs the whole pipeline (and the
//    culprit-and-site check above may still make it a duplicate). The
//    check is kept in the details ("patch_check": {"bug", "patch", "base",
//    "without", "with", "fixed", "why"}).
//
// The evidence of a duplicate (the event's and details.duplicate):
// {"duplicate_of", "reason", "culprit", "site" | "patch", "older_patch"}.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "base/json.h"
#include "base/status.h"
#include "orchestrator/pipeline/pipeline.h"

namespace trench::orchestrator {

// Where a localization put a bug's cause.
struct RootCauseSite {
  std::string pass;
  std::string site;    // The rewrite decision's site; "" when none.
  std::string opcode;  // Compared only when there is no site.
  // "pass algsimp, site fold_add" or "pass algsimp, op add".
  std::string Text() const;
  Json ToJson() const;
  bool Same(const RootCauseSite& other) const;
};
// The bug's localized site (details.localization.signature), or nullopt
// when it has none (not localized, no pass named).
std::optional<RootCauseSite> SiteOfBug(const Bug& bug);

struct SameRootCause {
  Bug kept;       // The bug it duplicates (older, or further along).
  Json evidence;  // As in the file comment.
};

// The oldest other open bug whose culprit is `culprit` and whose site is
// `bug`'s. nullopt when there is none, when `bug` has no site, or when a
// reviewer reopened `bug` from duplicate. Errors: the store's.
StatusOr<std::optional<SameRootCause>> SameCulpritAndSite(
    StepContext& ctx, const Bug& bug, const std::string& culprit);

// The oldest other open bug with `bug`'s culprit that drafted a patch
// whose changed lines are `diff`'s (a rejected one aside), or which
// drafted the same revert_commit. Same exceptions and errors as
// SameCulpritAndSite.
StatusOr<std::optional<SameRootCause>> SameCulpritAndDraft(
    StepContext& ctx, const Bug& bug, const std::string& diff,
    const std::string& strategy);

// Moves `bug` to duplicate of same.kept with same.evidence (the event's
// evidence, merged into `evidence`, and details.duplicate); `fields` may
// carry other fields of the move (e.g. the culprit). Returns the evidence.
StatusOr<Json> MarkDuplicate(StepContext& ctx, const Bug& bug,
                             const SameRootCause& same, Json evidence,
                             TransitionFields fields);

// The end of the bisect step: hlo-bisect commits' `report` (with
// "culprit": {"sha", ...}) moves the localized `bug` to culprit_found, or
// to duplicate when SameCulpritAndSite finds another bug; it holds the
// judgement (HoldRootCauseJudgement) from the check to the move. Returns the
// event's evidence. kFailedPrecondition when the report names no culprit.
StatusOr<Json> JudgeCulprit(StepContext& ctx, const Bug& bug,
                            const Json& report);

// Held from a root-cause check to the move it decides (JudgeCulprit; the
// draft step around SameCulpritAndDraft and its move): one judgement at a
// time in the daemon, so that each check sees every earlier judgement.
std::unique_lock<std::mutex> HoldRootCauseJudgement();

// Whether two diffs change the same lines of the same files (headers and
// hunk positions aside).
bool SameChange(const std::string& a, const std::string& b);

// The wait `bug` (a fuzz finding in state new, never released) should
// start: the waiting_for record, or nullopt. A "predates" candidate runs
// the finding's case (scratch of job `job_id`). Errors: the store's; the
// mirror's when commits must be compared; the tool's when a case runs
// (transient: the step is retried, nothing is decided).
StatusOr<std::optional<Json>> RootCauseToWaitFor(StepContext& ctx,
                                                 const Bug& bug,
                                                 int64_t job_id = 0);
// Records the wait in the bug's details (logged).
Status StartWaiting(StepContext& ctx, const Bug& bug, const Json& waiting_for);
// For a bug whose details hold a wait: true while it must still wait;
// otherwise it is released (details written, logged) and false returned.
// False, without writing, for a bug that does not wait.
StatusOr<bool> StillWaiting(StepContext& ctx, const Bug& bug);
// For a waiter released by a verified patch and not yet checked: the
// patch check (file comment). Returns the duplicate's evidence when the
// patch fixes it (the bug is then a duplicate), else nullopt (the check,
// when it ran, is kept in the details). Errors: the store's; the tool's.
StatusOr<std::optional<Json>> MergeIfFixedByPatch(StepContext& ctx,
                                                  const Bug& bug,
                                                  int64_t job_id);

}  // namespace trench::orchestrator
