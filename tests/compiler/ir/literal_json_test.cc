#include "compiler/ir/literal_json.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <random>

namespace trench {
namespace {

Literal FromText(std::string_view text) {
  auto j = ParseJson(text);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  auto lit = LiteralFromJson(*j);
  EXPECT_TRUE(lit.ok()) << lit.status().ToString();
  return lit.ok() ? std::move(*lit) : Literal();
}

std::string Error(std::string_view text) {
  auto j = ParseJson(text);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  auto lit = LiteralFromJson(*j);
  EXPECT_FALSE(lit.ok());
  return lit.ok() ? "" : lit.status().message();
}

TEST(LiteralJsonTest, ReadsArraysOfEveryKind) {
  Literal f = FromText(
      R"({"dtype": "f32", "shape": [2, 2], "values": [1.5, "inf", "-inf", "nan"]})");
  ASSERT_EQ(f.shape().ToString(), "f32[2,2]");
  EXPECT_EQ(f.data<float>()[0], 1.5f);
  EXPECT_TRUE(std::isinf(f.data<float>()[1]) && f.data<float>()[1] > 0);
  EXPECT_TRUE(std::isinf(f.data<float>()[2]) && f.data<float>()[2] < 0);
  EXPECT_TRUE(std::isnan(f.data<float>()[3]));
  Literal p =
      FromText(R"({"dtype": "pred", "shape": [2], "values": [true, false]})");
  EXPECT_EQ(p.data<bool>()[0], true);
  Literal u = FromText(
      R"({"dtype": "u64", "shape": [1], "values": [18446744073709551615]})");
  EXPECT_EQ(u.data<uint64_t>()[0], UINT64_MAX);
  Literal s = FromText(
      R"({"dtype": "s64", "shape": [], "values": [-9007199254740993]})");
  EXPECT_EQ(s.data<int64_t>()[0], -9007199254740993);
  Literal c =
      FromText(R"({"dtype": "c64", "shape": [1], "values": [[1.5, -2]]})");
  EXPECT_EQ(c.data<c64>()[0], c64(1.5f, -2.0f));
  Literal t = FromText(
      R"({"tuple": [{"dtype": "s8", "shape": [], "values": [-128]}, {"tuple": []}]})");
  ASSERT_TRUE(t.shape().IsTuple());
  EXPECT_EQ(t.shape().ToString(), "(s8[], ())");
}

TEST(LiteralJsonTest, RoundsDecimalsOnceToTheElementType) {
  // bf16(0.35) is 0x3eb3 (RNE of 0.35, as the C++ bfloat16 constructor).
  Literal b = FromText(R"({"dtype": "bf16", "shape": [], "values": [0.35]})");
  EXPECT_EQ(b.data<bf16>()[0].bits, 0x3eb3);
  Literal h = FromText(R"({"dtype": "f16", "shape": [], "values": [0.1]})");
  EXPECT_EQ(h.data<f16>()[0].bits, 0x2e66);
  // 1 + 2^-8 is the midpoint between bf16 1.0 and 1.0078125; a decimal a
  // hair above it is exactly that double, so decimal->double->bf16 would
  // round to even (1.0). The correct result is 1.0078125.
  Literal above = FromText(
      R"({"dtype": "bf16", "shape": [2], "values": [1.00390625000000000000001, 1.00390625]})");
  EXPECT_EQ(above.data<bf16>()[0].bits, 0x3f81);
  EXPECT_EQ(above.data<bf16>()[1].bits, 0x3f80);  // The tie itself: even.
  // Negative, above the f16 midpoint in magnitude: -1.0009765625.
  Literal neg = FromText(
      R"({"dtype": "f16", "shape": [1], "values": [-1.00048828125000000000001]})");
  EXPECT_EQ(neg.data<f16>()[0].bits, 0xbc01);
  // Just below the midpoint of 1.0078125 (odd) and 1.015625 (even): the
  // double is the midpoint, which would round to even; correct is odd.
  Literal below = FromText(
      R"({"dtype": "bf16", "shape": [1], "values": [1.01171874999999999999999]})");
  EXPECT_EQ(below.data<bf16>()[0].bits, 0x3f81);
  // Integers for float types and overflow to infinity.
  Literal big =
      FromText(R"({"dtype": "f16", "shape": [2], "values": [3, 70000]})");
  EXPECT_EQ(big.data<f16>()[0].bits, 0x4200);
  EXPECT_EQ(big.data<f16>()[1].bits, 0x7c00);
}

TEST(LiteralJsonTest, F32MatchesStrtofOnRandomDecimals) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    // Random 9..20 digit decimals with random exponents.
    std::string text = std::to_string(rng() % 1000000000) + "." +
                       std::to_string(rng()) + "e" +
                       std::to_string(static_cast<int>(rng() % 80) - 40);
    auto bits = DecimalToFloatBits(text, 8, 23);
    ASSERT_TRUE(bits.ok());
    EXPECT_EQ(*bits,
              std::bit_cast<uint32_t>(std::strtof(text.c_str(), nullptr)))
        << text;
  }
}

