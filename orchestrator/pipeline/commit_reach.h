// The fuzz step's changed-line reach (triage/fuzz/line_reach.h): the
// commit's diff handed to hlo-fuzz --changed-lines, the reach it reports
// kept with the fuzz job's result (what the dashboard's commit rows and
// the triage report show), and the stress-test author's aim at the lines.
#pragma once

#include <string>

#include "base/json.h"
#include "base/status.h"
#include "orchestrator/pipeline/pipeline.h"

namespace trench::orchestrator {

// Commit `sha`'s diff against its first parent (from the mirror); "" when
// it changes no text. Errors: the mirror's.
StatusOr<std::string> CommitDiffText(StepContext& ctx, const std::string& sha);
// Writes `diff` to <dir>/commit.diff (readable by the sandboxed tools) and
// returns the path. IoError when it cannot be written.
StatusOr<std::string> WriteDiffFile(const std::string& dir,
                                    const std::string& diff);

// The reach kept with a fuzz job's result: {"lines", "reached", "no_code",
// "unreached": [...]} of hlo-fuzz's summary "reach" (other keys dropped).
Json BriefReach(const Json& reach);

// The stress-test author's task field "changed_lines": {"diff" (at most
// kTaskDiffChars, then "truncated": true), "unreached": ["path:line", ...]
// when `reach` was measured, else "reach": "not measured"}.
inline constexpr size_t kTaskDiffChars = 16000;
Json ChangedLinesTask(const std::string& diff, const Json& reach);

}  // namespace trench::orchestrator
