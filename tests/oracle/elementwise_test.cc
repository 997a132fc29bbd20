// Elementwise kernels: hand-checked values, with XLA's edge semantics
// (NaN, -0, INF, INT_MIN, shifts, integer division by zero).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

#include "oracle/kernels.h"
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
constexpr PrimitiveType S32 = PrimitiveType::S32;
constexpr PrimitiveType U32 = PrimitiveType::U32;
constexpr PrimitiveType PRED = PrimitiveType::PRED;
constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();

Literal F32Binary(const std::string& op, std::vector<float> a,
                  std::vector<float> b) {
  const std::string s = "f32[" + std::to_string(a.size()) + "]";
  return RunHlo(OneOp(s, op, {s, s}), {R1(F32, a), R1(F32, b)});
}

Literal S32Binary(const std::string& op, std::vector<int32_t> a,
                  std::vector<int32_t> b) {
  const std::string s = "s32[" + std::to_string(a.size()) + "]";
  return RunHlo(OneOp(s, op, {s, s}), {R1(S32, a), R1(S32, b)});
}

Literal F32Unary(const std::string& op, std::vector<float> a) {
  const std::string s = "f32[" + std::to_string(a.size()) + "]";
  return RunHlo(OneOp(s, op, {s}), {R1(F32, a)});
}

TEST(ElementwiseTest, FloatArithmeticFollowsIeee) {
  ExpectFloats<float>(
      F32Binary("add", {1.5f, kInf, kInf, -0.0f}, {2.25f, 1.0f, -kInf, -0.0f}),
      {3.75f, kInf, kNaN, -0.0f});
  ExpectFloats<float>(F32Binary("subtract", {1.0f, 0.0f}, {3.0f, 0.0f}),
                      {-2.0f, 0.0f});
  ExpectFloats<float>(
      F32Binary("multiply", {3.0f, -0.0f, kInf}, {-2.0f, 5.0f, 0.0f}),
      {-6.0f, -0.0f, kNaN});
  ExpectFloats<float>(
      F32Binary("divide", {1.0f, -1.0f, 0.0f, 7.0f}, {0.0f, 0.0f, 0.0f, 2.0f}),
      {kInf, -kInf, kNaN, 3.5f});
  // fmod: the result has the dividend's sign; x % 0 is NaN for floats.
  ExpectFloats<float>(
      F32Binary("remainder", {-7.0f, 7.0f, 5.5f}, {2.0f, 0.0f, 2.0f}),
      {-1.0f, kNaN, 1.5f});
}

TEST(ElementwiseTest, MaxMinPropagateNaNAndKeepLhsOnTies) {
  ExpectFloats<float>(F32Binary("maximum", {kNaN, 1.0f, 1.0f, -0.0f, 0.0f},
                                {1.0f, kNaN, 2.0f, 0.0f, -0.0f}),
                      {kNaN, kNaN, 2.0f, -0.0f, 0.0f});
  ExpectFloats<float>(F32Binary("minimum", {kNaN, 1.0f, 1.0f, -0.0f, 0.0f},
                                {1.0f, kNaN, 2.0f, 0.0f, -0.0f}),
                      {kNaN, kNaN, 1.0f, -0.0f, 0.0f});
  EXPECT_EQ(Values<int32_t>(S32Binary("maximum", {-3, 4}, {2, -9})),
            (std::vector<int32_t>{2, 4}));
  EXPECT_EQ(Values<int32_t>(S32Binary("minimum", {-3, 4}, {2, -9})),
            (std::vector<int32_t>{-3, -9}));
}

