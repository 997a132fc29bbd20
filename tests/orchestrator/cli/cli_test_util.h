// Runs the trench CLI in process (cli::RunCli) with its streams captured:
// the one way the CLI's tests call it.
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "orchestrator/cli/cli.h"

namespace trench::cli::testing {

struct CliRun {
  int code = -1;
  std::string out, err;
};

// `trench args...` with `env` as its environment and `stdin_text` on stdin.
inline CliRun RunTrench(const std::vector<std::string>& args,
                        std::map<std::string, std::string> env = {},
                        const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  Context ctx;
  ctx.in = &in;
  ctx.out = &out;
  ctx.err = &err;
  ctx.env = std::move(env);
  CliRun r;
  r.code = RunCli(args, std::move(ctx));
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace trench::cli::testing
