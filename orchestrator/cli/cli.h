// The `trench` command line (DESIGN.md "The daemon"): one table of
// subcommands, each a function of its arguments and streams, so tests run
// them in-process and capture their output.
//
//   trench serve --config F            the daemon (cmd_serve.cc)
//   trench report [FILE|-] ...         API client commands (cmd_client.cc)
//   trench bugs | show N | review N | events | retry N
//   trench jobs [--state S] | jobs retry N   the job queue (cmd_jobs.cc)
//   trench triage CASE_DIR ...         one-shot, no daemon (cmd_triage.cc)
//   trench fuzz --budget 60s ...       one-shot campaign (cmd_fuzz.cc)
//   trench demo [--bug X|--random|--all] the service end to end (cmd_demo.cc)
//
// Every subcommand parses its arguments with base/flags.h (CommandParser):
// -h/--help and --version everywhere. Exit codes: 0 ok, 1 failure (the
// message says why, on `err`), 2 usage error (bad subcommand or flags; the
// usage follows the message).
// Messages start with "trench: ".
#pragma once

#include <istream>
#include <map>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/flags.h"
#include "base/status.h"

namespace trench::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// What one subcommand runs with.
struct Context {
  std::vector<std::string> args;  // After the subcommand name.
  std::istream* in = nullptr;     // stdin (for `trench report -`).
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  // Environment variables the commands read (TRENCH_SERVER, TRENCH_TOKEN);
  // main() fills it from the process environment.
  std::map<std::string, std::string> env;
  // argv[0] of the process (to find the tools next to `trench`).
  std::string self;
  // True when `err` is a terminal: long commands then show a status line
  // on it (progress.h); main() sets it from isatty(2).
  bool err_is_terminal = false;

  // env[name], or nullopt when unset or empty.
  std::optional<std::string> Env(const std::string& name) const;
};

using CommandFn = int (*)(const Context& ctx);

struct Command {
  std::string_view name;
  std::string_view usage;    // Arguments, e.g. "N --approve|--reject".
  std::string_view summary;  // One line.
  CommandFn run;
};

// THE list of subcommands, in the order `trench help` shows them.
std::span<const Command> Commands();

// The overall usage text (every command's usage and summary).
std::string UsageText();

// Runs `trench args...` (args[0] is the subcommand). Returns the exit code.
int RunCli(const std::vector<std::string>& args, Context ctx);

// ---- Helpers for the command files.

// A parser (base/flags.h) for subcommand `name`: tool "trench <name>",
// the table's usage as its synopsis and its summary as the description;
// unknown flags are quoted ("unknown flag '--x'").
// REQUIRES: `name` is in Commands().
FlagParser CommandParser(std::string_view name);

// Parses ctx.args with `p`. Returns nullopt when the command should run;
// else the exit code after printing the help or version (ctx.out) or the
// error (UsageError).
std::optional<int> ParseArgs(const Context& ctx, FlagParser& p);

// Prints "trench: <message>" and the command's usage on ctx.err; returns
// kExitUsage.
int UsageError(const Context& ctx, std::string_view command,
               const std::string& message);
// Prints "trench: <message>"; returns kExitFailure.
int Fail(const Context& ctx, const std::string& message);

// The HLO module in free text, or "" when there is none: from a line
// starting with "HloModule " to the end of its ``` fence when it is inside
// one, else to the close of its ENTRY computation (braces balanced), else
// to the end of the text.
std::string ExtractInlineHlo(std::string_view text);

// The subcommands (one file per group).
int CmdServe(const Context& ctx);         // cmd_serve.cc
int CmdReport(const Context& ctx);        // cmd_client.cc
int CmdBugs(const Context& ctx);          // cmd_client.cc
int CmdShow(const Context& ctx);          // cmd_client.cc
int CmdReview(const Context& ctx);        // cmd_client.cc
int CmdRetry(const Context& ctx);         // cmd_client.cc
int CmdEvents(const Context& ctx);        // cmd_client.cc
int CmdJobs(const Context& ctx);          // cmd_jobs.cc
int CmdTriage(const Context& ctx);        // cmd_triage.cc
int CmdFuzz(const Context& ctx);          // cmd_fuzz.cc
int CmdDemo(const Context& ctx);          // cmd_demo.cc
int CmdRunSandboxed(const Context& ctx);  // cmd_run_sandboxed.cc

}  // namespace trench::cli
