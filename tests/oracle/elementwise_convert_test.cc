// convert, bitcast-convert, reduce-precision and the 16-bit float types.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "tests/oracle/oracle_test_util.h"

namespace trench {
namespace {

using testing::ExpectFloats;
using testing::kInf;
using testing::kNaN;
using testing::OneOp;
using testing::R0;
using testing::R1;
using testing::RunHlo;
using testing::RunStatus;
using testing::Values;

constexpr PrimitiveType F32 = PrimitiveType::F32;
constexpr PrimitiveType F64 = PrimitiveType::F64;
constexpr PrimitiveType BF16 = PrimitiveType::BF16;
constexpr PrimitiveType F16 = PrimitiveType::F16;
constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();

// convert of `in` (type `from`, rank 1) to `to`.
template <typename Storage>
Literal Convert(const std::string& from, const std::string& to,
                PrimitiveType from_type, const std::vector<Storage>& in) {
  const std::string n = "[" + std::to_string(in.size()) + "]";
  return RunHlo(OneOp(to + n, "convert", {from + n}), {R1(from_type, in)});
}

TEST(ConvertTest, FloatToIntSaturatesAndMapsNaNToZero) {
  Literal r = Convert<float>(
      "f32", "s32", F32,
      {1e10f, -1e10f, kNaN, -2.7f, 2.7f, 2147483520.0f, 2147483648.0f, -kInf});
  EXPECT_EQ(Values<int32_t>(r),
            (std::vector<int32_t>{kMax32, kMin32, 0, -2, 2, 2147483520, kMax32,
                                  kMin32}));
  Literal u8 = Convert<float>("f32", "u8", F32, {-1.0f, 300.0f, 255.9f, -0.5f});
  EXPECT_EQ(Values<uint8_t>(u8), (std::vector<uint8_t>{0, 255, 255, 0}));
  Literal s64 = Convert<double>("f64", "s64", F64, {9.3e18, -9.3e18, 1e18});
  EXPECT_EQ(Values<int64_t>(s64),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min(),
                                  1000000000000000000}));
}

TEST(ConvertTest, IntToIntWrapsAndPredIsNonZero) {
  Literal s8 =
      Convert<int32_t>("s32", "s8", PrimitiveType::S32, {300, -129, 127});
  EXPECT_EQ(Values<int8_t>(s8), (std::vector<int8_t>{44, 127, 127}));
  Literal u32 = Convert<int32_t>("s32", "u32", PrimitiveType::S32, {-1});
  EXPECT_EQ(Values<uint32_t>(u32), (std::vector<uint32_t>{0xffffffffu}));
  Literal p = Convert<float>("f32", "pred", F32, {0.0f, -0.0f, kNaN, 0.5f});
  EXPECT_EQ(Values<uint8_t>(p), (std::vector<uint8_t>{0, 0, 1, 1}));
  // Any nonzero pred byte reads as true.
  Literal f = Convert<uint8_t>("pred", "f32", PrimitiveType::PRED, {0, 1, 7});
  ExpectFloats<float>(f, {0.0f, 1.0f, 1.0f});
}

TEST(ConvertTest, IntToFloatRoundsToNearestEven) {
  ExpectFloats<float>(Convert<int32_t>("s32", "f32", PrimitiveType::S32,
                                       {16777217, 16777219, -16777217}),
                      {16777216.0f, 16777220.0f, -16777216.0f});
  ExpectFloats<float>(
      Convert<uint64_t>("u64", "f32", PrimitiveType::U64, {~uint64_t{0}}),
      {18446744073709551616.0f});
  // bf16 rounds once from the exact integer: 2^62 + 2^54 + 1 is just above
  // the midpoint of 2^62 and 2^62 + 2^55. Going through a double first
  // would drop the +1 and round the tie to even (2^62).
  const int64_t above = (int64_t{1} << 62) + (int64_t{1} << 54) + 1;
  const int64_t tie = (int64_t{1} << 62) + (int64_t{1} << 54);
  Literal b =
      Convert<int64_t>("s64", "bf16", PrimitiveType::S64, {above, tie, -above});
  EXPECT_EQ(Values<uint16_t>(b),
            (std::vector<uint16_t>{0x5e81, 0x5e80, 0xde81}));
  Literal h = Convert<int32_t>("s32", "f16", PrimitiveType::S32,
                               {65519, 65520, 2049, 2051});
  EXPECT_EQ(Values<uint16_t>(h),
            (std::vector<uint16_t>{0x7bff, 0x7c00, 0x6800, 0x6802}));
}

