// Command-line flags of hlo-eval (see hlo_eval.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace trench::hlo_eval {

struct Flags {
  bool help = false;
  std::string module_path;
  std::vector<std::string> inputs;
  bool random_inputs = false;
  uint64_t seed = 0;
  std::string output_dir;
  int threads = 0;
};

// The --help text.
const char* Usage();

// Parses argv[1..argc-1]. Flags take their value as `--f v` or `--f=v`.
// InvalidArgument naming the problem for unknown flags, missing values,
// bad numbers, --input together with --random-inputs, --seed without
// --random-inputs, and a missing MODULE or --output-dir (unless --help).
StatusOr<Flags> ParseFlags(int argc, char** argv);

}  // namespace trench::hlo_eval
