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
// What landed between the known-good commit and `head` (a continuous
// round's changes, in head's line numbers); "" without a known-good commit
// or when it is head. Errors: the mirror's.
StatusOr<std::string> RoundDiffText(StepContext& ctx, const std::string& head);
// The largest diff whose changed lines a campaign measures (a larger one,
// e.g. a round over a vendored import, is fuzzed without reach).
inline constexpr size_t kMaxReachDiffBytes = 4 << 20;
// Writes `diff` to <dir>/commit.diff (readable by the sandboxed tools) and
// returns the path. IoError when it cannot be written.
StatusOr<std::string> WriteDiffFile(const std::string& dir,
                                    const std::string& diff);

// The bin dir of commit `sha`'s coverage build flavour (fuzz.coverage
// "auto"; DESIGN.md "Target contract"), built by the daemon under key
// "<sha>-coverage" in its own build directory (commit_tools.h
// BuildFlavour) with fuzz.coverage_build_command, or, when the daemon
// builds with the default CMake command, that command plus the cmake_flags
// of the target's description (target_description.h "coverage").
// *note gets {"key", "built", "cached", "seconds"} of the build, or
// {"skipped": why}. Errors (the campaign then runs on the plain build):
// kFailedPrecondition when the target offers no flavour, the daemon does
// not know how to build it, or it does not build (cached as such, like a
// commit that does not build); BuildFlavour's (kResourceExhausted: the
// machine failed the build; nothing cached, tried again next time).
StatusOr<std::string> CoverageBinOf(StepContext& ctx, const std::string& sha,
                                    const std::string& scratch, Json* note);

// The reach kept with a fuzz job's result: {"lines", "reached", "no_code",
// "unreached": [...]} of hlo-fuzz's summary "reach" (other keys dropped).
Json BriefReach(const Json& reach);

// The stress-test author's task field "changed_lines": {"diff" (at most
// kTaskDiffChars, then "truncated": true), "unreached": ["path:line", ...]
// when `reach` was measured, else "reach": "not measured"}.
inline constexpr size_t kTaskDiffChars = 16000;
Json ChangedLinesTask(const std::string& diff, const Json& reach);

}  // namespace trench::orchestrator
