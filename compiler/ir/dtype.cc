#include "compiler/ir/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace trench {
namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int bytes;
  TypeKind kind;
};

constexpr TypeInfo kTypes[] = {
#define X(e, name, bytes, kind) {PrimitiveType::e, name, bytes, TypeKind::kind},
#include "compiler/ir/dtype.def"
#undef X
};

const TypeInfo& Info(PrimitiveType t) { return kTypes[static_cast<int>(t)]; }

// Rounds v >> shift to nearest, ties to even. REQUIRES: shift >= 1.
uint64_t ShiftRoundNearestEven(uint64_t v, int shift) {
  if (shift >= 64) return 0;
  uint64_t kept = v >> shift;
  uint64_t rem = v & ((uint64_t{1} << shift) - 1);
  uint64_t half = uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (kept & 1))) ++kept;
  return kept;
}

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType t) { return Info(t).name; }

std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (info.name == name) return info.type;
  }
  return std::nullopt;
}

int ByteWidth(PrimitiveType t) { return Info(t).bytes; }
int BitWidth(PrimitiveType t) {
  return t == PrimitiveType::PRED ? 1 : Info(t).bytes * 8;
}
TypeKind KindOf(PrimitiveType t) { return Info(t).kind; }

int ExponentBits(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::F16:
      return 5;
    case PrimitiveType::BF16:
      return 8;
    case PrimitiveType::F32:
    case PrimitiveType::C64:
      return 8;
    case PrimitiveType::F64:
    case PrimitiveType::C128:
      return 11;
    default:
      return 0;
  }
}

int MantissaBits(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::F16:
      return 10;
    case PrimitiveType::BF16:
      return 7;
    case PrimitiveType::F32:
    case PrimitiveType::C64:
      return 23;
    case PrimitiveType::F64:
    case PrimitiveType::C128:
      return 52;
    default:
      return 0;
  }
}

uint64_t EncodeFloat(double d, int ebits, int mbits) {
  const uint64_t in = std::bit_cast<uint64_t>(d);
  const uint64_t sign = (in >> 63) << (ebits + mbits);
  const uint64_t exp_all_ones = (uint64_t{1} << ebits) - 1;
  if (std::isnan(d)) {
    uint64_t quiet = mbits > 0 ? uint64_t{1} << (mbits - 1) : 0;
    return sign | (exp_all_ones << mbits) | quiet;
  }
  if (std::isinf(d)) return sign | (exp_all_ones << mbits);
  const int in_exp = static_cast<int>((in >> 52) & 0x7ff);
  uint64_t sig = in & ((uint64_t{1} << 52) - 1);
  int q;  // Exponent of sig's least significant bit.
  if (in_exp == 0) {
    if (sig == 0) return sign;
    q = -1074;
  } else {
    sig |= uint64_t{1} << 52;
    q = in_exp - 1075;
  }
  const int bias = (1 << (ebits - 1)) - 1;
  const int lead = 63 - std::countl_zero(sig) + q;  // Exponent of top bit.
  const int min_normal = 1 - bias;
  int qt = std::max(lead, min_normal) - mbits;  // Target quantum exponent.
  const int shift = qt - q;
  uint64_t r = shift <= 0 ? sig << -shift : ShiftRoundNearestEven(sig, shift);
  if (lead >= min_normal) {
    if (r >> (mbits + 1)) {  // Rounding carried into a new binade.
      r >>= 1;
      ++qt;
    }
    const int64_t exp_field = int64_t{qt} + mbits + bias;
    if (exp_field >= static_cast<int64_t>(exp_all_ones)) {
      return sign | (exp_all_ones << mbits);
    }
    return sign | (static_cast<uint64_t>(exp_field) << mbits) |
           (r & ((uint64_t{1} << mbits) - 1));
  }
  // Subnormal: r <= 2^mbits; r == 2^mbits reads as the smallest normal.
  return sign | r;
}

double DecodeFloat(uint64_t bits, int ebits, int mbits) {
  const bool neg = (bits >> (ebits + mbits)) & 1;
  const uint64_t exp_all_ones = (uint64_t{1} << ebits) - 1;
  const uint64_t e = (bits >> mbits) & exp_all_ones;
  const uint64_t m = bits & ((uint64_t{1} << mbits) - 1);
  const int bias = (1 << (ebits - 1)) - 1;
  double v;
  if (e == exp_all_ones) {
    v = m ? std::numeric_limits<double>::quiet_NaN()
          : std::numeric_limits<double>::infinity();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - bias - mbits);
  } else {
    v = std::ldexp(static_cast<double>(m | (uint64_t{1} << mbits)),
                   static_cast<int>(e) - bias - mbits);
  }
  return neg ? -v : v;
}

uint16_t F32ToBf16Bits(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
  // Same exponent range as f32: rounding the low half is all there is.
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

float Bf16BitsToF32(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

uint16_t F32ToF16Bits(float f) {
  return static_cast<uint16_t>(EncodeFloat(f, 5, 10));
}
uint16_t F64ToF16Bits(double d) {
  return static_cast<uint16_t>(EncodeFloat(d, 5, 10));
}
uint16_t F64ToBf16Bits(double d) {
  return static_cast<uint16_t>(EncodeFloat(d, 8, 7));
}

float F16BitsToF32(uint16_t h) {
  // Keep NaN payloads: widen the mantissa bits instead of going through
  // double for NaN.
  if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) {
    uint32_t u = (static_cast<uint32_t>(h & 0x8000) << 16) | 0x7f800000 |
                 (static_cast<uint32_t>(h & 0x3ff) << 13);
    return std::bit_cast<float>(u);
  }
  return static_cast<float>(DecodeFloat(h, 5, 10));
}

}  // namespace trench
