// Compile options a module carries in its header's frontend attributes,
// so that a case reproduces with them wherever it goes (minimized,
// bisected, run by another tool) without flags:
//
//   HloModule m, frontend_attributes={trench_vmem_bytes="262144"}
//
//   trench_vmem_bytes   compile as if VMEM held this many bytes (from
//                       kMinVmemBytes to the default, a multiple of 512):
//                       code that streams arrays larger than VMEM then runs
//                       on arrays a simulator runs in seconds. The kernels
//                       use no more VMEM than that, so they run on the
//                       full-sized simulated chip.
//
// Other attributes are ignored, as XLA passes its own through.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "compiler/codegen/compile.h"
#include "compiler/ir/hlo_module.h"

namespace trench::hloc {

inline constexpr char kVmemBytesAttribute[] = "trench_vmem_bytes";
inline constexpr int64_t kMinVmemBytes = 64 << 10;

// Applies the module's options to *options. InvalidArgument naming the
// attribute for a malformed frontend_attributes value or an option out of
// range.
Status ApplyModuleOptions(const HloModule& module,
                          codegen::CompileOptions* options);

}  // namespace trench::hloc
