#include "tools/hloc/hloc.h"

#include <optional>
#include <string>

#include "base/flags.h"
#include "compiler/driver/target_driver.h"

namespace trench {
namespace {

using namespace hloc;  // NOLINT: the tool's own helpers.

struct Args {
  bool capabilities = false;
  std::string command, module, output;
  CompileFlags compile;
};

void Declare(FlagParser* p, Args* a) {
  p->set_description(
      "Compiles an HLO module for the simulated TPU: the pass pipeline,\n"
      "then code generation. Prints the compile report (JSON) on stdout.");
  p->set_epilog(
      "exit: 0 ok, 1 bad input, 2 usage, 3 compile error\n"
      "With TRENCH_PASS_TRACE=FILE every pass entered is appended to FILE.");
  p->set_version(kVersion);
  p->Positional("COMMAND", &a->command, "compile (the only command)");
  p->Positional("MODULE.hlo", &a->module, "the module to compile");
  p->String("o", "PROG.tpux", &a->output, "the compiled program");
  p->Bool("capabilities", &a->capabilities,
          "print what this target supports (JSON) and exit");
  RegisterCompileFlags(p, &a->compile);
}

// The mode's arguments; InvalidArgument naming what is missing.
Status Check(const Args& a) {
  if (a.capabilities) return Status::Ok();
  if (a.command != "compile" || a.module.empty()) {
    return InvalidArgument("expected `compile MODULE.hlo -o PROG.tpux`");
  }
  if (a.output.empty()) return InvalidArgument("missing -o PROG.tpux");
  return Status::Ok();
}

}  // namespace

int RunHloc(int argc, char** argv, std::ostream& out, std::ostream& err) {
  Args a;
  FlagParser p("hloc",
               "compile MODULE.hlo -o PROG.tpux [flags]\n--capabilities");
  Declare(&p, &a);
  if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
    return *exit;
  }
  if (Status s = Check(a); !s.ok()) return p.UsageError(err, s.message());
  if (a.capabilities) {
    out << Capabilities().DumpPretty() << "\n";
    return kExitOk;
  }
  StatusOr<std::string> text = ReadFile(a.module);
  if (!text.ok()) {
    err << "hloc: " << text.status().message() << "\n";
    return kExitBadInput;
  }
  auto module = LoadModuleText(*text, a.module);
  if (!module.ok()) {
    err << "hloc: " << module.status().message() << "\n";
    return kExitBadInput;
  }
  auto c = CompileWithFlags(**module, a.compile);
  if (!c.ok()) {
    err << c.status().ToString() << "\n";
    out << CompileErrorReport(c.status().ToString()).Dump() << "\n";
    return c.status().code() == StatusCode::kIoError ? kExitBadInput
                                                     : kExitCompileError;
  }
  Status w = tpu::WriteExecutableFile(c->executable, a.output);
  if (!w.ok()) {
    err << "hloc: " << w.message() << "\n";
    return kExitBadInput;
  }
  out << CompileReport(*c).Dump() << "\n";
  return kExitOk;
}

}  // namespace trench
