#include "tools/tpusim/tpusim.h"

#include <optional>
#include <string>
#include <vector>

#include "base/flags.h"
#include "compiler/driver/run_io.h"
#include "tools/tpusim/slice_run.h"
#include "tpu/topology.h"

namespace trench {
namespace {

struct Args {
  std::string command, program, inputs, outputs;
  int chips = 0;  // 0: the executable's slice.
};

void Declare(FlagParser* p, Args* a) {
  p->set_description(
      "Runs PROG.tpux on DIR/0.npy.. and writes outputs, taps/ and "
      "report.json.");
  p->set_epilog(
      "exit: 0 ok, 1 bad input, 2 usage, 4 run crash, 5 memory error, 6 "
      "timeout");
  p->Positional("COMMAND", &a->command, "run (the only command)");
  p->Positional("PROG.tpux", &a->program, "the program");
  p->String("inputs", "DIR", &a->inputs,
            "DIR/0.npy, 1.npy, ...: one per program input");
  p->String("outputs", "DIR", &a->outputs,
            "where outputs, taps/ and report.json go");
  p->Number("chips", "N", &a->chips,
            "run on a slice of N chips (1..8; default: the program's\n"
            "`slice`); for N > 1, chip c uses DIR/c/ and OUT/c/");
}

}  // namespace

int RunTpusim(int argc, char** argv, std::ostream& out, std::ostream& err) {
  Args a;
  FlagParser p("tpusim",
               "run PROG.tpux --inputs DIR --outputs DIR [--chips N]");
  Declare(&p, &a);
  if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
    return *exit;
  }
  if (a.command != "run" || a.program.empty()) {
    return p.UsageError(err, "expected `run PROG.tpux`");
  }
  if (a.outputs.empty()) return p.UsageError(err, "missing --outputs DIR");
  if (a.chips < 0 || a.chips > tpu::kMaxSliceChips) {
    return p.UsageError(err, "--chips: a slice has 1.." +
                                 std::to_string(tpu::kMaxSliceChips) +
                                 " chips, got " + std::to_string(a.chips));
  }
  auto exe = tpu::ReadExecutableFile(a.program);
  if (!exe.ok()) {
    err << "tpusim: " << a.program << ": " << exe.status().message() << "\n";
    return 1;
  }
  const int chips = a.chips == 0 ? exe->slice : a.chips;
  if (chips > 1) {
    if (!tpusim::InputShapes(*exe).empty() && a.inputs.empty()) {
      err << "tpusim: the program takes inputs: missing --inputs DIR (with "
             "DIR/<chip>/0.npy..)\n";
      return 2;
    }
    return tpusim::RunSlice(*exe, chips, a.inputs, a.outputs, out, err);
  }
  std::vector<Literal> inputs;
  if (!tpusim::InputShapes(*exe).empty()) {
    if (a.inputs.empty()) {
      err << "tpusim: the program takes inputs: missing --inputs DIR\n";
      return 2;
    }
    auto read = tpusim::ReadInputDir(*exe, a.inputs);
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
  auto report = tpusim::WriteResults(a.outputs, *run);
  if (!report.ok()) {
    err << "tpusim: " << report.status().message() << "\n";
    return 1;
  }
  return tpusim::PrintStatus(run->report, "", out, err);
}

}  // namespace trench
