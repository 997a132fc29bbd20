// Internals of the dot emitter (emit_dot*.cc), shared by its files.
//
// Every dot is brought to a canonical batched form in VMEM:
//   A[Bt][Mp][Kp] x B[Bt][Kp][Np] -> C[Bt][Mp][Np]
// Bt = product of the batch dims, M/N = products of the lhs/rhs free dims,
// K = product of the contracting dims (in dimension-number order; 1 when
// nothing is contracted). Operands are converted to the computation's lane
// type while staged (the oracle converts operands to the result type
// first, oracle/dot.cc). Padding (Mp, Kp, Np) is zero.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen/emitters.h"

namespace trench::codegen::dot_internal {

// The computation's types (see emit_dot.cc): matrix unit or vector unit,
// the lane and memory types of the staged operands, their element bytes,
// the accumulator's element bytes and the number of bf16 passes.
struct DotTypes {
  bool mxu = false;
  std::string lane, mem;
  int64_t esz = 4, ce = 4;
  int passes = 1;
};

// Chooses DotTypes for `instr` with operand types `a`, `b` and result type
// `out` (element type names with a LaneType).
DotTypes ChooseTypes(const HloInstruction& instr, const std::string& a,
                     const std::string& b, const std::string& out);

// Emits a dot too large for VMEM as a loop over tiles: every batch index,
// every [m0, m0+tm) x [n0, n0+tn) block of the result, and for each block
// every [k0, k0+tk) slice of the contracting dim (emit_dot_tiled.cc). Each
// operand tile is a box of the operand DMA'd with strides, staged like the
// untiled path; partial products accumulate in the block's accumulator (f32
// on the matrix unit with the precision passes of `t`, the lane type on the
// vector unit) across K tiles, which is rounded and DMA'd back once.
// REQUIRES: each operand has at most one free and one contracting dim
// (TiledDotSupported). Errors: ResourceExhausted when not even an 8 x 128
// x 128 tile fits in the VMEM left; CannotCompile for a tile box needing
// more than 3 DMA strides.
bool TiledDotSupported(const HloInstruction& instr, int64_t lhs_rank,
                       int64_t rhs_rank);
Status EmitTiledDot(const HloInstruction& instr, const ArrayBuffer& a,
                    const ArrayBuffer& b, const ArrayBuffer& out,
                    const DotTypes& t, KernelBuilder& kb);

struct DotShape {
  int64_t batch = 1, m = 1, k = 1, n = 1;
  int64_t mp = 1, kp = 1, np = 1;  // Padded extents.
};

// Emits a tile loop writing the row-major `out_dims` array at `out_vmem`
// (memory type `out_mem`) from `src` (GatherSource semantics, emitters.h;
// elements outside src.ranges are zero). Each gathered value (lane type
// `src_lane`, i.e. LaneType(src.mem)) is converted to lane type `lane`
// (vcvt: ints wrap or extend, int -> float rounds) before the store, which
// itself rounds f32 lanes to bf16/f16 memory types.
// REQUIRES: rank(out_dims) <= 8, element count > 0.
void EmitConvertingGather(KernelBuilder& kb,
                          const std::vector<int64_t>& out_dims,
                          const GatherSource& src, int64_t out_vmem,
                          const std::string& out_mem,
                          const std::string& src_lane, const std::string& lane);

// Emits C = A x B on the matrix unit: A [batch][mp][kp] and B
// [batch][kp][np] of memory type `mem` (f32, bf16 or f16; lanes f32) at
// `a_vmem` / `b_vmem`, C [batch][mp][np] f32 at `c_vmem` (initialized by
// the caller to zero). `passes`: 1 (one bf16 pass), 3 (bf16x3) or 6
// (bf16x6). REQUIRES: mp % 8 == 0, kp % 128 == 0, np % 128 == 0, k > 0.
void EmitMatrixUnitDot(KernelBuilder& kb, const DotShape& s,
                       const std::string& mem, int64_t a_vmem, int64_t b_vmem,
                       int64_t c_vmem, int passes);

// Emits C = A x B on the vector unit, exactly in lane type `lane` (s32,
// u32, s64, u64 wrap; f64 sums products in k order, no FMA): A
// [batch][mp][k], B [batch][k][np], C [batch][mp][np], all of memory type
// `lane`. Writes every element of C; with `accumulate` the sums start from
// C's values (K tiling: products still added in k order, so f64 stays
// exact), else from zero. REQUIRES: mp % 8 == 0, np % 128 == 0.
void EmitVectorUnitDot(KernelBuilder& kb, const DotShape& s,
                       const std::string& lane, int64_t a_vmem, int64_t b_vmem,
                       int64_t c_vmem, bool accumulate = false);

}  // namespace trench::codegen::dot_internal
