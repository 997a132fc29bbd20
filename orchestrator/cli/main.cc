// `trench`: the command line of the service (orchestrator/cli/cli.h).
#include <cstdlib>
#include <iostream>

#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/progress.h"

int main(int argc, char** argv) {
  trench::cli::Context ctx;
  ctx.in = &std::cin;
  ctx.out = &std::cout;
  ctx.err = &std::cerr;
  ctx.self = argc > 0 ? argv[0] : "trench";
  ctx.err_is_terminal = trench::cli::IsTerminal(2);
  for (const char* name : {"TRENCH_SERVER", "TRENCH_TOKEN"}) {
    if (const char* v = std::getenv(name)) ctx.env[name] = v;
  }
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  const int code = trench::cli::RunCli(args, std::move(ctx));
  std::cout.flush();
  return code;
}
