// Streamed data movement: broadcast, transpose, slice and reverse whose
// operand and result, staged whole, do not fit in the VMEM left.
//
// The result is produced in blocks: a block is up to `b` consecutive
// indices of one output dim q at fixed indices of dims 0..q-1 and all of
// dims q+1.. (a contiguous range of the row-major result). For each block
// the input elements it reads -- a strided box of the operand, the
// "window" -- are DMAed from HBM into VMEM in the operand's own dim order
// (long contiguous runs along its minor dim; reversed dims are fetched
// forwards), the block is gathered from the window by index arithmetic
// (as EmitGather does from a whole staged operand) and DMAed out. Windows
// and blocks are double buffered: the window DMA of block s+1 and the
// output DMA of block s-1 overlap the gather of block s. q is the
// outermost dim for which a window and a block fit twice and the window is
// one dmastart (a contiguous run and at most three strided dims).
//
// Registers: s1..s11 (block loop and addresses), the tile loop's s20..s29,
// v0..v1, v2+d (coordinates), v12..v14; semaphores 2/3 (windows, by
// buffer set) and 4/5 (blocks).
#pragma once

#include <cstdint>

#include "base/status.h"
#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/emitters.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen {

// Emits the copy out[c] = in[src.offset + sum_d src.coeff[d] * c_d] (out's
// coordinates c; src.mem the bit-moving type of both, src.vmem and
// src.ranges unused) streamed as above. Errors: ResourceExhausted when no
// split dim gives a window and block that fit (or a window one dmastart
// can move); CannotCompile for c128 (moved as halves) and rank > 8. On
// error nothing is emitted.
Status EmitStreamedGather(const HloInstruction& instr, const ArrayBuffer& in,
                          const ArrayBuffer& out, const GatherSource& src,
                          KernelBuilder& kb);

}  // namespace trench::codegen