TEST(ElementwiseTest, IntegerDivisionEdgeCases) {
  EXPECT_EQ(Values<int32_t>(S32Binary("divide", {7, -7, 7, kMin32, kMin32},
                                      {-2, 2, 0, -1, 0})),
            (std::vector<int32_t>{-3, -3, -1, kMin32, -1}));
  EXPECT_EQ(Values<int32_t>(
                S32Binary("remainder", {7, -7, 7, kMin32}, {-2, 2, 0, -1})),
            (std::vector<int32_t>{1, -1, 7, 0}));
  // Unsigned x / 0 is all ones; x % 0 is x.
  const std::string u = "u32[2]";
  Literal q = RunHlo(OneOp(u, "divide", {u, u}),
                     {R1<uint32_t>(U32, {7, 0}), R1<uint32_t>(U32, {0, 0})});
  EXPECT_EQ(Values<uint32_t>(q),
            (std::vector<uint32_t>{0xffffffffu, 0xffffffffu}));
  Literal r = RunHlo(OneOp(u, "remainder", {u, u}),
                     {R1<uint32_t>(U32, {7, 9}), R1<uint32_t>(U32, {0, 4})});
  EXPECT_EQ(Values<uint32_t>(r), (std::vector<uint32_t>{7, 1}));
  // s8: -128 / -1 wraps to -128.
  Literal s8 = RunHlo(OneOp("s8[2]", "divide", {"s8[2]", "s8[2]"}),
                      {R1<int8_t>(PrimitiveType::S8, {-128, -128}),
                       R1<int8_t>(PrimitiveType::S8, {-1, 2})});
  EXPECT_EQ(Values<int8_t>(s8), (std::vector<int8_t>{-128, -64}));
}

TEST(ElementwiseTest, IntegerArithmeticWraps) {
  EXPECT_EQ(Values<int32_t>(S32Binary("add", {kMax32, 1}, {1, 2})),
            (std::vector<int32_t>{kMin32, 3}));
  EXPECT_EQ(Values<int32_t>(S32Binary("subtract", {kMin32}, {1})),
            (std::vector<int32_t>{kMax32}));
  EXPECT_EQ(Values<int32_t>(S32Binary("multiply", {65536, -3}, {65536, 4})),
            (std::vector<int32_t>{0, -12}));
  // u16 * u16 must not go through a signed int overflow: 65535^2 mod 2^16.
  Literal m = RunHlo(OneOp("u16[1]", "multiply", {"u16[1]", "u16[1]"}),
                     {R1<uint16_t>(PrimitiveType::U16, {65535}),
                      R1<uint16_t>(PrimitiveType::U16, {65535})});
  EXPECT_EQ(Values<uint16_t>(m), (std::vector<uint16_t>{1}));
}

TEST(ElementwiseTest, ShiftsOutOfRangeFollowXla) {
  EXPECT_EQ(
      Values<int32_t>(S32Binary("shift-left", {1, 1, 1, 3}, {31, 32, -1, 1})),
      (std::vector<int32_t>{kMin32, 0, 0, 6}));
  EXPECT_EQ(Values<int32_t>(
                S32Binary("shift-right-logical", {-8, -8, 16}, {1, 32, -3})),
            (std::vector<int32_t>{0x7ffffffc, 0, 0}));
  EXPECT_EQ(Values<int32_t>(S32Binary("shift-right-arithmetic", {-8, -8, 8, -1},
                                      {1, 40, 40, -1})),
            (std::vector<int32_t>{-4, -1, 0, -1}));
  // Unsigned arithmetic shift fills with the top bit.
  Literal u8 =
      RunHlo(OneOp("u8[2]", "shift-right-arithmetic", {"u8[2]", "u8[2]"}),
             {R1<uint8_t>(PrimitiveType::U8, {0x80, 0x80}),
              R1<uint8_t>(PrimitiveType::U8, {1, 8})});
  EXPECT_EQ(Values<uint8_t>(u8), (std::vector<uint8_t>{0xc0, 0xff}));
}

TEST(ElementwiseTest, PowerIntegerAndFloat) {
  // 3^40 mod 2^32 = 689956897 (wraps); negative exponents: 1 only for 1.
  EXPECT_EQ(Values<int32_t>(S32Binary("power", {2, 2, 1, -1, 0, 3, -2},
                                      {10, -1, -5, -1, 0, 40, 3})),
            (std::vector<int32_t>{1024, 0, 1, 0, 1, 689956897, -8}));
  ExpectFloats<float>(F32Binary("power", {0.0f, -8.0f, 1.0f, kNaN, 2.0f},
                                {0.0f, 1.0f / 3, kNaN, 0.0f, -1.0f}),
                      {1.0f, kNaN, 1.0f, 1.0f, 0.5f});
}

