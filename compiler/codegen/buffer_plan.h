// Buffer planning: which HBM buffer holds every value of the entry
// computation.
//
// One buffer per array leaf: entry parameters are inputs (read-only, in
// flattened parameter order), constants are constant buffers, every other
// computed leaf is a temp of its own (never reused, so no liveness bugs);
// tuple and get-tuple-element alias their operands' leaves. The entry
// result leaves are copied to output buffers and tapped leaves to tap
// buffers by the final kernel (`copies`).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "tpu/executable.h"

namespace trench::codegen {

// A dense row-major array in one HBM buffer.
struct ArrayBuffer {
  std::string name;   // tpux buffer name.
  std::string dtype;  // HLO element type name (f32, bf16, pred, ...).
  std::vector<int64_t> dims;
  int64_t elements = 0;
  int64_t bytes = 0;
};

struct BufferPlan {
  std::vector<tpu::BufferDecl> buffers;
  // The array leaves of each entry instruction's value, in flattened order
  // (indices into `buffers`).
  std::unordered_map<const HloInstruction*, std::vector<int>> leaves;
  // (source buffer, destination buffer): output and tap copies.
  std::vector<std::pair<int, int>> copies;
  // Tap buffers of tapped instructions inside fused computations, one per
  // array leaf (indices into `buffers`): the fusion's kernel stores the
  // instruction's value there.
  std::unordered_map<const HloInstruction*, std::vector<int>> fused_taps;

  // The single array leaf of `instr`. REQUIRES: an array-shaped value.
  ArrayBuffer Array(const HloInstruction* instr) const;
};

// Plans buffers for `entry` in `post_order` (operands first). `tapped`
// names the instructions whose leaves are tapped: entry instructions (copied
// to tap buffers at the end) or instructions of fused computations (tap
// buffers in `fused_taps`). Unimplemented for complex
// element types and for token values.
StatusOr<BufferPlan> PlanBuffers(
    const HloComputation& entry, const std::vector<HloInstruction*>& post_order,
    const std::vector<const HloInstruction*>& tapped);

// True for the element types the code generator handles.
bool SupportedDtype(PrimitiveType t);

}  // namespace trench::codegen
