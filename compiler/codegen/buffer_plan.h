// Buffer planning: which HBM buffer holds every value the kernels compute.
//
// Entry computation: buffers come from buffer assignment
// (compiler/passes/buffer_assignment.h, which documents liveness, reuse,
// in-place and the safety rules): entry parameters are inputs (read-only,
// in flattened parameter order), constants are constant buffers, every
// other computed leaf is a temp that may share a buffer with values dead
// before it is defined, or be written in place over a dying operand (only
// elementwise ops emitted by EmitElementwise, and dynamic-update-slice over
// operand 0). Tuple and get-tuple-element alias their operands' leaves,
// add-dependency its operand 0's. Token leaves (after-all, token
// parameters and tuple elements) are zero-byte buffers of dtype "token":
// no kernel reads or writes them, and a token output or tap is a zero-byte
// buffer too, so output k is still leaf k of the entry result.
// The entry result leaves are copied to output buffers and tapped leaves to
// tap buffers by the final kernel (`copies`); both stay live to the end.
//
// Nested computations of control flow (while condition and body,
// conditional branches, call targets, and the fused computations of
// fusions the fused-kernel emitter does not accept, transitively; see
// EmitsInline) are emitted inline in their caller's kernel
// (emit_control*.cc, emit_inline.h). Their instructions get buffers
// of their own, never shared with any other value. Parameters: when a
// computation has exactly one inline call site its parameter leaves
// alias what the caller passes (a while's state buffers = the while's own
// leaves; a conditional branch's, call's or fusion's operand leaves),
// otherwise they
// are buffers of their own that the caller fills by copies before each
// invocation. A while's body result is copied into the state buffers at
// the end of each iteration; state leaves that move to another position
// are staged through `while_staging` buffers first.
//
// Since a buffer may hold values of different shapes over time, emitters
// take dims, dtype and sizes from Array()/LeafArray() (the value's shape),
// never from the BufferDecl (which describes the buffer's first value).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/passes/buffer_assignment.h"
#include "tpu/executable.h"

namespace trench::codegen {

// A dense row-major array in one HBM buffer.
struct ArrayBuffer {
  std::string name;   // tpux buffer name.
  std::string dtype;  // HLO element type name (f32, bf16, pred, ...).
  std::vector<int64_t> dims;
  int64_t elements = 0;
  int64_t bytes = 0;  // The value's size (the buffer may be larger).
};

struct BufferPlan {
  std::vector<tpu::BufferDecl> buffers;
  // The leaves (arrays and tokens) of each instruction's value (entry and
  // nested control flow computations), in flattened order (indices into
  // `buffers`).
  std::unordered_map<const HloInstruction*, std::vector<int>> leaves;
  // (source buffer, destination buffer): output and tap copies.
  std::vector<std::pair<int, int>> copies;
  // Tap buffers of tapped instructions inside fused computations, one per
  // leaf (indices into `buffers`): the fusion's kernel stores the
  // instruction's value there (a fusion emitted inline copies it there
  // after its computation).
  std::unordered_map<const HloInstruction*, std::vector<int>> fused_taps;
  // Per while instruction, per state leaf: a staging buffer (index into
  // `buffers`) or -1; see the header comment.
  std::unordered_map<const HloInstruction*, std::vector<int>> while_staging;
  // Sharing in the entry computation (nested buffers are not counted).
  BufferAssignmentStats stats;
  // The SPMD mesh (CompileOptions::mesh), and the buffer peers write into
  // during a collective (a temp of its own, never shared with a value;
  // "" when the module has no collective). Every collective kernel uses it
  // from offset 0: a chip writes into a peer's only after the peer said it
  // entered the same collective (emit_collectives_util.h).
  DeviceMesh mesh;
  std::string collective_scratch;

  // The single array leaf of `instr`. REQUIRES: an array-shaped value.
  ArrayBuffer Array(const HloInstruction* instr) const;
  // Leaf `k` (flattened order) of `instr`'s value.
  ArrayBuffer LeafArray(const HloInstruction* instr, int64_t k) const;
};

struct BufferPlanOptions {
  // Buffer assignment may share buffers (false: --disable-passes=
  // buffer-assignment, every value its own buffer).
  bool reuse = true;
  // Its decisions ask this context (bisection), and the stats line
  // ("buffer-assignment: ... bytes saved") goes to its log; nullptr allows
  // every decision.
  PassContext* ctx = nullptr;
};

// Plans buffers for `entry` in `post_order` (operands first; the order the
// kernels run in) and for the computations its control flow calls.
// `tapped` names the instructions whose leaves are tapped: entry
// instructions (copied to tap buffers at the end) or instructions of fused
// computations (tap buffers in `fused_taps`). `options` controls buffer
// sharing in the entry (in place with the code generator's rule above).
// Errors: Unimplemented for dynamic shapes;
// InvalidArgument for a malformed
// schedule or control-flow instruction (operand/parameter counts).
StatusOr<BufferPlan> PlanBuffers(
    const HloComputation& entry, const std::vector<HloInstruction*>& post_order,
    const std::vector<const HloInstruction*>& tapped,
    const BufferPlanOptions& options = {});

// True for the element types the code generator handles (every array
// type, complex included).
bool SupportedDtype(PrimitiveType t);

// True for the opcodes of control flow whose computations are planned and
// emitted inline: while, conditional, call.
bool IsControlFlow(HloOpcode op);

// True when the fused-kernel emitter (emit_fusion.cc) compiles fusion
// `fusion` as one kernel: one fused computation taking one array per
// operand that AnalyzeFusedComputation (compiler/passes/fusion_support.h)
// accepts, with a fused dot the matrix unit takes. False for other
// instructions.
bool EmitsFusedKernel(const HloInstruction& fusion);

// True when `instr`'s called computations are planned and emitted inline
// in its kernel: control flow, and fusions EmitsFusedKernel refuses (which
// then run like a call of their fused computation).
bool EmitsInline(const HloInstruction& instr);

}  // namespace trench::codegen
