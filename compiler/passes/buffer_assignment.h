// Buffer assignment: which HBM buffer holds every array value of the
// scheduled entry computation, with reuse of dead buffers and in-place
// updates. An analysis (the module is not changed); the code generator's
// PlanBuffers (compiler/codegen/buffer_plan.h) turns its answer into buffer
// declarations.
//
// Values. Every leaf of an entry instruction's value (flattened tuple
// order) is one logical value, except that tuple, get-tuple-element and
// add-dependency define nothing: their leaves ARE their operands' leaves
// (add-dependency: operand 0's). Entry parameter leaves are inputs,
// constant leaves are constants; every other leaf (including those of
// while, conditional, call and fusion, which are single instructions here)
// is a temp. Token leaves (after-all, token parameters) are zero-byte
// values, so they never share a buffer.
//
// Liveness. Positions are indices into the schedule (`order`, the order the
// kernels run in). A temp is defined at its instruction's position and live
// until the last position of an instruction that has it among its
// operands' leaves (a tuple or get-tuple-element using it counts, and so do
// their users). Values never used die at their definition. The root's
// leaves and the leaves of tapped entry instructions are live out: live to
// the end (the copy-out kernel reads them after every instruction).
//
// Safety rules:
//  - Input and constant buffers are never given to any other value and are
//    never written in place (inputs are read-only on the machine).
//  - A buffer holding a live-out value (output or tap leaf) is never given
//    to another value: live-out values stay live to the end.
//  - Reuse: a temp may take a buffer whose every value died at an EARLIER
//    position (an instruction never writes a buffer it reads, except in
//    place below). Policy: best fit among dead temp buffers of equal or
//    larger size (smallest size first, then lowest buffer id); a buffer's
//    size is that of its first value and never changes. Zero-byte values
//    are never shared. The leaves of one instruction get distinct buffers.
//  - In place: a single-leaf temp may take the buffer of an operand's
//    single leaf that dies AT this instruction, only when
//    `options.may_write_over(instr, operand_index)` says the instruction's
//    emitter is alias-safe for that operand (the default,
//    DefaultMayWriteOverOperand: elementwise ops whose operand has the
//    output's shape and dtype, since their kernels DMA every operand into
//    VMEM before writing the result; dynamic-update-slice over operand 0
//    when no other operand shares that buffer).
//  - Nested computations (while bodies and conditions, branches, called
//    computations, fused computations) are not seen here: their
//    instructions get their own buffers from the caller of this analysis.
//
// Bisection: every reuse and every in-place decision asks
// options.ctx->ShouldRewrite("buffer-assignment", "reuse" | "in-place",
// name) before it happens, name being the instruction's name ("name#k" for
// leaf k of a tuple-shaped value), so --rewrite-limit can stop at any
// single buffer decision; when the context says no, the value gets a fresh
// buffer (an in-place refusal then asks for a reuse). With
// options.enabled false (--disable-passes=buffer-assignment) nothing is
// shared and no decision is asked.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/shape.h"
#include "compiler/passes/pass.h"

namespace trench {

inline constexpr std::string_view kBufferAssignmentPass = "buffer-assignment";

// The default in-place rule (see the header comment).
bool DefaultMayWriteOverOperand(const HloInstruction& instr,
                                int64_t operand_index);

struct BufferAssignmentOptions {
  // False: every value its own buffer, no decisions asked.
  bool enabled = true;
  // Bisection hooks; nullptr allows every decision.
  PassContext* ctx = nullptr;
  // Whether `instr` may write its result over operand `operand_index`'s
  // buffer; empty means DefaultMayWriteOverOperand.
  std::function<bool(const HloInstruction&, int64_t)> may_write_over;
};

struct BufferAssignmentStats {
  int64_t temp_values = 0;      // Temp leaves (the ones that may share).
  int64_t temp_buffers = 0;     // Buffers holding them.
  int64_t reused = 0;           // Values placed in a dead buffer.
  int64_t in_place = 0;         // Values written over a dying operand.
  int64_t bytes_unshared = 0;   // Sum of temp value sizes (no sharing).
  int64_t bytes_allocated = 0;  // Sum of temp buffer sizes.
  int64_t bytes_saved() const { return bytes_unshared - bytes_allocated; }
  // "N temp values in M buffers (R reused, I in place), X of Y bytes saved".
  std::string ToString() const;
};

enum class ValueKind { kInput, kConstant, kTemp };

// One leaf (an array or a token) of an entry instruction's value.
struct LogicalValue {
  const HloInstruction* instr = nullptr;  // The defining instruction.
  int64_t leaf = 0;                       // Leaf index in its flattened shape.
  Shape shape;                            // The leaf's array shape.
  int64_t bytes = 0;
  ValueKind kind = ValueKind::kTemp;
  int64_t input_index = -1;  // kInput: flattened entry parameter leaf.
  int64_t def = 0;           // Schedule position (-1 for inputs).
  int64_t last_use = 0;      // Schedule position; order.size() when live out.
  int buffer = -1;           // Index into BufferAssignment::buffers.
};

struct AssignedBuffer {
  ValueKind kind = ValueKind::kTemp;
  int64_t bytes = 0;        // Its first value's size.
  std::vector<int> values;  // Values it holds, in definition order.
};

struct BufferAssignment {
  std::vector<LogicalValue> values;
  std::vector<AssignedBuffer> buffers;
  // The value ids of each entry instruction's leaves, flattened order
  // (tuple, get-tuple-element and add-dependency share their operands'
  // ids).
  std::unordered_map<const HloInstruction*, std::vector<int>> leaves;
  BufferAssignmentStats stats;
  // The schedule length: last_use of live-out values.
  int64_t end = 0;
};

// Assigns buffers to the values of `entry` scheduled as `order` (operands
// before users; every instruction of `entry` exactly once). `live_out`:
// instructions whose leaves must survive to the end besides the root
// (taps; instructions of other computations are ignored).
// Errors: InvalidArgument when `order` is not a schedule of `entry` (an
// operand after its user, or an instruction missing or foreign).
StatusOr<BufferAssignment> AssignBuffers(
    const HloComputation& entry, const std::vector<HloInstruction*>& order,
    const std::vector<const HloInstruction*>& live_out,
    const BufferAssignmentOptions& options);

// The analysis as a registered pass (pass_registry.def, stage kCodegen: the
// pipeline does not run it, the code generator does through PlanBuffers;
// its name is what --disable-passes accepts). Run() assigns buffers for the
// entry in post order, logs the stats to the context and never changes the
// module.
class BufferAssignmentPass : public HloPass {
 public:
  std::string_view name() const override { return kBufferAssignmentPass; }
  StatusOr<bool> Run(HloModule* module, PassContext* ctx) override;
};

}  // namespace trench
