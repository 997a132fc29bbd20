#include "tools/tpusim/tpusim.h"

#include <string>
#include <vector>

#include "compiler/driver/run_io.h"

namespace trench {
namespace {

const char* Usage() {
  return "usage: tpusim run PROG.tpux --inputs DIR --outputs DIR\n"
         "       tpusim --help\n"
         "Runs PROG.tpux on DIR/0.npy.. and writes outputs, taps/ and "
         "report.json.\n";
}

struct Args {
  bool help = false;
  std::string program, inputs, outputs;
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
      if (name == "inputs") {
        a.inputs = value;
      } else if (name == "outputs") {
        a.outputs = value;
      } else {
        return InvalidArgument("unknown flag " + arg);
      }
      continue;
    }
    positional.push_back(arg);
  }
  if (a.help) return a;
  if (positional.size() != 2 || positional[0] != "run") {
    return InvalidArgument("expected `run PROG.tpux`");
  }
  a.program = positional[1];
  if (a.outputs.empty()) return InvalidArgument("missing --outputs DIR");
  return a;
}

}  // namespace

int RunTpusim(int argc, char** argv, std::ostream& out, std::ostream& err) {
  StatusOr<Args> args = Parse(argc, argv);
  if (!args.ok()) {
    err << "tpusim: " << args.status().message() << "\n" << Usage();
    return 2;
  }
  if (args->help) {
    out << Usage();
    return 0;
  }
  auto exe = tpu::ReadExecutableFile(args->program);
  if (!exe.ok()) {
    err << "tpusim: " << args->program << ": " << exe.status().message()
        << "\n";
    return 1;
  }
  std::vector<Literal> inputs;
  if (!tpusim::InputShapes(*exe).empty()) {
    if (args->inputs.empty()) {
      err << "tpusim: the program takes inputs: missing --inputs DIR\n";
      return 2;
    }
    auto read = tpusim::ReadInputDir(*exe, args->inputs);
    if (!read.ok()) {
      err << "tpusim: " << read.status().message() << "\n";
      return 1;
    }
    inputs = std::move(read).value();
  }
  auto run = tpusim::RunWithInputs(*exe, inputs);
  if (!run.ok()) {
    err << "tpusim: " << run.status().message() << "\n";
    return 1;
  }
  auto report = tpusim::WriteResults(args->outputs, *run);
  if (!report.ok()) {
    err << "tpusim: " << report.status().message() << "\n";
    return 1;
  }
  const tpu::RunReport& rep = run->report;
  out << "status " << tpusim::StatusName(rep.status) << ", "
      << rep.cost.total.cycles << " cycles\n";
  if (rep.status != tpu::RunStatus::kOk) {
    err << "tpusim: " << tpusim::StatusName(rep.status) << ": " << rep.message
        << "\n";
  }
  return tpusim::ExitCode(rep.status);
}

}  // namespace trench
