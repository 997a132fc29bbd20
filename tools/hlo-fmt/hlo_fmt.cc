#include "tools/hlo-fmt/hlo_fmt.h"

#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "base/flags.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/verifier.h"

namespace trench {
namespace {

// Reads the whole file (or stdin for "-"); nullopt when unreadable.
std::optional<std::string> ReadInput(const std::string& path) {
  std::ostringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

}  // namespace

int RunHloFmt(int argc, char** argv, std::ostream& out, std::ostream& err) {
  std::string path;
  bool check = false, short_form = false;
  FlagParser p("hlo-fmt", "MODULE [--check] [--short]");
  p.set_description(
      "Parses, verifies and prints an HLO module in XLA's text format.");
  p.set_epilog("exit: 0 ok, 1 bad input, 2 usage");
  p.Positional("MODULE", &path, "path to the module text, or - for stdin");
  p.Bool("check", &check, "print nothing; only report errors (exit 1)");
  p.Bool("short", &short_form,
         "XLA's short parsable form: operands without shapes, no %,\n"
         "no program shapes");
  if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
    return *exit;
  }
  if (path.empty()) return p.UsageError(err, "missing MODULE");
  const HloPrintOptions print =
      short_form ? HloPrintOptions::Short() : HloPrintOptions();
  std::optional<std::string> text = ReadInput(path);
  if (!text) {
    err << path << ": cannot read file\n";
    return kHloFmtBadInput;
  }
  auto module = ParseHloModule(*text);
  if (!module.ok()) {
    err << path << ":" << module.status().message() << "\n";
    return kHloFmtBadInput;
  }
  Status verified = VerifyModule(**module);
  if (!verified.ok()) {
    // A message that names the instruction's "LINE:COL: " reads as a parse
    // error does: MODULE:LINE:COL: message.
    const std::string& m = verified.message();
    const bool located = !m.empty() && m[0] >= '0' && m[0] <= '9';
    err << path << (located ? ":" : ": ") << m << "\n";
    return kHloFmtBadInput;
  }
  if (!check) out << PrintHloModule(**module, print);
  return kHloFmtOk;
}

}  // namespace trench
