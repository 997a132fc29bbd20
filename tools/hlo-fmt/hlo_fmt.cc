#include "tools/hlo-fmt/hlo_fmt.h"

#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/verifier.h"

namespace trench {
namespace {

constexpr char kUsage[] =
    "usage: hlo-fmt MODULE [--check] [--short]\n"
    "  Parses, verifies and prints an HLO module in XLA's text format.\n"
    "  MODULE   path to the module text, or - for stdin\n"
    "  --check  print nothing; only report errors (exit 1)\n"
    "  --short  XLA's short parsable form: operands without shapes, no %,\n"
    "           no program shapes\n"
    "  --help   show this message\n";

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
  std::optional<std::string> path;
  bool check = false;
  HloPrintOptions print;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      out << kUsage;
      return kHloFmtOk;
    }
    if (arg == "--check") {
      check = true;
    } else if (arg == "--short") {
      print = HloPrintOptions::Short();
    } else if (arg.size() > 1 && arg[0] == '-') {
      err << "hlo-fmt: unknown flag " << arg << "\n" << kUsage;
      return kHloFmtUsage;
    } else if (path) {
      err << "hlo-fmt: more than one MODULE\n" << kUsage;
      return kHloFmtUsage;
    } else {
      path = arg;
    }
  }
  if (!path) {
    err << "hlo-fmt: missing MODULE\n" << kUsage;
    return kHloFmtUsage;
  }
  std::optional<std::string> text = ReadInput(*path);
  if (!text) {
    err << *path << ": cannot read file\n";
    return kHloFmtBadInput;
  }
  auto module = ParseHloModule(*text);
  if (!module.ok()) {
    err << *path << ":" << module.status().message() << "\n";
    return kHloFmtBadInput;
  }
  Status verified = VerifyModule(**module);
  if (!verified.ok()) {
    err << *path << ": " << verified.message() << "\n";
    return kHloFmtBadInput;
  }
  if (!check) out << PrintHloModule(**module, print);
  return kHloFmtOk;
}

}  // namespace trench
