// Bit-exact numeric helpers shared by the units: float<->bits, the 16-bit
// float formats (round to nearest even, NaN quieted, subnormals exact), and
// ulp distance. Header-only so the hot loops inline them.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace trench::tpu {

inline uint32_t F32Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline float BitsF32(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint64_t F64Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}
inline double BitsF64(uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

// f32 -> bf16 bits, round to nearest even; NaN stays NaN (quieted).
inline uint16_t RoundToBf16(float f) {
  uint32_t b = F32Bits(f);
  if ((b & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((b >> 16) | 0x40);
  uint32_t lsb = (b >> 16) & 1;
  b += 0x7fffu + lsb;
  return static_cast<uint16_t>(b >> 16);
}
inline float Bf16ToF32(uint16_t h) { return BitsF32(uint32_t{h} << 16); }
// The f32 value nearest (RNE) representable in bf16.
inline float RoundF32ToBf16Value(float f) { return Bf16ToF32(RoundToBf16(f)); }

// f32 -> IEEE binary16 bits, round to nearest even, overflow to inf,
// gradual underflow.
inline uint16_t RoundToF16(float f) {
  uint32_t b = F32Bits(f);
  uint16_t sign = static_cast<uint16_t>((b >> 16) & 0x8000u);
  uint32_t a = b & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u | ((a >> 13) & 0x3ffu);
  if (a == 0x7f800000u) return sign | 0x7c00u;
  int exp = static_cast<int>(a >> 23) - 127;
  if (exp > 15) return sign | 0x7c00u;
  uint32_t mant = a & 0x7fffffu;
  if (exp >= -14) {
    // Normal: keep 10 bits, round the 13 dropped bits.
    uint32_t v = (static_cast<uint32_t>(exp + 15) << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (v & 1))) ++v;  // may carry
    return sign | static_cast<uint16_t>(v);  // carry into exp -> inf ok
  }
  if (exp < -25) return sign;
  // Subnormal: value = m * 2^-24 with m < 1024.
  uint32_t full =
      mant | 0x800000u;        // 24-bit significand, value full*2^(exp-23)
  int shift = -exp - 14 + 13;  // to units of 2^-24
  if (shift > 31) return sign;
  uint32_t v = full >> shift;
  uint32_t rest = full & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (v & 1))) ++v;
  return sign | static_cast<uint16_t>(v);
}

inline float F16ToF32(uint16_t h) {
  uint32_t sign = uint32_t{h & 0x8000u} << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return BitsF32(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return BitsF32(sign | ((exp + 112) << 23) | (mant << 13));
}

// Distance in units in the last place of `ref` rounded to f32 (the ulp of
// the f32 binade containing |ref|; subnormal spacing below). Both NaN: 0;
// one NaN or mismatched infinities: +inf.
inline double UlpErrorF32(float got, double ref) {
  if (std::isnan(got) || std::isnan(ref)) {
    return std::isnan(got) && std::isnan(ref) ? 0.0 : INFINITY;
  }
  if (std::isinf(ref) || std::isinf(got)) {
    float rf = static_cast<float>(ref);
    if (std::isinf(rf) && rf == got) return 0.0;
    if (std::isinf(got) && !std::isinf(rf)) {
      // got overflowed: measure against FLT_MAX spacing.
      return std::fabs((double)FLT_MAX - ref) / std::ldexp(1.0, 104) + 1.0;
    }
    return INFINITY;
  }
  double a = std::fabs(ref);
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int ulp_exp = std::max(e - 24, -149);
  return std::fabs(static_cast<double>(got) - ref) / std::ldexp(1.0, ulp_exp);
}

}  // namespace trench::tpu
