// Shared pieces of the reduction-family emitters (reduce, reduce-window,
// select-and-scatter, sort): lane-wise emission of their called scalar
// computations (reducers, comparators, select/scatter functions) with
// EmitVectorOp, index arithmetic on lanes, and nested scalar loops.
//
// Register conventions on top of kernel_builder.h: these helpers use
// scalar registers s1..s8 (loop counters) and s10..s17 (loop positions),
// the vector scratch v28/v29 (splatted constants) and masks m1..m3 (through
// EmitVectorOp). Emitters keep their own masks in m4..m7.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/codegen/vector_ops.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen {

// One nested scalar loop dimension: position = start + i * step for
// i = 0 .. count-1.
struct LoopDim {
  int64_t count = 1, start = 0, step = 1;
};

// "vN".
std::string VReg(int r);

// The array leaves of `instr`'s value (one for an array, one per element of
// a flat tuple), in flattened order.
std::vector<ArrayBuffer> LeafBuffers(const BufferPlan& plan,
                                     const HloInstruction* instr);

// The identity of the reducer `op` (vadd/vmax/vmin) in lane type `lane`
// (f32, f64, s32, s64, u32, u64), as an immediate.
std::string ReducerIdentity(const std::string& op, const std::string& lane);

// Element type name of a scalar instruction ("f32", "pred", ...).
std::string ScalarType(const HloInstruction& instr);

// OK if every instruction of `comp` can be emitted lane-wise: parameters,
// scalar constants, a tuple root, scalar reshape/bitcast/copy/broadcast, and
// ops EmitVectorOp handles (IsVectorOp). CannotCompile(instr, ...) naming
// the offending op otherwise. Nothing is emitted.
Status CheckScalarComputation(const HloInstruction& instr,
                              const HloComputation& comp);

// Emits `comp` lane-wise: params[i] holds parameter i in its lane form;
// outs[k] receives leaf k of the root (the root itself, or each operand of
// a tuple root). `outs` may alias `params` (results are formed in scratch
// registers first). Scratch comes from `pool`; `params` and `outs` must be
// reserved there by the caller. A parameter whose params[i] is negative is
// loaded by `load` (when given) into a register of the pool at its place
// in the computation's order, and that register is freed after its last
// use: a comparator over many operands then holds only the ones in use
// (a lexicographic compare of 16 keys). REQUIRES: CheckScalarComputation
// ok; `load` for every parameter read whose params[i] is negative.
using ParamLoader = std::function<Status(int64_t param, int reg)>;
Status EmitScalarComputation(KernelBuilder& kb, VRegPool& pool,
                             const HloInstruction& instr,
                             const HloComputation& comp,
                             const std::vector<int>& params,
                             const std::vector<int>& outs,
                             const ParamLoader& load = nullptr);

// vR = vR + sX (or - sX when `subtract`) in s32 lanes, for the scalar
// register named `scalar` ("s19"); nothing when it is "". Blocked kernels
// use it to turn block-local lane indices and offsets into global ones and
// back. Clobbers v28.
void EmitOffsetLanes(KernelBuilder& kb, int reg, const std::string& scalar,
                     bool subtract);

// vD = vS (both registers of a pair when `wide`).
void EmitMove(KernelBuilder& kb, int dst, int src, bool wide);
// vD = mK ? vA : vB in lane type `lane` (pairs handled by the machine).
void EmitSelect(KernelBuilder& kb, const std::string& lane, int dst, int mask,
                int a, int b);

// The single-op reducer mnemonic ("vadd", "vmax", "vmin", "vmul", "vand",
// "vor") when `comp` is `op(p0, p1)` (either order) on type `t`, else "".
// pred takes only and/or.
std::string SimpleReducer(const HloComputation& comp, const std::string& t);

// Emits dst = sum_d ((lin / stride_d) % dims_d) * coeff_d + offset (s32)
// for the row-major array `dims`, lin in `lin` (s32). Uses `tmp` and v29.
// dst must differ from lin and tmp.
void EmitIndexFromLinear(KernelBuilder& kb, int lin,
                         const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& coeff, int64_t offset,
                         int dst, int tmp);
// dst = coordinate d of linear index `lin` in the row-major array `dims`.
void EmitCoordinate(KernelBuilder& kb, int lin,
                    const std::vector<int64_t>& dims, size_t d, int dst);

// Emits loops over `dims` (outermost first; REQUIRES <= 8 dims, counts > 0)
// around body(); inside, s(10+d) is the position of dim d.
Status EmitNestedLoops(KernelBuilder& kb, const std::vector<LoopDim>& dims,
                       const std::function<Status()>& body);

