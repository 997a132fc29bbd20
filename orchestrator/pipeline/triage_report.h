// The triage report: everything trench knows about one bug, as text
// (markdown-ish, fixed sections). `trench show N` prints it, and the
// daemon uses it as the commit message of the trench/bug-<id> branch, so
// it is computed from the API's JSON alone.
//
// BugReportText takes GET /api/v1/bugs/{id}'s object {"bug", "events",
// "patches"} (api_handlers.h: BugToJson, EventToJson, PatchToJson). The
// sections and where their data comes from (each part of bug.details is
// also looked up in the evidence of the latest event that moved the bug
// to the step's state, either under the same key or as the evidence
// itself):
//   header        bug: id, title, state, signature, times, duplicate_of,
//                 flaky_rate, fix_commit
//   Report        details.report {"text", "hlo"?, "inputs"?} (the API);
//                 for a fuzz finding, details.finding.reach: the changed-
//                 line reach of the commit's campaign (when measured)
//   Reproduction  bug.case_sha256; details.reproduction {"case"?, "runs",
//                 "failures", "rate", "verdict": hlo-diff's verdict JSON}
//                 (-> reproduced, flaky, not_reproducible)
//   Minimized case  bug.minimized_sha256; details.minimization:
//                 hlo-reduce's summary ("before"/"after" sizes,
//                 "target_runs", "seconds") plus "module": the minimized
//                 HLO text (-> minimized)
//   Localization  details.localization: hlo-bisect's report
//                 (triage/localize/localization_report.h) (-> localized)
//   Culprit commit  bug.culprit_commit; details.culprit: `hlo-bisect
//                 commits`' report (git/commit_bisect.h)
//                 (-> culprit_found)
//   Patch         details.draft's "coverage" and "passed_over" when it
//                 names the last patch (draft_coverage.h: a partial revert
//                 is a WARNING line); the last of "patches": branch,
//                 verified, verification (any object; its members are
//                 listed), diff
//   Fix           bug.fix_commit
//   History       one line per event: time, from -> to, actor, evidence
// A part that is not there yet says "not yet". Malformed or unexpected
// JSON never fails the rendering of the other sections: a part of the
// wrong type counts as missing.
#pragma once

#include <cstdint>
#include <string>

#include "base/json.h"
#include "base/status.h"

namespace trench::orchestrator {

// The report for one bug. InvalidArgument when `bug_response` is not an
// object with a "bug" object (the only thing the report cannot do
// without).
StatusOr<std::string> BugReportText(const Json& bug_response);

// The commit message of bug `bug_id`'s proposed patch: the subject
// "trench: fix bug <id>: <title as one line>", a blank line, `report` (the
// bug's BugReportText) with its controls escaped (display_text.h; newlines
// kept), and a closing paragraph of trench's own. Stranger text therefore
// never reaches the subject, never sends a control to a terminal that
// shows the log, and can never be read as a trailer ("Signed-off-by: ..."):
// git reads trailers from the last paragraph only.
std::string ProposalCommitMessage(int64_t bug_id, const std::string& title,
                                  const std::string& report);

// The report of a one-shot `trench triage` (no daemon, no repository):
//   {"case": DIR, "out": DIR, "verdict": hlo-diff's verdict,
//    "minimization": hlo-reduce's summary | null, "minimized_case": DIR |
//    null, "minimized_module": HLO text | null, "localization":
//    hlo-bisect's report | null, "notes": ["why a step was skipped or
//    failed", ...]}
// Never fails; missing parts render as "not done" with the notes.
std::string TriageRunText(const Json& triage);

}  // namespace trench::orchestrator
