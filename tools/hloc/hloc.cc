#include "tools/hloc/hloc.h"

#include <string>
#include <vector>

#include "compiler/driver/target_driver.h"

namespace trench {
namespace {

using namespace hloc;  // NOLINT: the tool's own helpers.

const char* Usage() {
  return "usage: hloc compile MODULE.hlo -o PROG.tpux [flags]\n"
         "       hloc --capabilities\n"
         "       hloc --help\n"
         "Compiles an HLO module for the simulated TPU: the pass pipeline,\n"
         "then code generation. Prints the compile report (JSON) on stdout.\n"
         "flags:\n";
}

struct Args {
  bool help = false, capabilities = false;
  std::string module, output;
  CompileFlags compile;
};

StatusOr<Args> Parse(int argc, char** argv) {
  Args a;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      a.help = true;
      continue;
    }
    if (arg == "--capabilities") {
      a.capabilities = true;
      continue;
    }
    if (arg == "-o") {
      if (i + 1 >= argc) return InvalidArgument("-o: missing value");
      a.output = argv[++i];
      continue;
    }
    if (arg.rfind("--", 0) == 0) {
      std::string name = arg.substr(2), value;
      if (size_t eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return InvalidArgument(arg + ": missing value");
      }
      ASSIGN_OR_RETURN(bool known, ApplyCompileFlag(name, value, &a.compile));
      if (!known) return InvalidArgument("unknown flag " + arg);
      continue;
    }
    positional.push_back(arg);
  }
  if (a.help || a.capabilities) return a;
  if (positional.size() != 2 || positional[0] != "compile") {
    return InvalidArgument("expected `compile MODULE.hlo -o PROG.tpux`");
  }
  a.module = positional[1];
  if (a.output.empty()) return InvalidArgument("missing -o PROG.tpux");
  return a;
}

}  // namespace

int RunHloc(int argc, char** argv, std::ostream& out, std::ostream& err) {
  StatusOr<Args> args = Parse(argc, argv);
  if (!args.ok()) {
    err << "hloc: " << args.status().message() << "\n"
        << Usage() << CompileFlagsUsage();
    return kExitUsage;
  }
  if (args->help) {
    out << Usage() << CompileFlagsUsage();
    return kExitOk;
  }
  if (args->capabilities) {
    out << Capabilities().DumpPretty() << "\n";
    return kExitOk;
  }
  StatusOr<std::string> text = ReadFile(args->module);
  if (!text.ok()) {
    err << "hloc: " << text.status().message() << "\n";
    return kExitBadInput;
  }
  auto module = LoadModuleText(*text, args->module);
  if (!module.ok()) {
    err << "hloc: " << module.status().message() << "\n";
    return kExitBadInput;
  }
  auto c = CompileWithFlags(**module, args->compile);
  if (!c.ok()) {
    err << c.status().ToString() << "\n";
    out << CompileErrorReport(c.status().ToString()).Dump() << "\n";
    return c.status().code() == StatusCode::kIoError ? kExitBadInput
                                                     : kExitCompileError;
  }
  Status w = tpu::WriteExecutableFile(c->executable, args->output);
  if (!w.ok()) {
    err << "hloc: " << w.message() << "\n";
    return kExitBadInput;
  }
  out << CompileReport(*c).Dump() << "\n";
  return kExitOk;
}

}  // namespace trench
