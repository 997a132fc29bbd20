// Literals as JSON, in the conformance case format:
//   {"dtype": "f32", "shape": [2], "values": [1.5, "nan"]}
//   {"tuple": [<literal>, ...]}
// values is the flat logical row-major list. pred values are true/false;
// integers are JSON integers (exact up to 64 bits); floats are JSON
// numbers or the strings "inf", "-inf", "nan"; complex elements are
// [re, im] pairs of floats.
//
// Reading rounds each decimal once, to nearest even, to the element type:
// f32 and f64 by a correctly rounded decimal conversion of the source
// text; bf16 and f16 by decimal -> double -> EncodeFloat, where the one
// case in which that double rounding could differ (the double lands
// exactly on a midpoint of the narrow format while the decimal does not)
// is detected and resolved by re-reading the decimal with directed
// rounding. So every float element is the correctly rounded decimal.
#pragma once

#include "base/json.h"
#include "base/status.h"
#include "compiler/ir/literal.h"

namespace trench {

// Builds a literal from its JSON form. Errors: InvalidArgument naming the
// problem and where ("values[3]: expected an integer in s8 range, got
// 300", "expected 6 values for shape [2,3], got 5", unknown dtype, ...).
StatusOr<Literal> LiteralFromJson(const Json& json);

// The JSON form of a literal (array or tuple). Floats are written in the
// shortest decimal that reads back to the same value of the element type
// (so bf16/f16/f32 values round-trip exactly); NaN payloads and signs are
// not kept ("nan"). Tokens are written as {"dtype": "token", "shape": []}
// with no values (and read back as tokens).
Json LiteralToJson(const Literal& literal);

// Element i of an array literal as JSON, in the form above.
// REQUIRES: literal.shape().IsArray() and 0 <= i < element_count().
Json ElementToJson(const Literal& literal, int64_t i);

// Rounds the decimal number `text` (JSON number syntax) to the float
// format (ebits, mbits) as EncodeFloat does, but correctly from the
// decimal. Returns the bit pattern. InvalidArgument if text is not a
// number. REQUIRES: ebits/mbits as for EncodeFloat.
StatusOr<uint64_t> DecimalToFloatBits(std::string_view text, int ebits,
                                      int mbits);

}  // namespace trench
