// Streamed fused kernels: loop fusions (kLoop) and reduce fusions (kInput)
// whose operands and results, staged whole (emit_fusion.cc), do not fit in
// the VMEM left. EmitFusion tries the staged kernel first and calls these
// only when it does not fit.
//
// Which operands stream. The fused expression is evaluated at positions
// (emit_fusion_internal.h). A fusion parameter that is read only at the
// body's own position -- through elementwise ops, copy, reshape and
// bitcast, never through a broadcast, transpose or slice -- and has as many
// elements as the body's iteration space is read in order, so it streams;
// every other parameter (broadcast operands, transposed or sliced ones,
// scalar inits) is still staged whole. When those alone do not fit, the
// kernel fails with ResourceExhausted naming the operand.
//
// Loop fusions: one double-buffered StreamLoop (streaming.h) over the
// roots' elements; streamed parameters are its inputs and the roots its
// outputs (chunks of 1024-element multiples, the ragged last tile masked).
// A tapped fused instruction gets a streamed loop of its own writing its
// tap buffer (a tapped parameter, or tapped root of a multi-output fusion,
// is copied HBM to HBM).
//
// Reduce fusions: the reduce input's iteration space is split into slabs
// along its outermost dims (stream_slab.h): the streamed parameters flow
// through double-buffered slab sets; each slab is folded lane-parallel
// (one result per lane, its reduced elements within the slab in row-major
// order, so each result sees its elements in the staged kernel's order),
// into per-slab results (every reduced dim inner to the split dim) or into
// accumulators of the whole results resident in VMEM in their lane form
// (bf16/f16 accumulate in f32 and round once at the end, as the staged
// kernel does). Roots shaped like the reduce input (multi-output fusions)
// are computed in the same fold and leave slab by slab.
//
// Errors: ResourceExhausted when the staged-whole parameters, or one
// chunk / one slab row with its accumulators, do not fit in VMEM (the
// message says which); CannotCompile for fused dots (kOutput: their
// operands are staged whole for the matrix unit) and the evaluator's
// errors. Registers: as StreamLoop (loops) or SlabLoop plus the fold's
// s0..s8, s10..s16 and the tile loop (reduce fusions), with vector
// registers from one VRegPool.
#pragma once

#include "base/status.h"
#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/passes/fusion_support.h"

namespace trench::codegen {

// Emits fusion `instr` (EmitsFusedKernel(instr), AnalyzeFusedComputation
// gave `spec`) as a streamed kernel (above).
Status EmitStreamedFusion(const HloInstruction& instr, const BufferPlan& plan,
                          const FusionSpec& spec, KernelBuilder& kb);

}  // namespace trench::codegen
