// What a fused kernel can compute: the ONE predicate shared by the fusion
// pass (which forms only fusions it accepts) and the fused-kernel emitter
// (compiler/codegen/emit_fusion*.cc, which compiles exactly what it
// accepts), so the two cannot drift apart.
//
// A candidate fusion is a set of `members` (instructions of one
// computation) and the `roots` among them whose values leave the fusion.
// Operands that are not members are the fusion's parameters (staged whole
// in VMEM by the kernel, or streamed when too large: FusionVmemBytes). Every
// member is evaluated per 8x128 output tile in vector registers at a "position"
// (a linear element index):
//   - elementwise ops (the vector_ops.h set, copy as identity) at their
//     users' position;
//   - reshape / bitcast keep the linear index (dense row-major buffers);
//   - broadcast, transpose, slice and iota map positions; their operand
//     subtree must be "pure" (parameters, scalar constants, iota, the dot
//     and these index ops), so no computed value is evaluated twice;
//   - scalar constants (one element) are splats;
//   - reduce (kInput): only as a root; all reduce roots share the input
//     dimensions and reduced dimensions; the reducer is one binary
//     add/multiply/maximum/minimum/and/or of its two parameters; the init
//     value is a parameter or a scalar constant; other roots have the
//     reduce input's dimensions (evaluated in the same reduction loop);
//   - dot (kOutput): at most one, rank 2 x rank 2, one contracting
//     dimension, no batch, float operands and result, both operands
//     parameters; computed first on the matrix unit into VMEM, then read
//     like a parameter by the epilogue.
// Without a reduce, all roots have the same dimensions (kLoop / kOutput).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_attributes.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench {

// The VMEM budget of one fused kernel, half the default VMEM so a fused
// kernel fits wherever its ops did. It bounds what the kernel must hold
// whole (FusionVmemBytes), not the arrays it streams: operands and results
// larger than VMEM stream through it in chunks or slabs
// (compiler/codegen/stream_fusion.h).
inline constexpr int64_t kFusionVmemBudget = 8 << 20;
// The smallest stream chunk in elements (codegen's streaming.h): a
// streamed array needs two chunks of it in VMEM.
inline constexpr int64_t kMinStreamChunk = 1024;
// Vector registers a fused kernel may keep live for values (wide values
// count twice); the rest is scratch for vector_ops and index math.
inline constexpr int64_t kFusionRegisterBudget = 16;
// Registers a fused kernel holds that codegen cannot spill to VMEM: reduce
// accumulators and mapped positions (their index math counted too).
inline constexpr int64_t kFusionPinnedRegisterBudget = 20;

// Which register bound AnalyzeFusion applies. kAllValues: every member's
// value within kFusionRegisterBudget, as if all were live at once; the
// fusion pass forms fusions by it, so that what it fuses never spills.
// kPinnedOnly: only the registers codegen cannot spill, within
// kFusionPinnedRegisterBudget; codegen compiles the fusions it is given
// (e.g. XLA's, in traces) by it, spilling values beyond v0..v27 to VMEM.
enum class RegisterBound { kAllValues, kPinnedOnly };

// How a member is computed inside a fused kernel.
enum class FusedOpClass {
  kUnsupported,
  kElementwise,  // Lane-wise op (vector_ops.h), copy.
  kReshape,      // reshape, bitcast: same linear index.
  kIndexMap,     // broadcast, transpose, slice: position mapping.
  kIota,
  kConstant,  // A one-element constant: a splat.
  kReduce,
  kDot,
};

FusedOpClass ClassifyFusedOp(const HloInstruction& instr);

// True for classes whose values are cheap re-reads of staged data:
// parameters (non-members), iota, constants, reshape, index maps, dot.
bool IsPureClass(FusedOpClass c);

// The accumulate instruction of a supported reducer ("vadd", "vmax", ...)
// for element type `type`, or "" when the reducer is not supported.
std::string FusedReducerMnemonic(const HloComputation& reducer,
                                 PrimitiveType type);

struct FusionSpec {
  FusionKind kind = FusionKind::kLoop;
  // Dimensions of the tile loop: the roots' (kLoop/kOutput) or the reduce
  // output's (kInput).
  std::vector<int64_t> loop_dims;
  // kInput: the reduce input's dimensions and the reduced dimensions.
  std::vector<int64_t> reduce_input_dims;
  std::vector<int64_t> reduce_dims;
  const HloInstruction* dot = nullptr;  // kOutput.
};

// The VMEM a fused kernel of `members`/`roots` needs at least, by the
// rules of the streamed kernel (compiler/codegen/stream_fusion.h): the
// parameters it stages whole -- read through a broadcast, transpose, slice
// or dot, as a reduce init, or not with the iteration space's element
// count -- plus two minimal chunks of every streamed array (the other
// parameters and the roots). A fusion with a dot streams nothing: its
// parameters, roots, padded dot operands and result all count whole.
// REQUIRES: every member classified (ClassifyFusedOp) as supported, roots
// among the members.
int64_t FusionVmemBytes(const std::vector<const HloInstruction*>& members,
                        const std::vector<const HloInstruction*>& roots);

// Checks that `members`/`roots` form a fusion the fused-kernel emitter
// compiles (the rules above, plus the VMEM and register budgets) and says
// what kind it is. `roots` must be members, distinct, array-shaped.
// Returns InvalidArgument naming the first rule a member breaks.
StatusOr<FusionSpec> AnalyzeFusion(
    const std::vector<const HloInstruction*>& members,
    const std::vector<const HloInstruction*>& roots,
    RegisterBound bound = RegisterBound::kAllValues);

// AnalyzeFusion for a fused computation: members are its instructions
// other than parameters (and the root tuple), roots the root or the root
// tuple's operands.
StatusOr<FusionSpec> AnalyzeFusedComputation(
    const HloComputation& fused,
    RegisterBound bound = RegisterBound::kAllValues);

}  // namespace trench
