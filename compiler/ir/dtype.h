// Element types (one registry: dtype.def) and the 16-bit float formats.
//
// bf16 and f16 are stored as their bit patterns. Conversions from f32/f64
// round to nearest even, keep NaN (quieted), infinities and signed zero, and
// produce and read subnormals exactly.
#pragma once

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trench {

enum class PrimitiveType : uint8_t {
#define X(e, name, bytes, kind) e,
#include "compiler/ir/dtype.def"
#undef X
};

enum class TypeKind { kPred, kSigned, kUnsigned, kFloat, kComplex, kOther };

// "f32", "bf16", ...
std::string_view PrimitiveTypeName(PrimitiveType t);
// Parses an HLO element type name; nullopt for unknown names.
std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name);
// Bytes per element; 0 for TOKEN and TUPLE.
int ByteWidth(PrimitiveType t);
int BitWidth(PrimitiveType t);
TypeKind KindOf(PrimitiveType t);
inline bool IsFloat(PrimitiveType t) { return KindOf(t) == TypeKind::kFloat; }
inline bool IsComplex(PrimitiveType t) {
  return KindOf(t) == TypeKind::kComplex;
}
inline bool IsSigned(PrimitiveType t) { return KindOf(t) == TypeKind::kSigned; }
inline bool IsUnsigned(PrimitiveType t) {
  return KindOf(t) == TypeKind::kUnsigned;
}
inline bool IsInteger(PrimitiveType t) { return IsSigned(t) || IsUnsigned(t); }
// Types that have dense array storage (not TOKEN/TUPLE).
inline bool IsArrayType(PrimitiveType t) {
  return KindOf(t) != TypeKind::kOther;
}
// For floats: exponent and explicit mantissa bits (f32: 8, 23).
int ExponentBits(PrimitiveType t);
int MantissaBits(PrimitiveType t);

// Bit-level conversions. REQUIRES: none; total functions.
uint16_t F32ToBf16Bits(float f);
float Bf16BitsToF32(uint16_t b);
uint16_t F32ToF16Bits(float f);
uint16_t F64ToF16Bits(double d);
uint16_t F64ToBf16Bits(double d);
float F16BitsToF32(uint16_t h);

// Value types for the 16-bit floats. Arithmetic goes through float.
struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float f) : bits(F32ToBf16Bits(f)) {}
  static bf16 FromBits(uint16_t b) {
    bf16 r;
    r.bits = b;
    return r;
  }
  explicit operator float() const { return Bf16BitsToF32(bits); }
  bool operator==(const bf16&) const = default;  // Bitwise.
};

struct f16 {
  uint16_t bits = 0;
  f16() = default;
  explicit f16(float f) : bits(F32ToF16Bits(f)) {}
  static f16 FromBits(uint16_t b) {
    f16 r;
    r.bits = b;
    return r;
  }
  explicit operator float() const { return F16BitsToF32(bits); }
  bool operator==(const f16&) const = default;  // Bitwise.
};

using c64 = std::complex<float>;
using c128 = std::complex<double>;

// Maps a PrimitiveType to its C++ storage type.
template <PrimitiveType T>
struct NativeTypeOf;
#define TRENCH_NATIVE(E, C)               \
  template <>                             \
  struct NativeTypeOf<PrimitiveType::E> { \
    using type = C;                       \
  };
TRENCH_NATIVE(PRED, bool)
TRENCH_NATIVE(S8, int8_t)
TRENCH_NATIVE(S16, int16_t)
TRENCH_NATIVE(S32, int32_t)
TRENCH_NATIVE(S64, int64_t)
TRENCH_NATIVE(U8, uint8_t)
TRENCH_NATIVE(U16, uint16_t)
TRENCH_NATIVE(U32, uint32_t)
TRENCH_NATIVE(U64, uint64_t)
TRENCH_NATIVE(F16, f16)
TRENCH_NATIVE(BF16, bf16)
TRENCH_NATIVE(F32, float)
TRENCH_NATIVE(F64, double)
TRENCH_NATIVE(C64, c64)
TRENCH_NATIVE(C128, c128)
#undef TRENCH_NATIVE
template <PrimitiveType T>
using NativeT = typename NativeTypeOf<T>::type;

// Calls f.template operator()<PrimitiveType::X>() for the array type t and
// returns its result. REQUIRES: IsArrayType(t).
template <typename F>
decltype(auto) DispatchArrayType(PrimitiveType t, F&& f) {
  switch (t) {
#define TRENCH_CASE(E)   \
  case PrimitiveType::E: \
    return f.template operator()<PrimitiveType::E>();
    TRENCH_CASE(PRED)
    TRENCH_CASE(S8) TRENCH_CASE(S16) TRENCH_CASE(S32) TRENCH_CASE(S64)
        TRENCH_CASE(U8) TRENCH_CASE(U16) TRENCH_CASE(U32) TRENCH_CASE(U64)
            TRENCH_CASE(F16) TRENCH_CASE(BF16) TRENCH_CASE(F32) TRENCH_CASE(F64)
                TRENCH_CASE(C64) TRENCH_CASE(C128)
#undef TRENCH_CASE
                    default : break;
  }
  return f.template operator()<PrimitiveType::F32>();  // Unreachable.
}

}  // namespace trench

namespace trench {

// A binary floating-point format with `ebits` exponent bits and `mbits`
// explicit mantissa bits (IEEE-style: bias 2^(ebits-1)-1, subnormals,
// all-ones exponent for Inf/NaN). REQUIRES: 1 <= ebits <= 11,
// 0 <= mbits <= 52.
//
// EncodeFloat rounds d to the nearest representable value, ties to even,
// overflowing to infinity; NaN becomes a quiet NaN of the same sign.
// Returns the bit pattern (sign at bit ebits+mbits).
uint64_t EncodeFloat(double d, int ebits, int mbits);
// Exact value of a bit pattern of that format.
double DecodeFloat(uint64_t bits, int ebits, int mbits);

}  // namespace trench
