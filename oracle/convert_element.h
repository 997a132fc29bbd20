// One element converted between array types, as XLA's convert does.
// Internal to oracle/ (used by convert and iota).
//
// - float -> integer truncates toward zero, saturates at the integer's
//   range and maps NaN to 0 (xla/literal.cc, ConvertBetweenNativeTypes:
//   "choose saturating arithmetic ... and arbitrarily map NaN to zero").
// - integer -> integer wraps modulo 2^N (two's complement).
// - anything -> pred is `value != 0` (NaN -> true); pred -> x is 0 or 1.
// - integer/float -> float rounds to nearest even once, from the exact value:
//   64-bit integers reach bf16/f16 through a round-to-odd double so that
//   the double step cannot cause a double rounding. (XLA's host conversion
//   may go through f32 first for f64/s64 -> bf16, which can differ on rare
//   near-ties; this oracle's contract is the exact rounding.)
// - real -> complex sets the imaginary part to 0. complex -> real is not
//   instantiated (XLA's shape inference rejects it; the caller reports it).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "compiler/ir/dtype.h"
#include "oracle/elementwise_loops.h"

namespace trench::oracle {

template <PrimitiveType T>
inline constexpr bool kIsComplexType =
    T == PrimitiveType::C64 || T == PrimitiveType::C128;
template <PrimitiveType T>
inline constexpr bool kIsFloatType =
    T == PrimitiveType::F16 || T == PrimitiveType::BF16 ||
    T == PrimitiveType::F32 || T == PrimitiveType::F64;

// m as a double, rounded to odd when it has more than 53 significant bits:
// a later round-to-nearest-even to <= 51 bits then equals rounding m
// directly (round-to-odd keeps the sticky information).
inline double RoundToOddDouble(uint64_t m) {
  if (m < (uint64_t{1} << 53)) return static_cast<double>(m);
  const int shift = 64 - std::countl_zero(m) - 53;
  uint64_t kept = m >> shift;
  if (m & ((uint64_t{1} << shift) - 1)) kept |= 1;
  return std::ldexp(static_cast<double>(kept), shift);
}

// An integer as a double suitable for one more rounding to bf16/f16.
template <typename I>
inline double IntToDoubleForNarrowing(I v) {
  if constexpr (sizeof(I) < 8) {
    return static_cast<double>(v);  // Exact.
  } else if constexpr (std::is_signed_v<I>) {
    const uint64_t mag = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v)
                               : static_cast<uint64_t>(v);
    const double d = RoundToOddDouble(mag);
    return v < 0 ? -d : d;
  } else {
    return RoundToOddDouble(v);
  }
}

// Float value c (float or double) to integer I: truncate, saturate, NaN->0.
template <typename I, typename C>
inline I SaturatingFloatToInt(C c) {
  const double v = static_cast<double>(c);
  if (std::isnan(v)) return 0;
  // (double)max is max rounded up to a power of two for 32/64-bit types,
  // so `>=` catches exactly the values that do not fit.
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) {
    return std::numeric_limits<I>::max();
  }
  if (v <= static_cast<double>(std::numeric_limits<I>::lowest())) {
    return std::numeric_limits<I>::lowest();
  }
  return static_cast<I>(v);
}

// Real value (double/float/integer already widened) to float storage T.
template <PrimitiveType To, typename C>
inline NativeT<To> FloatFromReal(C c) {
  if constexpr (To == PrimitiveType::BF16) {
    if constexpr (std::is_same_v<C, float>) {
      return bf16::FromBits(F32ToBf16Bits(c));
    } else {
      return bf16::FromBits(F64ToBf16Bits(static_cast<double>(c)));
    }
  } else if constexpr (To == PrimitiveType::F16) {
    if constexpr (std::is_same_v<C, float>) {
      return f16::FromBits(F32ToF16Bits(c));
    } else {
      return f16::FromBits(F64ToF16Bits(static_cast<double>(c)));
    }
  } else {
    return static_cast<NativeT<To>>(c);
  }
}

// REQUIRES: !(kIsComplexType<From> && !kIsComplexType<To>).
template <PrimitiveType From, PrimitiveType To>
inline NativeT<To> ConvertElement(NativeT<From> v) {
  using Out = NativeT<To>;
  if constexpr (From == To) {
    return v;
  } else if constexpr (kIsComplexType<From>) {
    static_assert(kIsComplexType<To>, "complex -> real is not converted");
    using R = typename Out::value_type;
    return Out(static_cast<R>(v.real()), static_cast<R>(v.imag()));
  } else if constexpr (From == PrimitiveType::PRED) {
    return ConvertElement<PrimitiveType::U8, To>(v ? 1 : 0);
  } else if constexpr (To == PrimitiveType::PRED) {
    return Load<From>(v) != ComputeT<From>(0);
  } else if constexpr (kIsComplexType<To>) {
    using R = typename Out::value_type;
    return Out(static_cast<R>(Load<From>(v)), R(0));
  } else if constexpr (kIsFloatType<From>) {
    const ComputeT<From> c = Load<From>(v);
    if constexpr (kIsFloatType<To>) {
      return FloatFromReal<To>(c);
    } else {
      return SaturatingFloatToInt<Out>(c);
    }
  } else {  // From is an integer.
    if constexpr (kIs16BitFloat<To>) {
      return FloatFromReal<To>(IntToDoubleForNarrowing(v));
    } else {
      // Integer -> integer wraps (C++20 defines it modulo 2^N); integer ->
      // f32/f64 is one hardware rounding, to nearest even.
      return static_cast<Out>(v);
    }
  }
}

}  // namespace trench::oracle
