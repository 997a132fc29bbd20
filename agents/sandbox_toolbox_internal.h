// Shared helpers of the SandboxToolBox's handlers (sandbox_toolbox*.cc):
// scratch dirs, running a tool binary in the sandbox, case ids <-> the
// case store. Not a public interface.
#pragma once

#include <string>
#include <vector>

#include "agents/sandbox_toolbox.h"
#include "agents/tool_registry.h"
#include "base/json.h"
#include "base/scoped_temp_dir.h"
#include "base/status.h"
#include "sandbox/sandbox.h"

namespace trench::agents::internal {

// A fresh directory scratch_dir/<tool>-<n>.XXXXXX, searchable by the
// sandbox uid; removed when the returned object goes away.
StatusOr<ScopedTempDir> MakeScratchDir(const ToolContext& ctx,
                                       const std::string& tool, int n);

// Runs tools_dir/<def.runner> with `args` in the sandbox, `work_dir` as its
// work dir, for at most `wall_seconds`. kInternal when the binary is
// missing or the sandbox cannot start it.
StatusOr<sandbox::Result> RunToolBinary(const ToolContext& ctx,
                                        const ToolDef& def,
                                        const std::vector<std::string>& args,
                                        const std::string& work_dir,
                                        double wall_seconds);

// The tool's stdout parsed as a JSON object, or a message naming the
// problem ("hlo-diff printed malformed JSON: 1:3: ...").
StatusOr<Json> ParseToolOutput(const ToolDef& def, const sandbox::Result& r);

// Why a run failed, for the model: the tool's stderr (trimmed, paths of
// `work_dir` made relative) or how it ended (timeout, signal).
std::string FailureText(const ToolDef& def, const sandbox::Result& r,
                        const std::string& work_dir);

// The directory of stored case `id` (64 lowercase hex digits, existing in
// cases_dir), or InvalidArgument naming the problem.
StatusOr<std::string> CaseDir(const ToolContext& ctx, const std::string& id);

// Stores the case directory `dir` (written by a tool) in cases_dir under
// its content address and returns the address. `origin`, when not null,
// replaces the case's origin. `instructions` (optional) receives the
// module's instruction count. kInvalidArgument when the case cannot be
// read (the message names the problem); kIoError when it cannot be stored.
StatusOr<std::string> StoreCaseDir(const ToolContext& ctx,
                                   const std::string& dir, const Json& origin,
                                   int64_t* instructions);

// Whether `path` names `root` itself or something inside it (lexically,
// after normalization; symlinks are not followed).
bool IsInside(const std::string& path, const std::string& root);

// A verdict as a brain sees it (run_case's "verdict", read_case's
// case_json.verdict): its error maps (up
// to 8 x 64 x 64 numbers, drawn for the dashboard) are left out, and
// "error_maps_left_out" counts them.
Json VerdictForModel(Json verdict);

}  // namespace trench::agents::internal
