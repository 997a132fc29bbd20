// A reviewer's verb on a bug (lifecycle.def TRENCH_TRIAGE_VERB: approve,
// reject, redraft, duplicate, invalid, close, reopen), applied as one
// lifecycle move: POST /api/v1/bugs/{id}/triage (and the CLI through it).
//
// ApplyTriage checks the action, then moves the bug and writes its event
// row (evidence {"event": "triaged", "verb", "comment"?, "hint"?,
// "duplicate_of"?}) and the verb's bookkeeping on the bug's details in one
// store transaction:
//   redraft: appends {"hint", "at_ms"} to details.draft_hints (the patch
//     drafter gets every hint in its task); grants a fresh drafting budget:
//     draft_rounds back to 0, needs_human and last_draft_failure removed.
//   reopen: the bug goes back to new, so it is reproduced again and the
//     pipeline runs from there; draft_rounds and needs_human are reset
//     (the reconciler would otherwise skip it), details.reopened records
//     {"from", "at_ms"}, duplicate_of is cleared (Store::TransitionBug);
//     reopened from duplicate, the automatic dedup leaves the bug apart
//     (ReopenedFromDuplicate).
//   reject: details.review records {"verb", "comment", "at_ms"}; the
//     reconciler then starts another drafting round (as for the old
//     review endpoint), with a fresh budget as for redraft; a non-empty
//     comment is appended to draft_hints too ({"hint", "at_ms", "from":
//     "reject"}): it guides that round.
//   approve: details.review as for reject; with `push_on_approve`
//     (config review.on_approve "push") the push job is queued
//     (QueuePushJob), after the move: should that enqueue fail (logged;
//     the move stands), the reconciler queues it on its next tick.
// Errors: kInvalidArgument naming the field (a redraft without a
// non-empty "hint", a duplicate without "duplicate_of", either field given
// for another verb); kNotFound for an unknown bug; kFailedPrecondition for
// a verb that does not apply to the bug's state ("bug 3: cannot approve a
// bug in state new (approve applies to: proposed)"), a duplicate of
// itself or of a bug that does not exist. Nothing is written on error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "orchestrator/store/job_queue.h"
#include "orchestrator/store/lifecycle.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

struct TriageAction {
  TriageVerb verb = TriageVerb::kApprove;
  std::optional<std::string> comment;
  std::optional<std::string> hint;      // REQUIRED, non-empty, for redraft.
  std::optional<int64_t> duplicate_of;  // REQUIRED for duplicate.
};

// Checks the fields `action` needs and takes (not the bug's state).
Status CheckTriageAction(const TriageAction& action);

StatusOr<Bug> ApplyTriage(Store* store, int64_t bug_id,
                          const TriageAction& action, const std::string& actor,
                          bool push_on_approve);

// Queues bug `bug_id`'s push job (kind "push", dedup key "bug:<id>:push";
// one live job at most).
Status QueuePushJob(JobQueue& queue, int64_t bug_id);

// The hints a drafting round of `bug` gets (details.draft_hints: each
// redraft's hint and each rejection's comment), oldest first.
std::vector<std::string> DraftHintsOf(const Bug& bug);

// True when a reviewer reopened `bug` from duplicate (details.reopened):
// the pipeline's automatic dedup (reproduce, localize) then leaves it
// apart, not undoing the reviewer's call.
bool ReopenedFromDuplicate(const Bug& bug);

}  // namespace trench::orchestrator
