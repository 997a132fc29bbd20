// gather whose operand, indices and result staged whole (emit_gather.cc)
// do not fit in the VMEM left: the operand stays in HBM and every slice
// moves HBM to HBM on its own.
//
// For each batch position G (row-major over the index array's dims other
// than index_vector_dim, which are also the result's batch dims in order)
// the scalar unit reads the index vector's components straight from HBM
// (sld), clamps them as XLA does (start = clamp(S[G, k], 0, dim -
// slice_size); u64 values above INT64_MAX clamp high), adds the operand
// batching coordinates, and one box DMA (dm::EmitBoxDma) copies the slice
// -- the operand's box of slice_sizes at that start, its collapsed and
// batching dims of size 1 -- to the result's box at G (the offset dims).
// No VMEM is used; slices of whole rows make long DMA chunks, one-element
// slices one DMA per element (slow, but only when staging cannot fit).
// Slices that are one dmastart each (at most three strided dims) are not
// waited for one by one: up to 32 are in flight (result boxes of distinct
// positions are disjoint), so their transfers overlap.
//
// Registers: s0..s9 and s20..s27 (position loop and addresses), s10..s19
// (EmitBoxDma), s28..s31 scratch; semaphore 0.
#pragma once

#include "base/status.h"
#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen {

// True when gather's operand `op`, indices `idx` and result `out` staged
// whole (512-aligned) fit in the VMEM `kb` has left.
bool GatherFitsStaged(const KernelBuilder& kb, const ArrayBuffer& op,
                      const ArrayBuffer& idx, const ArrayBuffer& out);

// Emits gather `instr` slice by slice as above. REQUIRES: EmitGatherOp's
// checks passed (dimension numbers consistent and in range, integer
// indices, rank <= 8, out has elements).
Status EmitGatherByRows(const HloInstruction& instr, const ArrayBuffer& op,
                        const ArrayBuffer& idx, const ArrayBuffer& out,
                        KernelBuilder& kb);

}  // namespace trench::codegen
