// The target compiler's entry point: HLO module -> TPU executable (.tpux).
//
// The module is compiled as it is (no optimization passes run here): one
// kernel per instruction that computes something, buffers from
// buffer_plan.h, then one kernel copying the entry's result leaves (and the
// tapped values) to the output (and tap) buffers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_module.h"
#include "tpu/executable.h"

namespace trench::codegen {

struct CompileOptions {
  // Taps: every entry instruction (taps_all) or the named ones. A tapped
  // array value becomes tap buffer labelled with the instruction name; a
  // tuple value gives one tap per array leaf, labelled "name#i".
  bool taps_all = false;
  std::vector<std::string> taps;
  // Pass-pipeline controls, recorded for the optimization pipeline; the
  // code generator itself does not read them.
  std::vector<std::string> disabled_passes;
  std::optional<int64_t> pass_limit;
  std::optional<int64_t> rewrite_limit;
  // VMEM capacity assumed per kernel (tpu::SimOptions::vmem_bytes).
  int64_t vmem_bytes = 16 << 20;
};

// Compiles the entry computation of `module` (REQUIRES: VerifyModule ok).
// Errors: Unimplemented("hloc: cannot compile <op> for <dtype>") for an op
// or element type the code generator does not support; NotFound for a tap
// naming no entry instruction; ResourceExhausted when an instruction's
// operands do not fit in VMEM. Never crashes.
StatusOr<tpu::Executable> CompileModule(const HloModule& module,
                                        const CompileOptions& options);

// The op names (HLO spelling) and element types CompileModule supports,
// for `hloc --capabilities`.
std::vector<std::string> SupportedOps();
std::vector<std::string> SupportedDtypes();

}  // namespace trench::codegen
