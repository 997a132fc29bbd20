// Pieces the pipeline's steps share: loading the bug a job is about,
// cases in the content-addressed store, builds, and the tools' JSON.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "agents/sandbox_toolbox.h"
#include "base/json.h"
#include "base/status.h"
#include "orchestrator/pipeline/pipeline.h"
#include "sandbox/sandbox.h"
#include "triage/case/verdict_record.h"
#include "triage/localize/localization_record.h"

namespace trench::orchestrator {

// The bug named by the job's payload ("bug"), or nullopt when it is no
// longer in one of `states` (the step was done already). Errors:
// kInvalidArgument for a payload without a bug id; the store's.
StatusOr<std::optional<Bug>> BugForStep(StepContext& ctx, const Job& job,
                                        std::initializer_list<BugState> states);
// The payload's string field `key` (kInvalidArgument when missing).
StatusOr<std::string> PayloadString(const Job& job, const std::string& key);

// var/cases/<sha>.
std::string CaseDir(const StepContext& ctx, const std::string& sha);
// Reads the case at `dir` (a full bundle), stores it content-addressed
// under var/cases/ and records it (Store::PutCase). Returns its sha256.
StatusOr<std::string> ImportCase(StepContext& ctx, const std::string& dir,
                                 const Json& origin);
// The bug's repro case: the minimized one when `prefer_minimized` and
// present, else the original. kFailedPrecondition when it has none.
StatusOr<std::string> ReproCaseOf(const Bug& bug, bool prefer_minimized);

// The commit a bug was found at (details.commit), else the newest built
// head (meta "head.built"). kResourceExhausted (retry later) when neither
// exists yet.
StatusOr<std::string> FoundCommitOf(StepContext& ctx, const Bug& bug);
// The known-good commit: config good_commit, else the first commit the
// watcher saw (meta "watch.base"); "" when neither is known yet.
StatusOr<std::string> KnownGoodCommit(StepContext& ctx);
// The binaries of commit `sha` (a successful build of it).
// kFailedPrecondition when it was not built or does not build.
StatusOr<std::string> BinDirOf(StepContext& ctx, const std::string& sha,
                               const std::string& patch_hash = "");
// The key of a patched build (BinDirOf's patch_hash): 16 hex digits of
// the diff's SHA-256.
std::string PatchHash(const std::string& diff);
// The target flags of a build for our tools.
std::vector<std::string> TargetFlagsFor(const std::string& bin_dir);

// A tool's stdout as JSON. kInternal naming the tool, its exit and the
// end of its stderr when it printed no JSON.
StatusOr<Json> ToolJson(const std::string& tool, const sandbox::Result& r);
// hlo-bisect's localization report (triage/localize/localization_record.h)
// from the tool's stdout. kInternal "hlo-bisect's report: " + the record's
// parse error, which names the field ("field 'signature.sig' is missing")
// or, for text that is no JSON, the line and column.
StatusOr<hlo_bisect::LocalizationReport> ToolLocalization(
    const sandbox::Result& r);
// The bug's details.localization (the localize step's copy of that report)
// as the record; nullopt when the bug has none, or when it does not parse
// (logged; read as a bug without localization).
std::optional<hlo_bisect::LocalizationReport> BugLocalization(const Bug& bug);
// The pipeline pass the bug is localized to, for hlo-bisect commits
// --pass: nullopt for the back end's culprits (codegen,
// buffer-assignment), no localization, or a name that is not a plain pass
// name (the record is data: a letter, then [a-z0-9_-], at most 64).
std::optional<std::string> PipelinePassOf(const Bug& bug);
// hlo-diff's verdict of case `case_sha` on the build in `bin_dir`, read
// through the verdict's record (verdict_record.h). kInternal for output
// that is no verdict: ToolJson's message, or "hlo-diff's verdict: " + the
// member that is wrong ("verdict.status: ...").
// A mismatching verdict carries hlo-diff's error maps
// (triage/case/error_map.h).
StatusOr<hlo_diff::Verdict> RunVerdict(StepContext& ctx,
                                       const std::string& case_sha,
                                       const std::string& bin_dir,
                                       const std::string& scratch);
// The same for hlo-diff's output `r` (run by the caller).
StatusOr<hlo_diff::Verdict> ToolVerdict(const sandbox::Result& r);

// A copy of `bug.details` with `key` set to `value`.
Json DetailsWith(const Bug& bug, const std::string& key, Json value);
// Moves the bug and queues its next step.
StatusOr<Bug> Advance(StepContext& ctx, const Bug& bug, BugState to,
                      const Json& evidence, const TransitionFields& fields);

}  // namespace trench::orchestrator

namespace trench::orchestrator {

// The sandboxed ToolBox context of an agent session: our tools, the build
// in `bin_dir`, the case store, `scratch` for the calls, the mirror as the
// repository at `head`, and runs through the daemon's ToolRunner.
agents::ToolContext ToolContextFor(const StepContext& ctx,
                                   const std::string& bin_dir,
                                   const std::string& scratch,
                                   const std::string& head);

}  // namespace trench::orchestrator
