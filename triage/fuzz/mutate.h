// Mutations of HLO modules for the trace corpus (trace_corpus.h). Each
// mutation edits a module in place and describes what it did; a mutation
// that does not apply returns "" and leaves the module unchanged. Callers
// verify the result (VerifyModule) and drop mutations that break it.
#pragma once

#include <memory>
#include <string>

#include "compiler/ir/hlo_module.h"
#include "triage/fuzz/program_builder.h"

namespace trench::fuzz {

// Replaces one elementwise op by another of the same signature: add,
// subtract, multiply, maximum, minimum; and/or/xor; floor/ceil/round-*;
// bounded transcendentals (tanh, logistic, sine, cosine, erf); exp <->
// expm1, sqrt <-> cbrt; exp -> tanh (but not back unless allow_nonfinite);
// or a compare's direction. E.g. "swap %add.3: add -> maximum".
std::string SwapOp(HloModule& m, Rng& rng, bool allow_nonfinite);

// Changes one float type to another (f32, bf16, f16; not a type the module
// already has besides `from`) on every instruction of every computation,
// constants converted (round to nearest even): "dtype f32 -> bf16".
std::string ChangeDtype(HloModule& m, Rng& rng);

// Gives one array instruction of rank >= 2 a random non-default layout
// (or the default back): "layout %x: {0,1}".
std::string ChangeLayout(HloModule& m, Rng& rng);

// Perturbs a few elements of one float or integer constant (scale, sign,
// +-1, 0), keeping non-finite elements: "constant %c: 3 elements".
std::string PerturbConstant(HloModule& m, Rng& rng);

// Replaces one operand of an entry op with edge semantics (shifts,
// divide, remainder, power, maximum, minimum, clamp, compare, convert)
// by a constant of the operand's shape made of interesting values of its
// type (interesting_values.h; a literal up to 16 elements, else a
// broadcast scalar). Integers take any value (XLA defines their wrap,
// x / 0, x % 0 and over-wide shifts); unless allow_nonfinite, float values
// are finite and at most 4 in magnitude (the trace's formulas have no
// guards), float divisors at least 0.5, and float powers are left alone.
// "edge %div.3 operand 1: max, shift_count".
std::string EdgeOperand(HloModule& m, Rng& rng, bool allow_nonfinite);

// Feeds an array output of `donor`'s entry into one entry parameter of
// `m` (flattened, sliced or zero-padded to the element count, reshaped and
// converted to the parameter's shape); the donor's computations and
// parameters join `m`. Complex and real values are not mixed. "splice
// <what> -> %param".
std::string Splice(HloModule& m, const HloModule& donor, Rng& rng);

}  // namespace trench::fuzz
