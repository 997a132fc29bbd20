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
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen {

// Allocates vector registers v0..v27 (v28..v31 belong to KernelBuilder's
// helpers); a wide (64-bit) value takes an even/odd pair.
class VRegPool {
 public:
  VRegPool() = default;
  // A free register (pair if `wide`); ResourceExhausted when none is left.
  StatusOr<int> Alloc(bool wide);
  void Free(int v, bool wide);
  // Marks `v` (pair if wide) as taken (for registers an emitter fixed).
  void Reserve(int v, bool wide);

 private:
  unsigned used_ = 0;  // Bit r: vr is taken.
};

// True for the element types whose lane form is a register pair.
bool IsWide(const std::string& hlo_type);

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

// vD = the scalar `value` (any rank-0 array literal of a supported type) in
// its lane form. Unimplemented for unsupported types.
Status EmitSplatScalar(KernelBuilder& kb, const Literal& value, int dst);

}  // namespace trench::codegen
