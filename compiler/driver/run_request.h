// One hlo-run job: load, compile, run, write. Shared by the one-shot command
// line and `--serve`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "compiler/driver/target_driver.h"

namespace trench::hlo_run {

struct Request {
  std::string module_text;               // HLO text.
  std::string module_origin;             // Path, or "<request>", for messages.
  std::vector<std::string> input_files;  // One .npy per array input leaf.
  // Or a directory: DIR/<i>.npy, and per device DIR/<d>/<i>.npy when
  // compile.options.mesh has several devices.
  std::string input_dir;
  std::optional<uint64_t> seed;  // Random inputs instead of files.
  std::string output_dir;
  hloc::CompileFlags compile;
};

struct Outcome {
  int exit_code = 0;  // target_driver.h's exit codes.
  // ok | bad_input | compile_error | run_crash | memory_error | timeout.
  std::string status;
  std::string message;
  Json report;  // What D/report.json holds (null if it was not written).
};

// Runs the job; never throws. With a mesh of several devices
// (compile.options.mesh) the program runs on a slice of one chip per
// device (tpu/slice.h): inputs come from input_dir (DIR/<d>/<i>.npy) or
// a seed (device d: RandomArguments(entry, seed + d), written to
// D/inputs/<d>/<i>.npy); device d's outputs and taps go to D/<d>/ and
// D/report.json is the slice's (tpusim::WriteSliceResults, with
// "compile"). Otherwise, as for one chip: Inputs: files are matched in order
// with the entry parameters' array leaves (flattened); with a seed they are
// RandomArguments(entry, seed) (as hlo-eval's, bit for bit) and are also
// written to D/inputs/<i>.npy. Writes D/<i>.npy, D/taps/<label>.npy and
// D/report.json: tpusim's report when the program ran, else {"status",
// "message", "stage": "load"|"compile"|"run"}.
Outcome Execute(const Request& request);

}  // namespace trench::hlo_run
