// Interesting element values per element type (the kinds are listed in
// interesting_values.def): integer boundaries (0, +-1, min, max, min+1,
// max-1, powers of two +-1, shift counts around the bit width) and float
// edges (+-0, +-inf, quiet and signalling NaNs with several payloads and
// both signs, the smallest and largest denormals, the smallest normal, the
// largest finite, epsilon, rounding ties, integer-conversion limits), for
// s8..u64, f16 bf16 f32 f64 and c64/c128 (real-part values as (v, 0) and
// (0, v)). pred has {false, true} (kind kZero / kOne).
//
// Each value is an exact bit pattern, so NaN payloads survive: Text() is
// its HLO literal text ("nan(0x1)", "-0", "(inf, 0)"), Store() writes it
// into a literal. Classify() maps an element back to its kind (bit-exact,
// NaNs by quiet/signalling class), for measuring what programs contain.
// Everything is deterministic and computed from dtype.h's widths.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/opcode.h"

namespace trench::fuzz {

enum class InterestingKind {
#define X(e, name, applies, finite, what) e,
#include "triage/fuzz/interesting_values.def"
#undef X
};

// Every kind, in registry order.
const std::vector<InterestingKind>& AllInterestingKinds();
std::string_view InterestingKindName(InterestingKind k);
// False for the inf and NaN kinds.
bool InterestingKindFinite(InterestingKind k);

struct InterestingValue {
  InterestingKind kind;
  uint64_t bits = 0;       // The element's bits (complex: the real part's).
  uint64_t imag_bits = 0;  // Complex only.
  double value = 0;        // The (real part's, else imaginary) value; NaN.
  bool finite = true;
  // Largest magnitude of the parts (+inf for inf and NaN).
  double magnitude = 0;
};

// The values of type t (empty for token/tuple), cached, in registry order.
const std::vector<InterestingValue>& InterestingValues(PrimitiveType t);
// Those of t with `finite` set (when finite_only) or all of them.
std::vector<InterestingValue> InterestingValuesOf(PrimitiveType t,
                                                  bool finite_only);

// The HLO literal text of one element of type t.
std::string InterestingText(PrimitiveType t, const InterestingValue& v);
// Writes v into element i of the array literal l (of v's type).
void StoreInteresting(Literal& l, int64_t i, const InterestingValue& v);
// The kind of element i of array literal l, if it is an interesting value
// of its type (any NaN counts as kQuietNaN or kSignalingNaN by its quiet
// bit; complex: the kind of its nonzero part, or kZero).
std::optional<InterestingKind> ClassifyInteresting(const Literal& l, int64_t i);

// The ops whose results at interesting operands are defined case by case
// and that the generator, the trace mutator and the feature count aim at:
// shift-left, shift-right-logical, shift-right-arithmetic, divide,
// remainder, power, maximum, minimum, clamp, compare, convert.
bool HasEdgeSemantics(HloOpcode op);

}  // namespace trench::fuzz
