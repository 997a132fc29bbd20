#include "orchestrator/cli/cli.h"

#include <algorithm>

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
    {"bugs", "[--state S] [--json] [--server URL]",
     "list bugs (all, or those in state S)", CmdBugs},
    {"show", "N [--json] [--server URL]",
     "the full triage report of bug N (repro, minimized case, localization, "
     "culprit, patch, history)",
     CmdShow},
    {"review", "N --approve|--reject [--comment C] [--server URL]",
     "approve or reject the patch proposed for bug N", CmdReview},
    {"events",
     "[--bug N | --commit SHA] [--since ID] [--limit N] [--json] "
     "[--server URL]",
     "the events: bugs' state changes and commits landed / built", CmdEvents},
    {"triage",
     "CASE_DIR [--out DIR] [--levels L] [--max-tests N] [--no-reduce] "
     "[--bin-dir D | --hlo-run P | --hloc P --tpusim P] [--target M] "
     "[--serve] [--timeout S] [--json]",
     "one-shot triage without a daemon: verdict, reduce, localize; prints "
     "the triage report",
     CmdTriage},
    {"fuzz", "[--budget 60s] [--jobs N] [--out DIR] [...hlo-fuzz's flags]",
     "one-shot fuzzing campaign without a daemon (hlo-fuzz; prints its "
     "summary)",
     CmdFuzz},
    {"demo",
     "[--bug X | --all] [--dir D] [--config F] [--source DIR] [--timeout S] "
     "[--give-up S] [--reuse BUILDER_DIR] [--json]",
     "the service end to end on a repository made from our own compiler, "
     "where a commit brings a bugzoo bug (built-in brains, no network)",
     CmdDemo},
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

int CmdHelp(const Context& ctx) {
  if (ctx.args.empty()) {
    *ctx.out << UsageText();
    return kExitOk;
  }
  const Command* c = FindCommand(ctx.args[0]);
  if (c == nullptr) {
    *ctx.err << "trench: unknown command '" << ctx.args[0] << "'\n"
             << UsageText();
    return kExitUsage;
  }
  *ctx.out << CommandUsage(*c);
  return kExitOk;
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
      "usage: trench COMMAND [ARGS]\n\n"
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
  const Command* c = FindCommand(args[0]);
  if (c == nullptr) {
    *ctx.err << "trench: unknown command '" << args[0] << "'\n" << UsageText();
    return kExitUsage;
  }
  ctx.args.assign(args.begin() + 1, args.end());
  const bool help = std::any_of(
      ctx.args.begin(), ctx.args.end(),
      [](const std::string& a) { return a == "--help" || a == "-h"; });
  if (help && c->run != CmdFuzz) {
    *ctx.out << CommandUsage(*c);
    return kExitOk;
  }
  return c->run(ctx);
}

bool Flags::Has(const std::string& name) const {
  return values.count(name) > 0 ||
         std::find(switches.begin(), switches.end(), name) != switches.end();
}

std::string Flags::Get(const std::string& name,
                       const std::string& fallback) const {
  auto it = values.find(name);
  return it == values.end() || it->second.empty() ? fallback
                                                  : it->second.back();
}

StatusOr<Flags> ParseFlags(const std::vector<std::string>& args,
                           const std::vector<std::string>& valued,
                           const std::vector<std::string>& switch_names) {
  auto known = [](const std::vector<std::string>& list, const std::string& n) {
    return std::find(list.begin(), list.end(), n) != list.end();
  };
  Flags f;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      f.positional.insert(f.positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (a.size() < 2 || a[0] != '-') {
      f.positional.push_back(a);
      continue;
    }
    const size_t dashes = a[1] == '-' ? 2 : 1;
    std::string name = a.substr(dashes);
    std::optional<std::string> value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (known(valued, name)) {
      if (!value) {
        if (i + 1 >= args.size()) {
          return InvalidArgument("--" + name + " needs a value");
        }
        value = args[++i];
      }
      f.values[name].push_back(*value);
    } else if (known(switch_names, name) && !value) {
      f.switches.push_back(name);
    } else {
      return InvalidArgument("unknown flag '" + a + "'");
    }
  }
  return f;
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