TEST(ConvertTest, ToBf16RoundsToNearestEven) {
  const float max = std::numeric_limits<float>::max();
  Literal b = Convert<float>("f32", "bf16", F32,
                             {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -0.0f, max,
                              1.0f + 0x1p-8f + 0x1p-20f});
  EXPECT_EQ(Values<uint16_t>(b),
            (std::vector<uint16_t>{0x3f80, 0x3f82, 0x8000, 0x7f80, 0x3f81}));
  Literal nan = Convert<float>("f32", "bf16", F32, {kNaN});
  const uint16_t bits = Values<uint16_t>(nan)[0];
  EXPECT_EQ(bits & 0x7f80, 0x7f80);
  EXPECT_NE(bits & 0x007f, 0);
}

TEST(ConvertTest, ToF16RoundsSubnormalsAndOverflows) {
  Literal h = Convert<float>("f32", "f16", F32,
                             {65519.0f, 65520.0f, 0x1p-24f, 0x1p-25f,
                              3 * 0x1p-25f, -0.0f, 1e-10f, -kInf});
  EXPECT_EQ(Values<uint16_t>(h),
            (std::vector<uint16_t>{0x7bff, 0x7c00, 0x0001, 0x0000, 0x0002,
                                   0x8000, 0x0000, 0xfc00}));
  // f64 -> f16 rounds once: 1 + 2^-11 + 2^-40 is above the midpoint. Via
  // f32 it would become the tie 1 + 2^-11 and round down to 1.
  Literal d = Convert<double>("f64", "f16", F64, {1.0 + 0x1p-11 + 0x1p-40});
  EXPECT_EQ(Values<uint16_t>(d), (std::vector<uint16_t>{0x3c01}));
  ExpectFloats<float>(
      Convert<uint16_t>("f16", "f32", F16, {0x0001, 0x7c00, 0x3c08}),
      {0x1p-24f, kInf, 1.0f + 0x1p-7f});
  Literal bh = Convert<uint16_t>("bf16", "f16", BF16, {0x3f81});
  EXPECT_EQ(Values<uint16_t>(bh), (std::vector<uint16_t>{0x3c08}));
}

TEST(ConvertTest, ComplexConversions) {
  Literal c = Convert<float>("f32", "c64", F32, {1.5f, -2.0f});
  ExpectFloats<float>(c, {1.5f, 0.0f, -2.0f, 0.0f});
  Status st = RunStatus(OneOp("f32[2]", "convert", {"c64[2]"}), {c});
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented) << st.ToString();
}

TEST(BitcastConvertTest, SameAndDifferentWidths) {
  Literal f = R1(F32, std::vector<float>{1.0f, -2.0f});
  Literal s = RunHlo(OneOp("s32[2]", "bitcast-convert", {"f32[2]"}), {f});
  EXPECT_EQ(Values<uint32_t>(s),
            (std::vector<uint32_t>{0x3f800000u, 0xc0000000u}));
  // Narrower: a new minor dimension, lowest-addressed byte first.
  Literal bytes = RunHlo(OneOp("u8[2,4]", "bitcast-convert", {"f32[2]"}), {f});
  EXPECT_EQ(Values<uint8_t>(bytes),
            (std::vector<uint8_t>{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}));
  // Wider: the minor dimension is consumed.
  Literal back =
      RunHlo(OneOp("f32[2]", "bitcast-convert", {"u8[2,4]"}), {bytes});
  ExpectFloats<float>(back, {1.0f, -2.0f});
  Literal halves =
      RunHlo(OneOp("u16[2]", "bitcast-convert", {"f32[]"}), {R0(F32, 1.0f)});
  EXPECT_EQ(Values<uint16_t>(halves), (std::vector<uint16_t>{0x0000, 0x3f80}));
  Status bad = RunStatus(OneOp("s32[]", "bitcast-convert", {"u8[3]"}),
                         {R1<uint8_t>(PrimitiveType::U8, {1, 2, 3})});
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument) << bad.ToString();
}

Literal ReducePrecision(const std::vector<float>& in, int e, int m) {
  const std::string s = "f32[" + std::to_string(in.size()) + "]";
  return RunHlo(OneOp(s, "reduce-precision", {s},
                      "exponent_bits=" + std::to_string(e) +
                          ", mantissa_bits=" + std::to_string(m)),
                {R1(F32, in)});
}

