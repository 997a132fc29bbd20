// `trench run-sandboxed DIR`: one sandboxed run described by files
// (sandbox/run_files.h), the form a Slurm job runs on a compute node:
// reads DIR/request.json, runs it in this machine's sandbox with the
// request's limits, and writes DIR/result.json, DIR/stdout and
// DIR/stderr. Exit 0 once the result is written, whatever the run did; 1
// when the request cannot be read or run (named on stderr).
#include "orchestrator/cli/cli.h"
#include "sandbox/run_files.h"
#include "sandbox/sandbox.h"

namespace trench::cli {

int CmdRunSandboxed(const Context& ctx) {
  std::string dir;
  FlagParser p = CommandParser("run-sandboxed");
  p.Positional("DIR", &dir, "the run's directory (request.json)");
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  if (dir.empty()) return UsageError(ctx, "run-sandboxed", "DIR needed");
  StatusOr<sandbox::Options> options = sandbox::ReadRunRequest(dir);
  if (!options.ok()) return Fail(ctx, options.status().message());
  StatusOr<sandbox::Result> result = sandbox::Run(*options);
  if (!result.ok()) return Fail(ctx, result.status().message());
  if (Status s = sandbox::WriteRunResult(dir, *result); !s.ok()) {
    return Fail(ctx, s.message());
  }
  return kExitOk;
}

}  // namespace trench::cli
