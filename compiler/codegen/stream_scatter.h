// scatter whose operands, updates, indices and scratch staged whole
// (emit_scatter.cc) do not fit in the VMEM left: the results stay in HBM
// and are updated one update window at a time.
//
// The results start as HBM-to-HBM copies of the operands (none when a
// result shares its operand's buffer). Then, for each scatter position P
// in row-major order (the oracle's order), the scalar unit reads P's
// index vector straight from HBM (sld), skips the window when a start is
// out of bounds (start < 0 or start > dim - window size; u64 values above
// INT64_MAX count as negative), and otherwise DMAs the window of every
// result and of every update into VMEM (dense, the window dims in operand
// order, which is the update window dims' order), applies the combiner
// lane-wise over the window's elements (distinct targets, so their order
// does not matter) and DMAs the window back. Positions run one after the
// other, so overlapping windows see their updates in order, as the oracle
// applies them. No double buffering: a window read may depend on the
// previous window's write.
//
// Registers: s0..s9 (position loop, addresses), s10..s19 (box DMAs), the
// tile loop's s20..s27, s28..s31 scratch; v0..v27 from one VRegPool;
// semaphore 0.
#pragma once

#include <vector>

#include "base/status.h"
#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen {

// The operands of a scatter with N inputs: N operands, the indices, N
// updates and the N results.
struct ScatterBuffers {
  std::vector<ArrayBuffer> ops, upds, outs;
  ArrayBuffer idx;
};

// True when the staged kernel's VMEM (results, updates, indices, and the
// s32 scratch of one element per operand element) fits in what `kb` has
// left.
bool ScatterFitsStaged(const KernelBuilder& kb, const ScatterBuffers& b);

// Emits scatter `instr` window by window as above. REQUIRES:
// EmitScatterOp's checks passed (dimension numbers consistent and in
// range, integer indices, a scalar combiner, rank <= 8, updates and results
// with elements). Errors: ResourceExhausted when one window of every
// result and update does not fit in VMEM; the combiner's errors.
Status EmitScatterByWindows(const HloInstruction& instr,
                            const ScatterBuffers& b, KernelBuilder& kb);

}  // namespace trench::codegen