TEST(ReducePrecisionTest, F16FormatOnF32) {
  ExpectFloats<float>(
      ReducePrecision({65520.0f, 65504.0f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f,
                       0x1p-15f, -0x1p-15f, 0x1p-14f, kNaN, -kInf},
                      5, 10),
      {kInf, 65504.0f, 1.0f, 1.0f + 0x1p-9f, 0.0f, -0.0f, 0x1p-14f, kNaN,
       -kInf});
}

TEST(ReducePrecisionTest, ZeroMantissaBitsAndNaN) {
  // With no mantissa bits there is no NaN: XLA returns +inf for any NaN.
  // 3 = 1.1b x 2^1 rounds to even at the exponent's last bit: 2.
  ExpectFloats<float>(ReducePrecision({kNaN, -kNaN, 3.0f, 1.4f}, 8, 0),
                      {kInf, kInf, 2.0f, 1.0f});
  // Identity when nothing is reduced.
  ExpectFloats<float>(ReducePrecision({1.0f + 0x1p-23f, 0x1p-149f}, 8, 23),
                      {1.0f + 0x1p-23f, 0x1p-149f});
}

TEST(ReducePrecisionTest, F64AndBf16Inputs) {
  Literal d = RunHlo(OneOp("f64[1]", "reduce-precision", {"f64[1]"},
                           "exponent_bits=8, mantissa_bits=23"),
                     {R1(F64, std::vector<double>{1.0 + 0x1p-24 + 0x1p-50})});
  ExpectFloats<double>(d, {1.0 + 0x1p-23});
  // bf16 2^20 has no room in f16's exponent range: +inf.
  Literal b = RunHlo(OneOp("bf16[1]", "reduce-precision", {"bf16[1]"},
                           "exponent_bits=5, mantissa_bits=10"),
                     {R1<uint16_t>(BF16, {0x4980})});
  EXPECT_EQ(Values<uint16_t>(b), (std::vector<uint16_t>{0x7f80}));
}

TEST(SixteenBitFloatTest, Bf16ComputesInF32AndRoundsOnce) {
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even -> 1.
  // 1 + 3 * 2^-8 is a tie between 1 + 2^-7 and 1 + 2^-6: even -> 1 + 2^-6.
  Literal r = RunHlo(OneOp("bf16[2]", "add", {"bf16[2]", "bf16[2]"}),
                     {R1<uint16_t>(BF16, {0x3f80, 0x3f80}),
                      R1<uint16_t>(BF16, {0x3b80, 0x3c40})});
  EXPECT_EQ(Values<uint16_t>(r), (std::vector<uint16_t>{0x3f80, 0x3f82}));
  Literal m = RunHlo(OneOp("bf16[2]", "maximum", {"bf16[2]", "bf16[2]"}),
                     {R1<uint16_t>(BF16, {0x7fc0, 0x3f80}),
                      R1<uint16_t>(BF16, {0x3f80, 0x4000})});
  const std::vector<uint16_t> mv = Values<uint16_t>(m);
  EXPECT_EQ(mv[0] & 0x7fc0, 0x7fc0);  // NaN
  EXPECT_EQ(mv[1], 0x4000);
}

TEST(SixteenBitFloatTest, F16SubnormalsAndOverflow) {
  // 2^-14 * 2^-10 = 2^-24, the smallest subnormal; 2^-14 * 2^-11 = 2^-25 is
  // a tie between 0 and 2^-24: even -> 0.
  Literal r = RunHlo(OneOp("f16[2]", "multiply", {"f16[2]", "f16[2]"}),
                     {R1<uint16_t>(F16, {0x0400, 0x0400}),
                      R1<uint16_t>(F16, {0x1400, 0x1000})});
  EXPECT_EQ(Values<uint16_t>(r), (std::vector<uint16_t>{0x0001, 0x0000}));
  Literal o =
      RunHlo(OneOp("f16[1]", "add", {"f16[1]", "f16[1]"}),
             {R1<uint16_t>(F16, {0x7b53}), R1<uint16_t>(F16, {0x7b53})});
  EXPECT_EQ(Values<uint16_t>(o), (std::vector<uint16_t>{0x7c00}));
  // exp in f32 then one rounding: exp(0) = 1 exactly.
  Literal e = RunHlo(OneOp("f16[1]", "exponential", {"f16[1]"}),
                     {R1<uint16_t>(F16, {0x0000})});
  EXPECT_EQ(Values<uint16_t>(e), (std::vector<uint16_t>{0x3c00}));
}

}  // namespace
}  // namespace trench
