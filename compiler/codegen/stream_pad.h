// Streamed pad: a pad whose result, staged whole with its operand, does
// not fit in the VMEM left (emit_pad.cc stages them). The result is filled
// with the padding value chunk by chunk (a double-buffered StreamLoop with
// no inputs, streaming.h), then the operand's placed elements -- the box
// at lo + i * (interior + 1) along each dim, negative edges cropping it --
// are copied HBM to HBM by strided DMAs (dm::EmitBoxDma), which need no
// VMEM; narrow rows (interior padding in the minor dim) make short DMA
// chunks, slower but correct. The fill's output DMAs are all waited for
// before the placement starts, so placed elements end with the operand's
// values.
#pragma once

#include "base/status.h"
#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen {

// True when pad's result, its operand and the padding value staged whole
// (512-aligned) fit in the VMEM `kb` has left.
bool PadFitsStaged(const KernelBuilder& kb, const ArrayBuffer& in,
                   const ArrayBuffer& out);

// Emits pad `instr` (operand `in`, padding value `value`, result `out`)
// streamed as above. REQUIRES: out has elements, rank <= 8, in and out of
// one type, one padding config per dim. Errors: ResourceExhausted when
// not even one 1024-element chunk of the result fits.
Status EmitStreamedPad(const HloInstruction& instr, const ArrayBuffer& in,
                       const ArrayBuffer& value, const ArrayBuffer& out,
                       KernelBuilder& kb);

}  // namespace trench::codegen