TEST(ElementwiseTest, Atan2Quadrants) {
  const float pi = std::numbers::pi_v<float>;
  ExpectFloats<float>(
      F32Binary("atan2", {1.0f, 0.0f, -0.0f}, {1.0f, -1.0f, -1.0f}),
      {pi / 4, pi, -pi});
}

TEST(ElementwiseTest, SignAbsNegateEdgeCases) {
  ExpectFloats<float>(F32Unary("sign", {-2.0f, -0.0f, 0.0f, kNaN, kInf}),
                      {-1.0f, -0.0f, 0.0f, kNaN, 1.0f});
  ExpectFloats<float>(F32Unary("abs", {-2.0f, -0.0f, -kInf}),
                      {2.0f, 0.0f, kInf});
  ExpectFloats<float>(F32Unary("negate", {0.0f, 1.0f}), {-0.0f, -1.0f});
  const std::string s = "s32[3]";
  EXPECT_EQ(Values<int32_t>(RunHlo(OneOp(s, "abs", {s}),
                                   {R1<int32_t>(S32, {kMin32, -5, 5})})),
            (std::vector<int32_t>{kMin32, 5, 5}));
  EXPECT_EQ(Values<int32_t>(RunHlo(OneOp(s, "negate", {s}),
                                   {R1<int32_t>(S32, {kMin32, -5, 0})})),
            (std::vector<int32_t>{kMin32, 5, 0}));
  EXPECT_EQ(Values<int32_t>(
                RunHlo(OneOp(s, "sign", {s}), {R1<int32_t>(S32, {-5, 0, 7})})),
            (std::vector<int32_t>{-1, 0, 1}));
}

TEST(ElementwiseTest, RoundingOps) {
  const std::vector<float> in = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, -1.2f};
  ExpectFloats<float>(F32Unary("round-nearest-afz", in),
                      {1.0f, 2.0f, 3.0f, -1.0f, -3.0f, -1.0f});
  ExpectFloats<float>(F32Unary("round-nearest-even", in),
                      {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, -1.0f});
  ExpectFloats<float>(F32Unary("floor", in),
                      {0.0f, 1.0f, 2.0f, -1.0f, -3.0f, -2.0f});
  ExpectFloats<float>(F32Unary("ceil", in),
                      {1.0f, 2.0f, 3.0f, -0.0f, -2.0f, -1.0f});
}

TEST(ElementwiseTest, TranscendentalsAtExactPoints) {
  ExpectFloats<float>(F32Unary("exponential", {0.0f, -kInf, kInf}),
                      {1.0f, 0.0f, kInf});
  ExpectFloats<float>(F32Unary("exponential-minus-one", {0.0f, -0.0f, -kInf}),
                      {0.0f, -0.0f, -1.0f});
  ExpectFloats<float>(F32Unary("log", {1.0f, 0.0f, -1.0f, kInf}),
                      {0.0f, -kInf, kNaN, kInf});
  ExpectFloats<float>(F32Unary("log-plus-one", {0.0f, -1.0f, -2.0f}),
                      {0.0f, -kInf, kNaN});
  ExpectFloats<float>(F32Unary("sqrt", {4.0f, -0.0f, -1.0f}),
                      {2.0f, -0.0f, kNaN});
  ExpectFloats<float>(F32Unary("rsqrt", {4.0f, 0.0f, -0.0f}),
                      {0.5f, kInf, -kInf});
  ExpectFloats<float>(F32Unary("cbrt", {-27.0f, 8.0f, -0.0f}),
                      {-3.0f, 2.0f, -0.0f});
  ExpectFloats<float>(F32Unary("tanh", {0.0f, kInf, -kInf}),
                      {0.0f, 1.0f, -1.0f});
  ExpectFloats<float>(F32Unary("logistic", {0.0f, kInf, -kInf, kNaN}),
                      {0.5f, 1.0f, 0.0f, kNaN});
  ExpectFloats<float>(F32Unary("sine", {0.0f, -0.0f}), {0.0f, -0.0f});
  ExpectFloats<float>(F32Unary("cosine", {0.0f, kInf}), {1.0f, kNaN});
  ExpectFloats<float>(F32Unary("tan", {0.0f}), {0.0f});
  ExpectFloats<float>(F32Unary("erf", {0.0f, kInf, -kInf}),
                      {0.0f, 1.0f, -1.0f});
  // Away from exact points: within an ulp or two of the true values.
  Literal e = F32Unary("exponential", {1.0f});
  EXPECT_NEAR(Values<float>(e)[0], 2.7182817f, 3e-7f);
  Literal erf = F32Unary("erf", {0.5f});
  EXPECT_NEAR(Values<float>(erf)[0], 0.52049988f, 1e-7f);
}

