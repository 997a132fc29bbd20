#include "orchestrator/cli/cli.h"

namespace trench::cli {
namespace {

int CmdHelp(const Context& ctx);

constexpr Command kCommands[] = {
    {"serve", "--config FILE",
     "run the daemon (config/trench.json; SIGTERM stops it gracefully)",
     CmdServe},
    {"report",
     "[FILE|-] [--title T] [--hlo F.hlo] [--inputs F.json] [--server URL]",
     "report a bug: free text from FILE or stdin, HLO attached or inline; "
     "prints the new bug id",
     CmdReport},
    {"bugs", "[--state S] [--limit N [--page CURSOR]] [--json] [--server URL]",
     "list bugs (all, or those in state S; --help lists the states), or "
     "one page of them",
     CmdBugs},
    {"show", "N [--json] [--server URL]",
     "the full triage report of bug N (repro, minimized case, localization, "
     "culprit, patch, history)",
     CmdShow},
    {"review",
     "N --approve|--reject|--redraft --hint H|--duplicate-of M|--invalid|"
     "--close|--reopen [--comment C] [--server URL]",
     "a reviewer's verb on bug N: approve or reject its proposed patch, "
     "redraft it with a hint, mark it a duplicate of M or invalid, close or "
     "reopen it",
     CmdReview},
    {"retry", "N [--server URL]",
     "queue bug N's parked or failed steps again (trench show lists them)",
     CmdRetry},
    {"events",
     "[--bug N | --commit SHA] [--since ID] [--limit N] [--follow [--wait S] "
     "[--count N]] [--json] [--server URL]",
     "the events: bugs' state changes and commits landed / built; --follow "
     "prints new ones as they come, until interrupted",
     CmdEvents},
    {"jobs",
     "[--state queued|running|done|failed|parked] [--kind K] [--bug N] "
     "[--limit N] [--before ID] [--json] [--server URL] | jobs retry N",
     "the daemon's job queue, newest first, with each failed or parked "
     "job's last error; retry N queues failed or parked job N again",
     CmdJobs},
    {"triage",
     "CASE_DIR [--out DIR] [--levels L] [--max-tests N] [--no-reduce] "
     "[--bin-dir D | --hlo-run P | --hloc P --tpusim P] [--target M] "
     "[--serve] [--timeout S] [--json]",
     "one-shot triage without a daemon: verdict, reduce, localize; prints "
     "the triage report",
     CmdTriage},
    {"fuzz",
     "[--budget 60s] [--jobs N] [--out DIR] [--json] [...hlo-fuzz's flags] "
     "(at least one flag)",
     "one-shot fuzzing campaign without a daemon (hlo-fuzz; prints its "
     "summary)",
     CmdFuzz},
    {"demo",
     "[--bug X | --random | --all] [--dir D] [--config F] [--source DIR] "
     "[--timeout S] [--give-up S] [--reuse BUILDER_DIR] [--json]",
     "the service end to end on a repository made from our own compiler, "
     "where a commit brings a bugzoo bug (built-in brains, no network)",
     CmdDemo},
    {"run-sandboxed", "DIR",
     "one sandboxed run described by DIR/request.json, its result written "
     "to DIR/result.json, stdout, stderr (what a Slurm job runs)",
     CmdRunSandboxed},
    {"help", "[COMMAND]", "this text, or one command's usage", CmdHelp},
};

const Command* FindCommand(std::string_view name) {
  for (const Command& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string CommandUsage(const Command& c) {
  return "usage: trench " + std::string(c.name) + " " + std::string(c.usage) +
         "\n  " + std::string(c.summary) + "\n";
}

// `trench help COMMAND` is `trench COMMAND --help`.
int CmdHelp(const Context& ctx) {
  std::string name;
  FlagParser p = CommandParser("help");
  p.AllowNoArguments();
  p.Positional("COMMAND", &name, "a command");
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  if (name.empty()) {
    *ctx.out << UsageText();
    return kExitOk;
  }
  const Command* c = FindCommand(name);
  if (c == nullptr) {
    *ctx.err << "trench: unknown command '" << name << "'\n" << UsageText();
    return kExitUsage;
  }
  Context help = ctx;
  help.args = {"--help"};
  return c->run(help);
}

}  // namespace

std::optional<std::string> Context::Env(const std::string& name) const {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

std::span<const Command> Commands() { return kCommands; }

std::string UsageText() {
  std::string s =
      "usage: trench COMMAND [ARGS]\n"
      "       trench COMMAND --help | trench --version\n\n"
      "trench is a correctness triage service for tensor compilers.\n\n"
      "commands:\n";
  for (const Command& c : kCommands) {
    s += "  " + std::string(c.name) + " " + std::string(c.usage) + "\n      " +
         std::string(c.summary) + "\n";
  }
  s += "\nThe API commands talk to the daemon at --server URL (default: "
       "$TRENCH_SERVER, else http://127.0.0.1:7878); writes send the bearer "
       "token from $TRENCH_TOKEN.\n"
       "Exit codes: 0 ok, 1 failure, 2 usage error.\n";
  return s;
}

int RunCli(const std::vector<std::string>& args, Context ctx) {
  if (args.empty()) {
    *ctx.err << "trench: no command given\n" << UsageText();
    return kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h") {
    *ctx.out << UsageText();
    return kExitOk;
  }
  if (args[0] == "--version") {
    *ctx.out << "trench " << kTrenchVersion << "\n";
    return kExitOk;
  }
  const Command* c = FindCommand(args[0]);
  if (c == nullptr) {
    *ctx.err << "trench: unknown command '" << args[0] << "'\n" << UsageText();
    return kExitUsage;
  }
  ctx.args.assign(args.begin() + 1, args.end());
  return c->run(ctx);
}

FlagParser CommandParser(std::string_view name) {
  const Command* c = FindCommand(name);
  FlagParser p("trench " + std::string(name),
               c != nullptr ? std::string(c->usage) : "");
  if (c != nullptr) p.set_description(std::string(c->summary));
  p.QuoteUnknownFlags();
  return p;
}

std::optional<int> ParseArgs(const Context& ctx, FlagParser& p) {
  Status s = p.Parse(ctx.args);
  if (p.help_requested()) {
    *ctx.out << p.HelpText();
    return kExitOk;
  }
  if (p.version_requested()) {
    *ctx.out << p.version() << "\n";
    return kExitOk;
  }
  if (!s.ok()) {
    return UsageError(ctx, p.tool().substr(p.tool().find(' ') + 1),
                      s.message());
  }
  return std::nullopt;
}

int UsageError(const Context& ctx, std::string_view command,
               const std::string& message) {
  *ctx.err << "trench: " << message << "\n";
  if (const Command* c = FindCommand(command)) *ctx.err << CommandUsage(*c);
  return kExitUsage;
}

int Fail(const Context& ctx, const std::string& message) {
  *ctx.err << "trench: " << message << "\n";
  return kExitFailure;
}

}  // namespace trench::cli
