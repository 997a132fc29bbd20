// A sandboxed run as files, so that it can run on another machine (a Slurm
// job on a compute node, issue 22) with the same limits and report the same
// Result: in a directory both sides see,
//   request.json  the Options (OptionsToJson);
//   result.json   the Result without its captured output (ResultToJson);
//   stdout, stderr  the captured bytes, as they came.
// `trench run-sandboxed DIR` reads the request, runs it, and writes the
// result; the submitting side reads it back with ReadRunResult.
//
// The request is data from the daemon, the result data from a run that may
// be hostile: both are read with every member checked (kInvalidArgument
// naming the member), and the captured files are read up to the limits the
// request set.
#pragma once

#include <string>

#include "base/json.h"
#include "base/status.h"
#include "sandbox/sandbox.h"

namespace trench::sandbox {

Json OptionsToJson(const Options& options);
StatusOr<Options> OptionsFromJson(const Json& j);

// The Result's JSON, without stdout_data and stderr_data.
Json ResultToJson(const Result& result);
StatusOr<Result> ResultFromJson(const Json& j);

// <dir>/request.json.
Status WriteRunRequest(const std::string& dir, const Options& options);
StatusOr<Options> ReadRunRequest(const std::string& dir);
// <dir>/result.json, <dir>/stdout, <dir>/stderr (written through a
// temporary name each, result.json last: its presence means the rest is
// there).
Status WriteRunResult(const std::string& dir, const Result& result);
// kNotFound when result.json is not there (the run did not finish).
// `limits` bounds what is read of stdout and stderr (the rest counts as
// truncated).
StatusOr<Result> ReadRunResult(const std::string& dir, const Limits& limits);

}  // namespace trench::sandbox
