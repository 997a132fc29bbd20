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

// Feeds an array output of `donor`'s entry into one entry parameter of
// `m` (flattened, sliced or zero-padded to the element count, reshaped and
// converted to the parameter's shape); the donor's computations and
// parameters join `m`. Complex and real values are not mixed. "splice
// <what> -> %param".
std::string Splice(HloModule& m, const HloModule& donor, Rng& rng);

}  // namespace trench::fuzz
