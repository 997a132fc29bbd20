// How agents act: the tools of the registry (agents/tools.def, the ONE
// list), called by name with JSON arguments. A ToolBox validates the
// arguments against the tool's JSON schema before anything runs, and runs
// the tool's binary in the sandbox (sandbox/sandbox.h). There is no shell
// tool. Both brains (built-in and LLM) use the same ToolBox.
//
// The registry's tools (arguments -> output; "case" is a case id: the
// sha256 of a stored case or the name of a scratch case of this session):
//   write_case     {hlo, seed?, origin?}          -> {case, instructions}
//                  parses and verifies the HLO (errors with line:column),
//                  draws inputs from the seed
//   read_case      {case}                         -> {hlo, case_json}
//   run_case       {case, runs?=1}                -> {runs, failures,
//                  status (most frequent), statuses[], signature, verdict}
//                  hlo-diff against the build under test
//   reduce_case    {case, seconds?, passes?[]}    -> {case, before, after}
//                  hlo-reduce (same bug), the result stored as a new case
//   localize_case  {case}                         -> hlo-bisect's report
//   fuzz           {seconds, seed?, ops?[], passes?[]} -> {programs,
//                  findings: [{case, status, signature}]}
//   culprit_diff   {commit, path?}                -> {diff, files[]}
//                  the commit's diff against its first parent (read only)
//   read_source    {commit, path, start?, end?}   -> {text, lines}
//   try_patch      {diff}                          -> {applies, built,
//                  repro_status, message}: builds head + the patch and
//                  re-runs the bug's repro (the orchestrator's builder)
//   submit_patch   {diff, rationale, strategy?}   -> {candidate}
//   finish         {outcome, summary, ...}        -> {} ends the session
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agents/llm_client.h"
#include "base/json.h"
#include "base/status.h"

namespace trench::agents {

struct ToolResult {
  bool ok = false;    // The tool ran and did what was asked.
  Json output;        // The tool's JSON answer (when ok).
  std::string error;  // Why not (when !ok): shown to the model as is.
  double seconds = 0;
};

class ToolBox {
 public:
  virtual ~ToolBox() = default;
  // The tools this box offers (a subset of the registry, per role).
  virtual const std::vector<ToolSpec>& Specs() const = 0;
  // Validates `args` against the tool's schema, then runs it. A tool that
  // fails (bad HLO, a patch that does not apply, a crash of the binary)
  // gives a ToolResult with ok == false, not an error. Errors:
  // kInvalidArgument for an unknown tool or arguments that fail the schema
  // (the message names the field: "run_case: runs: expected an integer,
  // got \"3\""); kInternal for a broken set-up (missing binary).
  virtual StatusOr<ToolResult> Call(const std::string& name,
                                    const Json& args) = 0;
};

}  // namespace trench::agents