TEST(ElementwiseTest, IsFinite) {
  Literal r = RunHlo(OneOp("pred[4]", "is-finite", {"f32[4]"}),
                     {R1(F32, std::vector<float>{1.0f, kInf, -kInf, kNaN})});
  EXPECT_EQ(Values<uint8_t>(r), (std::vector<uint8_t>{1, 0, 0, 0}));
}

TEST(ElementwiseTest, CompareFloatIsUnorderedForNaN) {
  const std::vector<float> a = {kNaN, -0.0f, 1.0f};
  const std::vector<float> b = {kNaN, 0.0f, 2.0f};
  auto cmp = [&](const std::string& dir) {
    return Values<uint8_t>(RunHlo(
        OneOp("pred[3]", "compare", {"f32[3]", "f32[3]"}, "direction=" + dir),
        {R1(F32, a), R1(F32, b)}));
  };
  EXPECT_EQ(cmp("EQ"), (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(cmp("NE"), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(cmp("LT"), (std::vector<uint8_t>{0, 0, 1}));
  EXPECT_EQ(cmp("LE"), (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_EQ(cmp("GT"), (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_EQ(cmp("GE"), (std::vector<uint8_t>{0, 1, 0}));
}

TEST(ElementwiseTest, CompareTotalOrder) {
  const float neg_nan = -kNaN;
  const std::vector<float> a = {neg_nan, -0.0f, 0.0f, kInf, kNaN, -kInf};
  const std::vector<float> b = {-kInf, 0.0f, 0.0f, kNaN, kNaN, -1.0f};
  auto cmp = [&](const std::string& dir) {
    return Values<uint8_t>(
        RunHlo(OneOp("pred[6]", "compare", {"f32[6]", "f32[6]"},
                     "direction=" + dir + ", type=TOTALORDER"),
               {R1(F32, a), R1(F32, b)}));
  };
  EXPECT_EQ(cmp("LT"), (std::vector<uint8_t>{1, 1, 0, 1, 0, 1}));
  EXPECT_EQ(cmp("EQ"), (std::vector<uint8_t>{0, 0, 1, 0, 1, 0}));
}

TEST(ElementwiseTest, CompareIntegersBySignedness) {
  Literal u =
      RunHlo(OneOp("pred[2]", "compare", {"u32[2]", "u32[2]"}, "direction=GT"),
             {R1<uint32_t>(U32, {0xffffffffu, 1}), R1<uint32_t>(U32, {1, 1})});
  EXPECT_EQ(Values<uint8_t>(u), (std::vector<uint8_t>{1, 0}));
  Literal s =
      RunHlo(OneOp("pred[2]", "compare", {"s32[2]", "s32[2]"}, "direction=LT"),
             {R1<int32_t>(S32, {-1, 1}), R1<int32_t>(S32, {1, 1})});
  EXPECT_EQ(Values<uint8_t>(s), (std::vector<uint8_t>{1, 0}));
}

TEST(ElementwiseTest, SelectWithScalarAndArrayPredicate) {
  Literal a = RunHlo(OneOp("s32[3]", "select", {"pred[3]", "s32[3]", "s32[3]"}),
                     {R1<uint8_t>(PRED, {1, 0, 1}), R1<int32_t>(S32, {1, 2, 3}),
                      R1<int32_t>(S32, {4, 5, 6})});
  EXPECT_EQ(Values<int32_t>(a), (std::vector<int32_t>{1, 5, 3}));
  Literal s = RunHlo(OneOp("s32[3]", "select", {"pred[]", "s32[3]", "s32[3]"}),
                     {R0<uint8_t>(PRED, 0), R1<int32_t>(S32, {1, 2, 3}),
                      R1<int32_t>(S32, {4, 5, 6})});
  EXPECT_EQ(Values<int32_t>(s), (std::vector<int32_t>{4, 5, 6}));
}

TEST(ElementwiseTest, ClampScalarBoundsAndNaN) {
  // operation_semantics.md's example.
  Literal s = RunHlo(
      OneOp("s32[3]", "clamp", {"s32[]", "s32[3]", "s32[]"}),
      {R0<int32_t>(S32, 0), R1<int32_t>(S32, {-1, 5, 9}), R0<int32_t>(S32, 6)});
  EXPECT_EQ(Values<int32_t>(s), (std::vector<int32_t>{0, 5, 6}));
  Literal f = RunHlo(OneOp("f32[4]", "clamp", {"f32[4]", "f32[4]", "f32[4]"}),
                     {R1(F32, std::vector<float>{0.0f, kNaN, 0.0f, -1.0f}),
                      R1(F32, std::vector<float>{kNaN, 0.5f, 0.5f, 3.0f}),
                      R1(F32, std::vector<float>{1.0f, 1.0f, kNaN, 2.0f})});
  ExpectFloats<float>(f, {kNaN, kNaN, kNaN, 2.0f});
}

TEST(ElementwiseTest, BitOps) {
  const std::string s = "s32[4]";
  Literal in = R1<int32_t>(S32, {0, 1, -1, 0x00010000});
  EXPECT_EQ(Values<int32_t>(RunHlo(OneOp(s, "count-leading-zeros", {s}), {in})),
            (std::vector<int32_t>{32, 31, 0, 15}));
  EXPECT_EQ(Values<int32_t>(RunHlo(OneOp(s, "popcnt", {s}), {in})),
            (std::vector<int32_t>{0, 1, 32, 1}));
  EXPECT_EQ(Values<int32_t>(RunHlo(OneOp(s, "not", {s}), {in})),
            (std::vector<int32_t>{-1, -2, 0, ~0x00010000}));
  Literal u8 = RunHlo(OneOp("u8[3]", "count-leading-zeros", {"u8[3]"}),
                      {R1<uint8_t>(PrimitiveType::U8, {0, 1, 0x80})});
  EXPECT_EQ(Values<uint8_t>(u8), (std::vector<uint8_t>{8, 7, 0}));
  EXPECT_EQ(Values<int32_t>(S32Binary("and", {12, -1}, {10, 5})),
            (std::vector<int32_t>{8, 5}));
  EXPECT_EQ(Values<int32_t>(S32Binary("or", {12, 0}, {10, 0})),
            (std::vector<int32_t>{14, 0}));
  EXPECT_EQ(Values<int32_t>(S32Binary("xor", {12, -1}, {10, 0})),
            (std::vector<int32_t>{6, -1}));
}

TEST(ElementwiseTest, PredLogic) {
  const std::string p = "pred[4]";
  Literal a = R1<uint8_t>(PRED, {0, 0, 1, 1});
  Literal b = R1<uint8_t>(PRED, {0, 1, 0, 1});
  EXPECT_EQ(Values<uint8_t>(RunHlo(OneOp(p, "and", {p, p}), {a, b})),
            (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(Values<uint8_t>(RunHlo(OneOp(p, "or", {p, p}), {a, b})),
            (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(Values<uint8_t>(RunHlo(OneOp(p, "xor", {p, p}), {a, b})),
            (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(Values<uint8_t>(RunHlo(OneOp(p, "not", {p}), {a})),
            (std::vector<uint8_t>{1, 1, 0, 0}));
}

TEST(ElementwiseTest, ComplexBasics) {
  Literal c = RunHlo(OneOp("c64[2]", "complex", {"f32[2]", "f32[2]"}),
                     {R1(F32, std::vector<float>{3.0f, 1.0f}),
                      R1(F32, std::vector<float>{4.0f, -2.0f})});
  ExpectFloats<float>(c, {3.0f, 4.0f, 1.0f, -2.0f});
  ExpectFloats<float>(RunHlo(OneOp("f32[2]", "abs", {"c64[2]"}), {c}),
                      {5.0f, std::sqrt(5.0f)});
  ExpectFloats<float>(RunHlo(OneOp("f32[2]", "imag", {"c64[2]"}), {c}),
                      {4.0f, -2.0f});
  // (3+4i)(3+4i) = -7+24i; (1-2i)^2 = -3-4i.
  ExpectFloats<float>(
      RunHlo(OneOp("c64[2]", "multiply", {"c64[2]", "c64[2]"}), {c, c}),
      {-7.0f, 24.0f, -3.0f, -4.0f});
  Status st = RunStatus(OneOp("c64[2]", "exponential", {"c64[2]"}), {c});
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented) << st.ToString();
}

TEST(ElementwiseTest, IotaAlongEachDimension) {
  auto iota = [](const std::string& shape, int dim) {
    return RunHlo("HloModule m\nENTRY e {\n  ROOT i = " + shape +
                      " iota(), iota_dimension=" + std::to_string(dim) +
                      "\n}\n",
                  {});
  };
  EXPECT_EQ(Values<int32_t>(iota("s32[2,3]", 1)),
            (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(Values<int32_t>(iota("s32[2,3]", 0)),
            (std::vector<int32_t>{0, 0, 0, 1, 1, 1}));
  ExpectFloats<float>(iota("f32[3]", 0), {0.0f, 1.0f, 2.0f});
  EXPECT_EQ(Values<uint16_t>(iota("bf16[3]", 0)),
            (std::vector<uint16_t>{0x0000, 0x3f80, 0x4000}));
  EXPECT_EQ(Values<uint8_t>(iota("pred[3]", 0)),
            (std::vector<uint8_t>{0, 1, 1}));
}

TEST(ElementwiseTest, KernelRejectsBadOperands) {
  auto p0 = HloInstruction::CreateParameter(0, Shape(F32, {2}), "p0");
  auto p1 = HloInstruction::CreateParameter(1, Shape(F32, {3}), "p1");
  auto add = HloInstruction::Create(HloOpcode::kAdd, Shape(F32, {2}),
                                    {p0.get(), p1.get()}, "sum");
  Literal a(Shape(F32, {2})), b(Shape(F32, {3}));
  const Literal* ops[] = {&a, &b};
  auto r = oracle::EvalElementwise(*add, ops);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("%sum"), std::string::npos);
  // real of c64 is f32; a wider declared result is rejected, not written.
  Literal c(Shape(PrimitiveType::C64, {2}));
  Status real = RunStatus(OneOp("f64[2]", "real", {"c64[2]"}), {c});
  EXPECT_EQ(real.code(), StatusCode::kInvalidArgument) << real.ToString();
  // A float-only op on integers is an error, not a crash.
  Status st = RunStatus(OneOp("s32[2]", "exponential", {"s32[2]"}),
                        {R1<int32_t>(S32, {1, 2})});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
}

TEST(ElementwiseTest, ThreadedLargeArrayMatchesSequential) {
  const int64_t n = 1 << 18;
  std::vector<float> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i) * 0.25f - 1000.0f;
    b[i] = static_cast<float>(n - i) * 0.5f;
  }
  const std::string s = "f32[" + std::to_string(n) + "]";
  const std::string hlo =
      "HloModule m\nENTRY e {\n  a = " + s + " parameter(0)\n  b = " + s +
      " parameter(1)\n  m = " + s + " multiply(a, b)\n  t = " + s +
      " tanh(m)\n  ROOT r = " + s + " add(t, a)\n}\n";
  Literal seq = RunHlo(hlo, {R1(F32, a), R1(F32, b)}, {.threads = 1});
  Literal par = RunHlo(hlo, {R1(F32, a), R1(F32, b)}, {.threads = 4});
  EXPECT_TRUE(seq == par);
  const std::vector<float> got = Values<float>(par);
  for (int64_t i : {int64_t{0}, n / 3, n - 1}) {
    EXPECT_EQ(got[i], std::tanh(a[i] * b[i]) + a[i]) << i;
  }
}

}  // namespace
}  // namespace trench
