// select-and-scatter whose operand, source, selection and result staged
// whole (emit_select_and_scatter.cc) do not fit in the VMEM left: the
// result is computed in blocks of up to `b` consecutive indices of dim 0
// (a contiguous range of the result), each from the source rows whose
// windows reach it and the operand rows those windows read.
//
// Rows (dim 0; window size K, stride st, pad_lo P, window dilation Wd,
// base dilation Bd; D operand rows, S source rows). Source row s reads the
// dilated operand positions s*st - P + k*Wd, k < K. For result rows
// [r0, r0 + b) the source rows that may choose in them are
//   s_lo = ceil(max(0, r0*Bd + P - (K-1)*Wd) / st)  on, at most
//   Rs = min(S, ((b-1)*Bd + (K-1)*Wd) / st + 1)
// of them (the s with s*st in a closed range of that length), and those
// read operand rows from o_lo = max(0, s_lo*st - P) / Bd on, at most
// Ro = min(D, ((Rs-1)*st + (K-1)*Wd) / Bd + 1), one more when Bd > 1 (o_lo
// is a floor). Each slab is moved down so that it ends inside its array
// (all rows when it is larger), one contiguous DMA each.
//
// Per block: both phases of the staged kernel, with global coordinates
// (the lane index plus the block's first element) and VMEM offsets minus
// the slab's first element: phase 1 chooses for the Rs source rows (the
// chosen operand offsets are global, so phase 2 compares them with global
// result offsets exactly as the staged kernel does); phase 2 folds, per
// result element of the block, the source elements that chose it in
// row-major source order. Source rows shared by neighbouring blocks are
// chosen again in each (the same choice: it depends on the operand only).
// The last block is ragged (phase 2 emitted for its own size, under a
// branch). Blocks run one after the other: both phases gather once per
// window position and element, far more work than a block's transfer.
//
// Registers: s19 (block's first result element), s18 (operand slab's
// first element), s0 (source slab's first element), s9 scratch, the
// staged kernel's s1..s8, s10..s17, s20..s31; semaphore 0.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen {

// The arrays of a select-and-scatter and their VMEM (whole arrays, or
// the block's slabs).
struct SelectAndScatterArrays {
  ArrayBuffer operand, source, init, out;
};
struct SelectAndScatterVmem {
  int64_t operand = 0, source = 0, init = 0, selected = 0, out = 0;
};

// Phase 1 over `sources` source elements, then phase 2 over `results`
// result elements. With `src_first` (a scalar register name, or "") the
// source lanes start at that global source element and source offsets
// into vmem.source / vmem.selected are reduced by it; with `op_first`
// operand offsets into vmem.operand are reduced by that many elements;
// with `out_first` the result lanes start at that global element. Results
// are stored to vmem.out in the result type (not DMAed out). REQUIRES:
// CheckWindow and CheckScalarComputation of both computations ok.
// Errors: out of vector registers, the computations'.
Status EmitSelectAndScatterTiles(KernelBuilder& kb, const HloInstruction& instr,
                                 const SelectAndScatterArrays& arrays,
                                 const SelectAndScatterVmem& vmem,
                                 int64_t sources, int64_t results,
                                 const std::string& src_first,
                                 const std::string& op_first,
                                 const std::string& out_first);

// The VMEM bytes of the staged kernel (every array whole, plus the
// selection).
int64_t StagedSelectAndScatterBytes(const SelectAndScatterArrays& arrays);

// Emits select-and-scatter `instr` block by block as above. REQUIRES: as
// EmitSelectAndScatterTiles, a result with elements. Errors:
// ResourceExhausted when not even one result row's block fits, or the
// operand has 2^31 elements or more (32-bit lane offsets);
// EmitSelectAndScatterTiles'.
Status EmitStreamedSelectAndScatter(const HloInstruction& instr,
                                    const SelectAndScatterArrays& arrays,
                                    KernelBuilder& kb);

}  // namespace trench::codegen
