// Deterministic random input literals. The oracle side (hlo-eval) and the
// target side (hlo-run) both use this, so the same seed gives the same
// inputs bit for bit on every machine and standard library.
//
// The exact rule (a contract: changing it changes every stored seed):
//
//   SplitMix64 (Steele et al.): state += 0x9E3779B97F4A7C15; z = state;
//   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//   z = (z ^ (z >> 27)) * 0x94D049BB133111EB; return z ^ (z >> 31).
//
//   RandomLiteral(shape, seed): one SplitMix64 stream with state = seed.
//   Leaves are filled in flattened tuple order, elements in logical
//   row-major order, each element drawing one 64-bit r (complex: two,
//   real part first). Token leaves draw nothing. Dynamic dimensions are
//   filled to their bound.
//     pred:            r >> 63                       (0 or 1)
//     s8, s16, s32, s64: int(r >> 60) - 8            (in [-8, 7])
//     u8, u16, u32, u64: r >> 60                     (in [0, 15])
//     f16, bf16, f32, f64 and complex parts:
//       x = -4.0 + (r >> 11) * 2^-50 (a double in [-4, 4), exact), then
//       rounded to nearest even to the element type (so 4.0 itself can
//       appear after rounding to a narrow type).
//
//   RandomArguments(entry, seed): parameter i gets
//   RandomLiteral(shape_i, ArgumentSeed(seed, i)) where
//   ArgumentSeed(seed, i) is the first SplitMix64 output of a stream with
//   state = seed ^ (i * 0xD1B54A32D192ED03).
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/shape.h"

namespace trench {

// One SplitMix64 step, as above.
uint64_t SplitMix64Next(uint64_t& state);

// The seed of parameter `index`'s literal, as above.
uint64_t ArgumentSeed(uint64_t seed, int64_t index);

// A literal of `shape` (its layout kept as metadata) filled as above.
// REQUIRES: shape's element count is allocatable (a verified module's).
Literal RandomLiteral(const Shape& shape, uint64_t seed);

// One literal per entry parameter, in parameter order.
// REQUIRES: every parameter slot of `entry` is set (a verified module).
std::vector<Literal> RandomArguments(const HloComputation& entry,
                                     uint64_t seed);

}  // namespace trench
