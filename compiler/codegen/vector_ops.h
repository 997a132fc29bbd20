// Lane-wise HLO ops on registers: the primitive that elementwise kernels,
// fused kernels, reducers, comparators and scatter combiners share.
//
// A value of HLO element type T sits in a register in its lane form
// (LaneType(T), kernel_builder.h): bf16/f16 as f32 holding a value exactly
// representable in T, s8/s16 sign-extended and u8/u16 zero-extended to 32
// bits, pred as s32 0/1, 64-bit types in an even/odd register pair named by
// its even register. Every op result is brought back to its type's value
// set (bf16/f16 rounded to nearest even after each op, narrow integers
// wrapped), so a chain of ops computes exactly what the oracle computes op
// by op (XLA: bf16 elementwise in f32, then rounded).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen {

// Allocates vector registers v0..v27 (v28..v31 belong to KernelBuilder's
// helpers); a wide (64-bit, c64) value takes an even/odd pair, a c128 value
// an aligned quad (RegCount, kernel_builder.h).
class VRegPool {
 public:
  VRegPool() = default;
  // A free register (pair if `wide`); ResourceExhausted when none is left.
  StatusOr<int> Alloc(bool wide);
  void Free(int v, bool wide);
  // Marks `v` (pair if wide) as taken (for registers an emitter fixed).
  void Reserve(int v, bool wide);
  // The same for `n` = 1, 2 or 4 consecutive registers aligned to n.
  StatusOr<int> AllocN(int n);
  void FreeN(int v, int n);
  void ReserveN(int v, int n);

 private:
  unsigned used_ = 0;  // Bit r: vr is taken.
};

// True for the element types whose lane form is a register pair (64-bit
// types and c64; c128 takes four registers, see RegCount).
bool IsWide(const std::string& hlo_type);

// Complex values (vector_ops_complex.cc): c64 is a pair (re f32 in the even
// register, im f32 in the odd one: what vld.u64 of [re, im] gives); c128 a
// quad (re f64 pair, then im f64 pair). EmitVectorOp handles real, imag
// (also of real floats), complex, abs, negate, add, subtract, multiply,
// divide, compare EQ/NE, select, copy, convert complex -> complex and
// real -> complex, same-width bitcast-convert and map on them, as the
// oracle (oracle/elementwise_complex.cc, std::complex) computes:
// multiply is (ac - bd, ad + bc); c64 divide and abs are computed in f64
// and rounded once (libgcc's __divsc3 promotes to double too); c128 divide
// is Smith's algorithm and c128 abs the scaled hypot m * sqrt(1 + (n/m)^2)
// with abs(inf, NaN) = inf. Not reproduced: std::complex's NaN recovery
// for infinite operands of multiply/divide (C99 Annex G).

// The instructions `comp`'s root depends on, in a post order that visits,
// at each instruction, the operand needing the most registers first
// (Sethi-Ullman numbers; a shared value counts where it is first reached),
// so that few values wait in registers while a deep operand is computed: a
// lexicographic compare of many keys, or(lt0, and(eq0, or(lt1, ...))),
// then needs a handful of registers instead of two per key. The order in
// which scalar computations (map bodies, reducers, comparators) are
// emitted.
std::vector<const HloInstruction*> RegisterOrder(const HloComputation& comp);

// Emits code computing register `dst` = instr(srcs) lane-wise, for one
// elementwise HLO instruction (IsElementwise*, compare of every direction
// and comparison type, select, clamp, convert, bitcast-convert, is-finite,
// reduce-precision, copy, and map, whose to_apply computation is emitted
// instruction by instruction). `srcs[i]` holds operand i in its lane form
// (clamp's scalar lo/hi too: the caller splats them); `dst` receives the
// lane form of instr's type. Every lane is computed (no vector instruction
// faults, so garbage lanes are harmless and m0 is left alone). Scratch
// registers come from `pool` and are freed before returning; m1..m3 may be
// clobbered; sources are not modified unless `dst` is one of them.
// Semantics are the oracle's (oracle/elementwise*.cc, XLA's evaluator):
// integer x/0 = -1, x%0 = x, shifts >= width, saturating float->int with
// NaN -> 0, one correct rounding for every convert, max/min returning the
// lhs on equal operands (so max(-0, +0) = -0), NaN propagation.
// Unimplemented via CannotCompile for an op/type pair the target does not
// support (e.g. bitcast-convert between different widths).
Status EmitVectorOp(KernelBuilder& kb, VRegPool& pool,
                    const HloInstruction& instr, int dst,
                    const std::vector<int>& srcs);

// True if EmitVectorOp handles `instr`'s opcode (for map: every
// instruction of its computation). Types are checked by EmitVectorOp.
bool IsVectorOp(const HloInstruction& instr);

// True if an instruction of `comp` has a complex (c64, c128) value or leaf.
// The fused-kernel emitter refuses such fusions (they are emitted inline).
bool UsesComplex(const HloComputation& comp);

// vD = the scalar `value` (any rank-0 array literal of a supported type,
// complex too) in its lane form. Unimplemented for unsupported types.
Status EmitSplatScalar(KernelBuilder& kb, const Literal& value, int dst);

}  // namespace trench::codegen
