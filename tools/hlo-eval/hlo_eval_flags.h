// Command-line flags of hlo-eval (see hlo_eval.h), declared on the one
// parser (base/flags.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/flags.h"
#include "base/status.h"
#include "compiler/ir/collective_groups.h"

namespace trench::hlo_eval {

struct Flags {
  std::string module_path;
  std::vector<std::string> inputs;
  bool random_inputs = false;
  uint64_t seed = 0;
  std::string output_dir;
  int threads = 0;
  std::string mesh_text;  // --mesh RxP ("" : one device).
  DeviceMesh mesh;        // From mesh_text by CheckFlags.
};

// Declares hlo-eval's synopsis, flags and MODULE on `p`, storing into *f.
// REQUIRES: *f outlives p->Parse.
void RegisterFlags(FlagParser* p, Flags* f);

// After p.Parse: InvalidArgument naming the problem for a missing MODULE
// or --output-dir, --input together with --random-inputs, --seed without
// --random-inputs, --threads < 0, or a --mesh that is not RxP (or P) with
// 1..4096 devices. Sets f->mesh.
Status CheckFlags(const FlagParser& p, Flags* f);

}  // namespace trench::hlo_eval