TEST(LiteralJsonTest, WritesAndReadsBack) {
  Literal lit(Shape(PrimitiveType::F32, {3}));
  lit.mutable_data<float>()[0] = 0.1f;
  lit.mutable_data<float>()[1] = -INFINITY;
  lit.mutable_data<float>()[2] = 3.0f;
  EXPECT_EQ(LiteralToJson(lit).Dump(),
            R"({"dtype":"f32","shape":[3],"values":[0.1,"-inf",3.0]})");
  Literal b(Shape(PrimitiveType::BF16, {2}));
  b.mutable_data<bf16>()[0] = bf16(0.35f);
  b.mutable_data<bf16>()[1] = bf16::FromBits(0x0001);  // Subnormal.
  Literal c(Shape(PrimitiveType::C128, {1}));
  c.mutable_data<c128>()[0] = c128(0.1, -1e300);
  Literal u(Shape(PrimitiveType::U64, {1}));
  u.mutable_data<uint64_t>()[0] = UINT64_MAX;
  Literal all = Literal::Tuple({std::move(lit), std::move(b), std::move(c),
                                std::move(u), Literal(Shape::Token())});
  const std::string text = LiteralToJson(all).Dump();
  Literal back = FromText(text);
  EXPECT_EQ(back, all) << text;
}

TEST(LiteralJsonTest, ErrorsNameTheProblem) {
  EXPECT_EQ(Error(R"({"dtype": "f33", "shape": [], "values": [1]})"),
            "unknown dtype \"f33\"");
  EXPECT_EQ(Error(R"({"dtype": "f32", "shape": [2, 3], "values": [1]})"),
            "expected 6 values for shape f32[2,3], got 1");
  EXPECT_EQ(Error(R"({"dtype": "s8", "shape": [1], "values": [300]})"),
            "values[0]: expected an integer in s8 range, got 300");
  EXPECT_EQ(Error(R"({"dtype": "u8", "shape": [1], "values": [-1]})"),
            "values[0]: expected an integer in u8 range, got -1");
  EXPECT_EQ(Error(R"({"dtype": "s32", "shape": [1], "values": [1.5]})"),
            "values[0]: expected an integer in s32 range, got 1.5");
  EXPECT_EQ(Error(R"({"dtype": "f32", "shape": [1], "values": ["x"]})"),
            "values[0]: expected a number, \"inf\", \"-inf\" or \"nan\", got "
            "\"x\"");
  EXPECT_EQ(Error(R"({"dtype": "pred", "shape": [1], "values": [1]})"),
            "values[0]: expected true or false");
  EXPECT_EQ(Error(R"({"dtype": "c64", "shape": [1], "values": [1]})"),
            "values[0]: expected a [re, im] pair");
  EXPECT_EQ(Error(R"({"dtype": "f32", "shape": [-1], "values": []})"),
            "shape[0]: expected a non-negative integer");
  EXPECT_EQ(
      Error(
          R"({"dtype": "f32", "shape": [4294967296, 4294967296], "values": []})"),
      "shape f32[4294967296,4294967296] is too large");
  EXPECT_EQ(Error(R"({"tuple": [{"shape": []}]})"),
            "tuple[0]: expected \"dtype\" or \"tuple\"");
  EXPECT_EQ(Error("[1]"), "expected a literal object");
}

}  // namespace
}  // namespace trench