// Window helpers (reduce-window, select-and-scatter). Per tile:
// bases[d] = o_d * stride_d - pad_lo_d, o the coordinates of `lin` in
// `out_dims`. Per window position (positions k_d * window_dilation_d in
// s(10+d), EmitNestedLoops): m4 = m0 and the position is inside the
// (dilated) input, idx = its row-major input offset. Clobber u, v28, v29,
// m5.
void EmitWindowBases(KernelBuilder& kb, int lin,
                     const std::vector<int64_t>& out_dims,
                     const std::vector<WindowDim>& window,
                     const std::vector<int>& bases);
void EmitWindowIndex(KernelBuilder& kb, const std::vector<WindowDim>& window,
                     const std::vector<int64_t>& in_dims,
                     const std::vector<int>& bases, int idx, int u);
// The general form of both: per tile, bases[d] = c_d * scale[d] + offset[d]
// with c the coordinates of `lin` in `dims` (clobbers v29). Per position
// (s(10+d)): u_d = bases[d] + s(10+d) (minus when `subtract`); m4 = m0 and
// every u_d >= 0, divisible by divisor[d], u_d / divisor[d] < to_dims[d];
// idx = the row-major offset of (u_d / divisor[d]) in `to_dims`. Clobbers
// u, v28, v29, m5.
void EmitScaledCoordinates(KernelBuilder& kb, int lin,
                           const std::vector<int64_t>& dims,
                           const std::vector<int64_t>& scale,
                           const std::vector<int64_t>& offset,
                           const std::vector<int>& bases);
void EmitDividedIndex(KernelBuilder& kb, const std::vector<int>& bases,
                      bool subtract, const std::vector<int64_t>& divisor,
                      const std::vector<int64_t>& to_dims, int idx, int u);

// The operands of a variadic reduction (reduce, reduce-window): N inputs,
// N inits and the N leaves of the result.
struct ReductionOperands {
  int64_t n = 0;
  std::vector<ArrayBuffer> ins, inits, outs;
};
// Reads them from `plan`. CannotCompile for an odd operand count, a nested
// tuple result, a dtype without a lane type, or a result typed unlike its
// init.
StatusOr<ReductionOperands> GetReductionOperands(const HloInstruction& instr,
                                                 const BufferPlan& plan);

// How the reducer is emitted: `simple` is SimpleReducer's mnemonic (one
// input of its init's type only, else ""); `direct` when that one op is
// applied as is (bf16/f16 multiply must round after every step, so it keeps
// the computation). Not direct: the error of CheckScalarComputation, if any.
struct Reducer {
  std::string simple;
  bool direct = false;
};
StatusOr<Reducer> ChooseReducer(const HloInstruction& instr,
                                const ReductionOperands& ops);

// VMEM staging of a reduction: every input and init is DMAed in, and room
// for every result leaf is allocated.
struct ReductionVmem {
  std::vector<int64_t> ins, inits, outs;
};
ReductionVmem StageReduction(KernelBuilder& kb, const ReductionOperands& ops);
// acc[i] = init i in every lane (idx is set to 0 and used as the index).
void EmitLoadInits(KernelBuilder& kb, const ReductionOperands& ops,
                   const ReductionVmem& vmem, const std::vector<int>& acc,
                   int idx);
// x[i] = input i at the offsets in vIDX, lanes of mask m<mask>.
void EmitGatherInputs(KernelBuilder& kb, const ReductionOperands& ops,
                      const ReductionVmem& vmem, const std::vector<int>& x,
                      int idx, int mask);
// Stores acc[i] to result i's tile, ends the linear tile loop and DMAs the
// results out.
void EmitStoreResults(KernelBuilder& kb, const ReductionOperands& ops,
                      const ReductionVmem& vmem, const std::vector<int>& acc);

// OK if `window` fits an operand of rank `rank` (<= 8): one entry per dim,
// no reversal, positive strides and dilations, sizes >= 0. CannotCompile
// otherwise.
Status CheckWindow(const HloInstruction& instr,
                   const std::vector<WindowDim>& window, int64_t rank);
// Window positions: the product of the sizes.
int64_t WindowPositions(const std::vector<WindowDim>& window);
// The loops visiting the window positions in row-major order: position
// k_d * window_dilation_d in s(10+d).
std::vector<LoopDim> WindowLoops(const std::vector<WindowDim>& window);

// Shape arithmetic has one home, emit_data_movement_util.h.
using dm::ElemBytes;
using dm::Product;
using dm::RowMajorStrides;

}  // namespace trench::codegen
