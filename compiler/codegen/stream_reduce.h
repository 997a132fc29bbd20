// Streamed reduce: the unfused reduce for operands larger than the VMEM
// left. The operands stay in HBM and flow through VMEM in slabs, double
// buffered (the DMA of slab s+1 overlaps the compute of slab s).
//
// Slabs. The input is split along one dimension p (the outermost one for
// which a slab fits): a slab is a block of up to `b` consecutive indices of
// dim p at fixed indices of dims 0..p-1, all of dims p+1.. -- one
// contiguous range of the row-major input, one DMA per input. Slabs run in
// row-major order; the last block of dim p is ragged when b does not divide
// it (its DMA and compute are emitted for its own size).
//
// Accumulation. Each slab is reduced lane-parallel (one output element per
// lane, its reduced elements in the slab folded in row-major order, as
// EmitReduce's lane-parallel path):
//  * per-slab outputs (every reduced dim is inner to p): each output's
//    reduced elements all lie in one slab, so the slab's results (a
//    contiguous range of the output) are final: they start from the inits,
//    are stored in the result type and DMAed out after the slab;
//  * resident accumulators (some reduced dim is p or outer to it): every
//    result is kept whole in VMEM in its lane form (f32 for bf16/f16, s32
//    for s8/s16/pred, u32 for u8/u16, else the type itself), initialized
//    from the inits, folded into slab after slab, and converted to the
//    result type once at the end. bf16/f16 sums thus accumulate in f32 and
//    round once, as the unstreamed kernel and XLA do; reducers given as
//    computations round after every op as there.
// Kept-dim tiling: when even resident accumulators of the whole result
// do not fit, the input is viewed as [A, Q, I] -- A the reduced dims
// before the first kept dim q, Q = dims[q], I the dims after it -- and
// processed in blocks of w indices of dim q (the largest w that fits; the
// last block ragged): each block is the reduce of the box [A, w, I]
// (reduced: A and the reduced dims after q), streamed in slabs as above
// (a slab of several A indices is one strided DMA of rows w*I elements
// long, Q*I apart) into resident accumulators of the block's results,
// which are one contiguous range of the result (q is the outermost kept
// dim) written back after the block. The block index lives in VMEM (every
// scalar register is taken by the pass).
// Vector fold: when every dim from p on is reduced and the reducer is a
// plain add/max/min of one input, a slab is one contiguous run of one
// result's elements: it is folded with whole 8x128 loads (ragged tail
// filled with the identity), reduced across lanes and sublanes by the
// cross-lane unit, and combined into that result's accumulator (total and
// long-row reductions would otherwise use one lane per result).
// The lane-parallel fold visits each result's reduced elements in
// row-major order (slab after slab), the oracle's order: computed reducers
// give the oracle's values exactly. The vector fold reassociates, as the
// numerics contract allows for sums (max/min/integer results are exact).
//
// Registers: on top of EmitReduce's lane-parallel path (s0, s1..s8,
// s10..s17, the tile loop's s20..s27, scratch s28..s31) the slab loop
// keeps s18 (slab index), s19 (byte offset of the current buffer set) and
// s9 (the first output element of the current slab). Semaphores 2/3 carry
// the slab DMAs (by set), 6 the per-slab output DMAs.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen {

// True when the whole inputs, inits and results of `ops` (512-aligned)
// fit in the VMEM `kb` has left, i.e. EmitReduce may stage them.
bool ReductionFitsStaged(const KernelBuilder& kb, const ReductionOperands& ops);

// Emits `instr` (a reduce whose operands are `ops`, reducer `reducer`) as a
// streamed kernel (above). REQUIRES: every input and result has elements,
// rank <= 8. Errors: ResourceExhausted when not even one row of the split
// dimension (with resident accumulators, if needed, of at least one index
// of the outermost kept dim) fits in VMEM;
// CannotCompile / the reducer's errors as EmitReduce.
Status EmitStreamedReduce(const HloInstruction& instr,
                          const ReductionOperands& ops, const Reducer& reducer,
                          KernelBuilder& kb);

}  // namespace trench::codegen
