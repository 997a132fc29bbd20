// Emitting a called computation inline (emit_control.cc), the way call,
// while and conditional run theirs: the computation's instructions, planned
// by the buffer plan (buffer_plan.h: buffers of their own, parameters
// aliasing the caller's operands when the computation has one call site),
// are emitted one after another into the caller's kernel by their ordinary
// emitters. Also used for fusions the fused-kernel emitter does not accept
// (EmitsFusedKernel false): such a fusion runs like a call.
#pragma once

#include "base/status.h"
#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen {

// Emits `c` applied to `instr`'s operands into `kb`: binds c's parameters
// to the operands' leaves (copies where they are distinct buffers), emits
// every instruction of `c` in post order, copies c's root leaves to
// `instr`'s leaves, then copies the leaves of tapped instructions of `c`
// (plan.fused_taps) to their tap buffers. Errors: CannotCompile when `c`
// or `instr` has no planned buffers or the operand count does not match;
// the errors of the emitters of c's instructions.
Status EmitCalledInline(const HloInstruction& instr, const HloComputation& c,
                        const BufferPlan& plan, KernelBuilder& kb);

}  // namespace trench::codegen
