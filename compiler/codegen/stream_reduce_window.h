// reduce-window whose inputs, inits and results staged whole
// (emit_reduce_window.cc) do not fit in the VMEM left: the results are
// computed in blocks of up to `b` consecutive indices of output dim 0 (a
// contiguous range of every result), each from the input rows it reads.
//
// For output rows [o0, o0 + b) the window reads input rows (dim 0) from
// floor(max(0, o0 * stride - pad_lo) / base_dilation) on, at most
// R = ((b - 1) * stride + (size - 1) * window_dilation) / base_dilation + 2
// of them: a block's slab is R rows starting there (moved down so it ends
// inside the input; all rows when R exceeds them), one contiguous DMA per
// input. The staged kernel's tile loop then runs over the block with
// global output coordinates (the lane index plus the block's first output
// element) and global input offsets minus the slab's first element, so
// padding, dilation holes and bounds are decided exactly as there. The
// last block is ragged (its tile loop emitted for its own size, under a
// branch). Blocks run one after the other (DMA in, compute, DMA out):
// the window loop does size-many gathers per output element, far more
// than a block's transfer.
//
// Registers: s0 (block index), s18 (slab's first input element), s19
// (block's first output element), s9 scratch, the staged kernel's s1..s8,
// s10..s17 (window loops), s20..s31; semaphore 0.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen {

// The staged kernel's tile loop (emit_reduce_window.cc) over `elements`
// results, stored to vmem.outs in their types (not DMAed out). With
// `out_first` (a scalar register name, or "") the lanes' output
// coordinates are offset by that many elements; with `in_first` the
// input offsets gathered from vmem.ins are reduced by that many elements.
// REQUIRES: CheckWindow ok, rank <= 8. Errors: out of vector registers,
// the reducer's.
Status EmitReduceWindowTiles(KernelBuilder& kb, const HloInstruction& instr,
                             const ReductionOperands& ops,
                             const ReductionVmem& vmem, const Reducer& reducer,
                             int64_t elements, const std::string& out_first,
                             const std::string& in_first);

// Emits reduce-window `instr` block by block as above. REQUIRES:
// CheckWindow ok, results with elements. Errors: ResourceExhausted when
// not even one output row's block fits, or the input has 2^31 elements or
// more (32-bit lane offsets); EmitReduceWindowTiles'.
Status EmitStreamedReduceWindow(const HloInstruction& instr,
                                const ReductionOperands& ops,
                                const Reducer& reducer, KernelBuilder& kb);

}  // namespace trench::codegen
