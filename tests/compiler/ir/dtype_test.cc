// The 16-bit float conversions of dtype.cc: round to nearest even (ties),
// subnormals, overflow to infinity, NaN, signed zero.
#include "compiler/ir/dtype.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace trench {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint64_t F16(double d) { return EncodeFloat(d, 5, 10); }

TEST(EncodeFloatTest, ExactValues) {
  EXPECT_EQ(F16(1.0), 0x3c00u);
  EXPECT_EQ(F16(-2.0), 0xc000u);
  EXPECT_EQ(F16(65504.0), 0x7bffu);
  EXPECT_EQ(F16(0x1p-14), 0x0400u);  // Smallest normal.
  EXPECT_EQ(F16(0x1p-24), 0x0001u);  // Smallest subnormal.
  EXPECT_EQ(F16(0.0), 0x0000u);
  EXPECT_EQ(F16(-0.0), 0x8000u);
}

TEST(EncodeFloatTest, TiesRoundToEven) {
  EXPECT_EQ(F16(1.0 + 0x1p-11), 0x3c00u);            // 1 | 1+2^-10: even 1.
  EXPECT_EQ(F16(1.0 + 3 * 0x1p-11), 0x3c02u);        // odd | even: up.
  EXPECT_EQ(F16(1.0 + 0x1p-11 + 0x1p-40), 0x3c01u);  // Above the tie.
  EXPECT_EQ(F16(1.0 + 0x1p-11 - 0x1p-40), 0x3c00u);  // Below the tie.
  EXPECT_EQ(F16(-(1.0 + 3 * 0x1p-11)), 0xbc02u);
  // Carry into the next binade: 2 - 2^-12 rounds up to 2.
  EXPECT_EQ(F16(2.0 - 0x1p-12), 0x4000u);
}

TEST(EncodeFloatTest, Subnormals) {
  EXPECT_EQ(F16(0x1p-25), 0x0000u);            // Tie with 0: even.
  EXPECT_EQ(F16(3 * 0x1p-25), 0x0002u);        // Tie 1|2: even 2.
  EXPECT_EQ(F16(0x1p-25 + 0x1p-40), 0x0001u);  // Above the tie.
  EXPECT_EQ(F16(-0x1p-25), 0x8000u);           // Rounds to -0.
  EXPECT_EQ(F16(1e-30), 0x0000u);
  // The largest subnormal plus half an ulp: tie between 0x3ff (odd) and the
  // smallest normal 0x400 (even).
  EXPECT_EQ(F16(0x1p-14 - 0x1p-25), 0x0400u);
  EXPECT_EQ(F16(1023 * 0x1p-24), 0x03ffu);
}

TEST(EncodeFloatTest, OverflowAndSpecials) {
  EXPECT_EQ(F16(65519.0), 0x7bffu);  // Below the midpoint to 65536.
  EXPECT_EQ(F16(65520.0), 0x7c00u);  // Midpoint: even is "65536" = inf.
  EXPECT_EQ(F16(1e300), 0x7c00u);
  EXPECT_EQ(F16(-1e300), 0xfc00u);
  EXPECT_EQ(F16(kInf), 0x7c00u);
  EXPECT_EQ(F16(-kInf), 0xfc00u);
  EXPECT_EQ(F16(kNaN), 0x7e00u);
  EXPECT_EQ(F16(-kNaN), 0xfe00u);
}

TEST(EncodeFloatTest, F64FormatRoundTrips) {
  for (double d : {1.0 / 3, -1e-310, 5e-324, 1.7976931348623157e308, -0.0}) {
    EXPECT_EQ(EncodeFloat(d, 11, 52), std::bit_cast<uint64_t>(d)) << d;
  }
  // Double subnormals are far below f32's range: they round to zero.
  EXPECT_EQ(EncodeFloat(5e-324, 8, 23), 0u);
  EXPECT_EQ(EncodeFloat(0x1p-150 + 0x1p-170, 8, 23), 1u);
}

TEST(DecodeFloatTest, ValuesOfBitPatterns) {
  EXPECT_EQ(DecodeFloat(0x0001, 5, 10), 0x1p-24);
  EXPECT_EQ(DecodeFloat(0x03ff, 5, 10), 1023 * 0x1p-24);
  EXPECT_EQ(DecodeFloat(0x7bff, 5, 10), 65504.0);
  EXPECT_EQ(DecodeFloat(0xfc00, 5, 10), -kInf);
  EXPECT_TRUE(std::isnan(DecodeFloat(0x7e00, 5, 10)));
  EXPECT_TRUE(std::signbit(DecodeFloat(0x8000, 5, 10)));
  EXPECT_EQ(DecodeFloat(0x3f80, 8, 7), 1.0);
  // Every f16 pattern round-trips through its value.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7c00) == 0x7c00 && (b & 0x3ff)) continue;  // NaN
    ASSERT_EQ(F16(DecodeFloat(b, 5, 10)), b) << std::hex << b;
  }
}

TEST(Bf16Test, RoundToNearestEvenFromF32) {
  EXPECT_EQ(F32ToBf16Bits(1.0f), 0x3f80);
  EXPECT_EQ(F32ToBf16Bits(1.0f + 0x1p-8f), 0x3f80);      // Tie: even.
  EXPECT_EQ(F32ToBf16Bits(1.0f + 3 * 0x1p-8f), 0x3f82);  // Tie: even.
  EXPECT_EQ(F32ToBf16Bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(F32ToBf16Bits(-0.0f), 0x8000);
  EXPECT_EQ(F32ToBf16Bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(F32ToBf16Bits(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(F32ToBf16Bits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(F32ToBf16Bits(1e-40f), 0x0001);  // f32 subnormal -> bf16 subnormal.
  // NaNs stay NaN (quieted), signaling ones included.
  const float snan = std::bit_cast<float>(0x7f800001u);
  EXPECT_EQ(F32ToBf16Bits(snan), 0x7fc0);
  EXPECT_EQ(F32ToBf16Bits(std::bit_cast<float>(0xffc00000u)), 0xffc0);
  EXPECT_EQ(Bf16BitsToF32(0x3f81), 1.0f + 0x1p-7f);
}

TEST(Bf16Test, FromF64RoundsOnce) {
  // Through f32 the 2^-30 would be lost and the tie would round down.
  EXPECT_EQ(F64ToBf16Bits(1.0 + 0x1p-8 + 0x1p-30), 0x3f81);
  EXPECT_EQ(F64ToBf16Bits(1.0 + 0x1p-8), 0x3f80);
  EXPECT_EQ(F64ToBf16Bits(1e300), 0x7f80);
  EXPECT_EQ(F64ToBf16Bits(-kNaN) & 0xffc0, 0xffc0);
}

TEST(F16Test, ConversionsWithF32) {
  EXPECT_EQ(F32ToF16Bits(65520.0f), 0x7c00);
  EXPECT_EQ(F32ToF16Bits(0x1p-25f), 0x0000);
  EXPECT_EQ(F32ToF16Bits(3 * 0x1p-25f), 0x0002);
  EXPECT_EQ(F64ToF16Bits(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);
  EXPECT_EQ(F16BitsToF32(0x0001), 0x1p-24f);
  EXPECT_EQ(F16BitsToF32(0xfc00), -std::numeric_limits<float>::infinity());
  // A NaN payload is widened, not lost.
  EXPECT_EQ(std::bit_cast<uint32_t>(F16BitsToF32(0x7e01)), 0x7fc02000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(F16BitsToF32(0x8000)), 0x80000000u);
}

}  // namespace
}  // namespace trench
