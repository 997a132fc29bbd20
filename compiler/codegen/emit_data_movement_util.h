// Helpers shared by the data-movement emitters (emit_data_movement*.cc,
// emit_pad.cc, emit_reverse.cc, emit_dynamic_slice.cc, emit_gather.cc,
// emit_scatter.cc): bit-exact move types, strided box copies as DMAs,
// index-mapped scatters and run-time start indices.
//
// Registers: besides KernelBuilder's conventions (s20..s31, v28..v31, m0),
// EmitBoxDma uses s10..s19 (loop state) and EmitClampedStarts writes
// s1..s9 (s10, s11 scratch). Callers keep their own values in s1..s9.
// Nothing is kept across emitted instructions (control flow emits
// instructions inline, emit_control.cc), and SMEM [0, 8 * rank) is only
// scratch within one instruction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen/emitters.h"

namespace trench::codegen::dm {

// Row-major element strides of `dims`.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
int64_t Product(const std::vector<int64_t>& dims);
// True if `v` holds `x`.
bool Contains(const std::vector<int64_t>& v, int64_t x);
// The position of `x` in `v`, v.size() when absent.
int64_t IndexOf(const std::vector<int64_t>& v, int64_t x);
// The dims 0..rank-1 in order, less those in `a` and in `b` (e.g. a
// gather's window dims: neither collapsed nor batching).
std::vector<int64_t> DimsExcept(int64_t rank, const std::vector<int64_t>& a,
                                const std::vector<int64_t>& b = {});
// True if every entry of `dims` is in [0, n) (dimension-number checks, so
// malformed instructions get CannotCompile rather than a crash).
bool DimsInRange(const std::vector<int64_t>& dims, int64_t n);

// Bytes per element of an HLO element type name (pred = 1, c64 = 8,
// c128 = 16).
int ElemBytes(const std::string& dtype);
// The memory type moving `dtype` bit for bit through lanes: u8 for 1-byte
// types (pred, s8, u8), u16 for 2-byte ones (f16, bf16, s16, u16), u32 and
// u64 (also c64), and "c128" for 16-byte elements, which have no memory
// type: they move as two u64 halves (element i = u64 elements 2i, 2i+1),
// see EmitHalfIndex, KernelBuilder::Gather. Pure copies use it so that no
// lane conversion (bf16 -> f32 and back, pred normalization) can alter a
// value. MoveLane is its lane type (u64 for a c128 half).
std::string MoveType(const std::string& dtype);
std::string MoveLane(const std::string& dtype);
// v<idx> = 2 * v<idx> + half: element indices to u64-half indices of a
// c128 array. Clobbers v14.
void EmitHalfIndex(KernelBuilder& kb, int idx, int half);
// Stores u64 half `half` of the current tile of a c128 array at VMEM
// `vmem` from the pair v<vreg> under m0. Clobbers s29, v28, v14.
void EmitStoreHalf(KernelBuilder& kb, int64_t vmem, int vreg, int half);

// A strided box copy: the element at box index (i_0..i_{r-1}) goes from
// src + sum i_d * src[d] to dst + sum i_d * dst[d] (element strides, which
// may be zero or negative).
struct Box {
  std::vector<int64_t> counts, src, dst;
};

// Drops unit dims and merges dims that are contiguous in both source and
// destination, so the innermost dim is the longest run possible.
Box Normalize(const Box& box);
// Elements the DMA engine moves per chunk for a normalized box: the
// innermost count when it is contiguous on both sides, else 1.
int64_t ContiguousRun(const Box& normalized);
// True when the box moves whole rows: chunks of at least kMinDmaRunBytes
// (or the whole box is one chunk). Below that, per-element vector
// gathers/scatters are the better path.
inline constexpr int64_t kMinDmaRunBytes = 64;
bool WorthDma(const Box& box, int elem_bytes);

// One end of a DMA: `space`[s<reg> + offset] (reg < 0: no base register).
struct DmaEnd {
  std::string space;  // "hbm", "vmem" or "smem".
  int reg = -1;
  int64_t offset = 0;  // Bytes.
};
// The assembly operand text of `e`.
std::string MemOperand(const DmaEnd& e);

// Emits the DMAs copying `box` (elements of `elem_bytes`) from `src` to
// `dst` on semaphore `sem` and waits for them. Up to three strided dims go
// in one dmastart; further outer dims become scalar loops (s10..s19).
// Nothing is emitted for an empty box. With `wait` false, a box that is
// one dmastart is left in flight (the caller waits on `sem`; at most 64
// DMAs may be in flight) and true is returned; false means every DMA
// emitted was waited for. REQUIRES: rank(box) <= 8.
bool EmitBoxDma(KernelBuilder& kb, const DmaEnd& dst, const DmaEnd& src,
                const Box& box, int elem_bytes, int sem, bool wait = true);

// An index-mapped scatter, the mirror of EmitGather: for every element of
// the dense `in_dims` array at VMEM `in_vmem` (memory type `mem`) whose
// coordinates c satisfy every range, writes it to element
// offset + sum_d coeff[d] * c[d] of the VMEM array at `out_vmem`.
// Uses v0..v1, v2+d (coordinates), v12..v14, m2, m3.
// REQUIRES: rank(in_dims) <= 8, element count > 0.
void EmitAffineScatter(KernelBuilder& kb, const std::vector<int64_t>& in_dims,
                       int64_t in_vmem, const std::string& mem, int64_t offset,
                       const std::vector<int64_t>& coeff,
                       const std::vector<GatherSource::Range>& ranges,
                       int64_t out_vmem);

// Fills `elements` elements of memory type `mem` at VMEM `vmem` with the
// lanes of register `vreg` (lane form of `mem`; c128: a quad).
void EmitFill(KernelBuilder& kb, int64_t elements, const std::string& mem,
              int64_t vmem, int vreg);

// Loads the scalar integer start indices of dynamic-slice and
// dynamic-update-slice (operands first.., either one scalar per dim or one
// rank-1 vector) into s1..s<rank>, clamped as XLA does:
// start = clamp(start, 0, dims[d] - sizes[d]) (unsigned values above
// INT64_MAX saturate first). Then s9 = the element offset
// sum start_d * row-major stride_d of `dims`. Staged through SMEM.
// CannotCompile for non-integer indices or rank > 8.
Status EmitClampedStarts(const HloInstruction& instr, const BufferPlan& plan,
                         int first, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& sizes, KernelBuilder& kb);

// Clamps the start index in s<x> (loaded by sld from HLO integer type
// `type`, so sign- or zero-extended) to [0, hi]; u64 values above
// INT64_MAX (negative in s<x>) clamp to hi. Clobbers s<scratch> and
// s<scratch + 1>.
void EmitClampScalar(KernelBuilder& kb, int x, const std::string& type,
                     int64_t hi, int scratch);

// Index-vector decoding for gather and scatter (registers: v14:v15 scratch,
// v16:v17 the index lanes).
//
// v<acc> += v<coord> * factor in s32 lanes; nothing when factor is 0.
// Clobbers v14 and v<scratch>.
void EmitAddScaled(KernelBuilder& kb, int acc, int coord, int64_t factor,
                   int scratch);
// v16 (v16:v17 for 64-bit index types) = component k of the index vectors
// of `indices` (staged at VMEM `vmem`, index_vector_dim `ivd`; ivd ==
// rank means a scalar index) whose element offsets (of component 0) are in
// v<addr>, lanes of m<mask>.
void EmitLoadIndexComponent(KernelBuilder& kb, const ArrayBuffer& indices,
                            int64_t vmem, int64_t ivd, int64_t k, int addr,
                            int mask);
// Clamps the index lanes in v16 (HLO integer type `itype`) to [0, hi]
// (gather: XLA clamps starts so the slice is in bounds); the low word v16
// then holds the index.
void EmitClampIndexLanes(KernelBuilder& kb, const std::string& itype,
                         int64_t hi);
// m4 &= 0 <= the index lanes in v16 <= hi (scatter: XLA skips windows out
// of bounds). Clobbers m6.
void EmitAndIndexInBounds(KernelBuilder& kb, const std::string& itype,
                          int64_t hi);

}  // namespace trench::codegen::dm
