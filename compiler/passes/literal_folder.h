// A small evaluator for constant folding. It knows only ops whose result it
// can compute exactly as XLA defines them, and declines everything else.
// It shares no code with oracle/ (the reference must stay independent).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/literal.h"

namespace trench {

// Folded results larger than this are declined: every folded constant is
// printed in dumps and in the pipeline's fingerprints, and expanding ops
// (broadcast, iota) would otherwise turn small programs into huge texts.
inline constexpr int64_t kMaxFoldedElements = int64_t{1} << 16;

// The value of `instr` given the values of its operands (`operands[i]` is
// operand i's value), as a literal of instr.shape() (layout included).
// Returns nullopt when the op, the types or the attributes are outside
// what the folder computes exactly, or the result has no elements or more
// than kMaxFoldedElements.
//
// Folded: broadcast, reshape, transpose, slice, concatenate, reverse, copy,
// select, iota (all array types); convert (real types; integer -> float
// only below 2^53); elementwise arithmetic on real types: add, subtract,
// multiply, divide, remainder, maximum, minimum, and, or, xor, shifts, not,
// negate, abs, sign, floor, ceil, round-nearest-afz/even, sqrt, is-finite,
// popcnt, count-leading-zeros, compare (not TOTALORDER on floats). Floats
// are computed in double and rounded once (RNE) to the result type; for
// these ops that equals computing bf16/f16 in f32 and f32 in f32 (double
// has more than 2p+2 bits for every p involved). Integers wrap; divide and
// remainder by zero, shifts by >= the bit width and max/min of NaN follow
// XLA's evaluator.
// REQUIRES: each operands[i] has operand i's shape (dims and type).
std::optional<Literal> FoldInstruction(
    const HloInstruction& instr, const std::vector<const Literal*>& operands);

}  // namespace trench
