// Shape inference for HLO instructions, with XLA's semantics.
//
// InferShape computes the result shape an instruction must have, from its
// operands' declared shapes, its typed attributes and the signatures of the
// computations it calls. It is what the verifier compares the declared shape
// against, and what builders (passes, the fuzzer, the reducer) use to give a
// new instruction its shape.
//
// Rules follow XLA's operation semantics: no implicit broadcasting or type
// promotion (operands of arithmetic ops have equal element types and
// dimensions), bitwise ops take integers or pred, shifts integers,
// transcendental ops floats (or complex where XLA allows it), compare
// yields pred. Ops whose result type is not determined by the operands
// (convert, bitcast-convert, stochastic-convert, bitcast, reshape,
// dynamic-reshape, broadcast, iota, parameter, the dynamic flags of
// set-dimension-size, dot and convolution's preferred element type) take
// that part from the declared shape and check the rest.
#pragma once

#include "base/status.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/opcode.h"
#include "compiler/ir/shape.h"

namespace trench {

// Returns the inferred result shape of `instr`, without layouts.
//
// Failure:
// - InvalidArgument when the instruction is malformed (wrong operand count,
//   null operand or called computation, operand shapes or attributes that
//   break the op's rules, called computations with the wrong signature).
//   The message names the instruction and the op and says what is wrong:
//   "%add.3: add operands have different shapes f32[2] and f32[3]".
// - Unimplemented when the opcode has no inference rule (all-gather and
//   reduce-scatter, whose group size may be the mesh's; collective-permute,
//   custom-call, rng, ...; see HasShapeInferenceRule): callers trust the
//   declared shape of such instructions.
// Never crashes, whatever the instruction holds.
StatusOr<Shape> InferShape(const HloInstruction& instr);

// True when InferShape has a rule for `op`, i.e. it never answers
// Unimplemented for it.
bool HasShapeInferenceRule(HloOpcode op);

}  // namespace trench
