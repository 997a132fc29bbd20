// The real ToolBox (agents/toolbox.h): the registry's tools (tools.def)
// for one role, each call validated against its schema and then run:
//   hlo-diff / hlo-reduce / hlo-bisect / hlo-fuzz  in the sandbox
//       (sandbox/sandbox.h), with the tools, the build under test and the
//       case store visible read-only and a fresh scratch work dir per call
//       (the only writable place; removed after the call). A case a tool
//       writes there is stored content-addressed (CaseSha256) in cases_dir
//       by us, outside the sandbox.
//   read_case, culprit_diff, read_source  in-process, read-only (files of
//       the case store; the repo through libgit2).
//   try_patch, submit_patch  the orchestrator's callbacks.
//   finish  returns {} (the runtime ends the session on it).
// A tool's output is JSON; output that is not (or lacks what the tool
// promises) gives ToolResult{ok = false} naming the problem, as does a
// tool that fails, times out or is killed.
//
// Thread-compatible: one SandboxToolBox per session.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "agents/toolbox.h"
#include "base/json.h"
#include "base/status.h"
#include "sandbox/sandbox.h"

namespace trench::agents {

struct ToolContext {
  std::string tools_dir;    // hlo-diff, hlo-reduce, hlo-bisect, hlo-fuzz.
  std::string bin_dir;      // The build under test: hloc, tpusim, hlo-run.
  std::string cases_dir;    // <sha256>/{module.hlo, inputs/, case.json}.
  std::string scratch_dir;  // Per-call work dirs are made inside.
  std::string repo;         // Target repository ("": no git tools).
  std::string head;         // Its head commit: what "head" names in git tools.
  // The fuzz tool's campaigns: worker threads, and the trace corpus
  // directory programs are also cut from ("": none; made readable).
  int fuzz_jobs = 1;
  std::string fuzz_corpus;
  // Sandbox options.
  bool namespaces = true;
  uid_t uid = 65534;
  gid_t gid = 65534;
  uint64_t memory_bytes = 0;  // 0: the registry's per-tool limit.
  // Callbacks of the orchestrator (try_patch: {applies, built,
  // repro_status, message}; submit_patch: {candidate}). An error Status
  // becomes a failed ToolResult with its message. Null: the tool fails
  // with "not available in this session".
  // Runs a sandboxed tool (the daemon's ToolRunner: its global cap on
  // concurrent runs and its shutdown). Null: sandbox::Run.
  std::function<StatusOr<sandbox::Result>(const sandbox::Options&)> run;
  std::function<StatusOr<Json>(const Json& args)> try_patch;
  std::function<StatusOr<Json>(const Json& args)> submit_patch;
};

class SandboxToolBox : public ToolBox {
 public:
  // Errors: kInvalidArgument for an unknown role or an empty tools_dir /
  // cases_dir / scratch_dir; kInternal when the registry is broken.
  static StatusOr<std::unique_ptr<SandboxToolBox>> Create(
      const std::string& role, ToolContext context);

  const std::vector<ToolSpec>& Specs() const override { return specs_; }
  // See ToolBox::Call. A tool the role may not use is kInvalidArgument
  // ("unknown tool"), as is a schema failure. kInternal when the tool's
  // binary is missing from tools_dir or the scratch dir cannot be made.
  StatusOr<ToolResult> Call(const std::string& name, const Json& args) override;

  const std::string& role() const { return role_; }

  // Handlers (sandbox_toolbox_*.cc). Public for the handler table only.
  StatusOr<ToolResult> WriteCase(const Json& args);
  StatusOr<ToolResult> ReadCaseTool(const Json& args);
  StatusOr<ToolResult> RunCase(const Json& args);
  StatusOr<ToolResult> ReduceCase(const Json& args);
  StatusOr<ToolResult> LocalizeCase(const Json& args);
  StatusOr<ToolResult> Fuzz(const Json& args);
  StatusOr<ToolResult> CulpritDiff(const Json& args);
  StatusOr<ToolResult> ReadSource(const Json& args);
  StatusOr<ToolResult> TryPatch(const Json& args);
  StatusOr<ToolResult> SubmitPatch(const Json& args);
  StatusOr<ToolResult> Finish(const Json& args);

 private:
  SandboxToolBox(std::string role, ToolContext context,
                 std::vector<ToolSpec> specs);

  std::string role_;
  ToolContext ctx_;
  std::vector<ToolSpec> specs_;
  int calls_ = 0;  // Numbers the scratch dirs.
};

// A failed ToolResult with `error`.
ToolResult ToolFailure(std::string error);
// A successful ToolResult with `output`.
ToolResult ToolSuccess(Json output);

}  // namespace trench::agents
