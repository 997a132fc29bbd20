// dot: general dimension numbers, mixed types, accumulation, and the
// blocked kernel against a naive loop.
#include <gtest/gtest.h>

#include <random>

#include "tests/oracle/oracle_test_util.h"

namespace trench {
namespace {

using testing::ExpectFloats;
using testing::Lit;
using testing::NaiveMatmul;
using testing::OneOp;
using testing::R1;
using testing::RunStatus;
using testing::Values;

constexpr PrimitiveType F32 = PrimitiveType::F32;
constexpr PrimitiveType S32 = PrimitiveType::S32;

Literal Eval(const std::string& hlo, std::vector<Literal> args,
             int threads = 0) {
  EvaluatorOptions o;
  o.threads = threads;
  return testing::Run(hlo, std::move(args), o);
}

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

TEST(DotTest, MatrixProductByHand) {
  // [[1,2,3],[4,5,6]] x [[1,0],[0,1],[1,1]] = [[4,5],[10,11]].
  ExpectFloats<float>(
      Eval(OneOp("f32[2,2]", "dot", {"f32[2,3]", "f32[3,2]"},
                 "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
           {Lit(F32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6}),
            Lit(F32, {3, 2}, std::vector<float>{1, 0, 0, 1, 1, 1})}),
      {4, 5, 10, 11});
  // Vector dot and outer product (no contracting dims).
  ExpectFloats<float>(
      Eval(OneOp("f32[]", "dot", {"f32[3]", "f32[3]"},
                 "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
           {R1(F32, std::vector<float>{1, 2, 3}),
            R1(F32, std::vector<float>{4, 5, 6})}),
      {32});
  ExpectFloats<float>(Eval(OneOp("f32[2,2]", "dot", {"f32[2]", "f32[2]"}),
                           {R1(F32, std::vector<float>{1, 2}),
                            R1(F32, std::vector<float>{3, 4})}),
                      {3, 4, 6, 8});
}

TEST(DotTest, AccumulatesInF64AndRoundsOnce) {
  ExpectFloats<float>(
      Eval(OneOp("f32[]", "dot", {"f32[3]", "f32[3]"},
                 "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
           {R1(F32, std::vector<float>{1e8f, 1.0f, -1e8f}),
            R1(F32, std::vector<float>{1, 1, 1})}),
      {1.0f});
}

TEST(DotTest, MixedAndIntegerTypes) {
  // s8 x s8 -> s32: exact widening, no s8 overflow.
  EXPECT_EQ(Values<int32_t>(Eval(
                OneOp("s32[]", "dot", {"s8[2]", "s8[2]"},
                      "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
                {R1(PrimitiveType::S8, std::vector<int8_t>{-128, 127}),
                 R1(PrimitiveType::S8, std::vector<int8_t>{-128, 127})})),
            (std::vector<int32_t>{16384 + 16129}));
  // s32 sums wrap modulo 2^32.
  EXPECT_EQ(Values<int32_t>(Eval(
                OneOp("s32[]", "dot", {"s32[2]", "s32[2]"},
                      "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
                {R1(S32, std::vector<int32_t>{65536, 65536}),
                 R1(S32, std::vector<int32_t>{32768, 32768})})),
            (std::vector<int32_t>{0}));
  // bf16 x bf16 -> f32: 1.0078125 * 1.0078125 is exact in f32.
  const uint16_t b = 0x3f81;  // 1.0078125
  ExpectFloats<float>(
      Eval(OneOp("f32[]", "dot", {"bf16[1]", "bf16[1]"},
                 "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
           {R1(PrimitiveType::BF16, std::vector<uint16_t>{b}),
            R1(PrimitiveType::BF16, std::vector<uint16_t>{b})}),
      {1.0078125f * 1.0078125f});
  // bf16 result: f64 sum rounded once to bf16 (1 + 2^-9 rounds to 1).
  EXPECT_EQ(
      Values<uint16_t>(Eval(
          OneOp("bf16[]", "dot", {"bf16[2]", "bf16[2]"},
                "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
          {R1(PrimitiveType::BF16, std::vector<uint16_t>{0x3f80, 0x3b00}),
           R1(PrimitiveType::BF16, std::vector<uint16_t>{0x3f80, 0x3f80})})),
      (std::vector<uint16_t>{0x3f80}));
  // Complex is not supported (an error, not a crash).
  EXPECT_EQ(
      RunStatus(OneOp("c64[]", "dot", {"c64[2]", "c64[2]"},
                      "lhs_contracting_dims={0}, "
                      "rhs_contracting_dims={0}"),
                {Lit(PrimitiveType::C64, {2}, std::vector<uint64_t>{0, 0}),
                 Lit(PrimitiveType::C64, {2}, std::vector<uint64_t>{0, 0})})
          .code(),
      StatusCode::kUnimplemented);
}

TEST(DotTest, ZeroSizedContractionGivesZeros) {
  ExpectFloats<float>(
      Eval(OneOp("f32[2,2]", "dot", {"f32[2,0]", "f32[0,2]"},
                 "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
           {Lit(F32, {2, 0}, std::vector<float>{}),
            Lit(F32, {0, 2}, std::vector<float>{})}),
      {0, 0, 0, 0});
  EXPECT_FALSE(RunStatus(OneOp("f32[2,2]", "dot", {"f32[2,3]", "f32[2,2]"},
                               "lhs_contracting_dims={1}, "
                               "rhs_contracting_dims={0}"),
                         {Lit(F32, {2, 3}, std::vector<float>(6)),
                          Lit(F32, {2, 2}, std::vector<float>(4))})
                   .ok());
}

TEST(DotTest, BlockedKernelMatchesNaiveLoop) {
  // Odd sizes: partial micro-kernel tiles and two k blocks; one and two
  // threads must agree bit for bit with the naive f64 loop.
  const int64_t m = 67, k = 300, n = 19;
  const std::vector<float> a = Random(m * k, 1), b = Random(k * n, 2);
  const std::vector<float> ref = NaiveMatmul(a, b, m, k, n);
  for (int threads : {1, 2}) {
    ExpectFloats<float>(
        Eval(OneOp("f32[67,19]", "dot", {"f32[67,300]", "f32[300,19]"},
                   "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
             {Lit(F32, {m, k}, a), Lit(F32, {k, n}, b)}, threads),
        ref);
  }
}

TEST(DotTest, GeneralDimensionNumbersMatchNaiveLoop) {
  // lhs [B=2, K1=3, M=4, K2=5], rhs [K2=5, N=6, B=2, K1=3];
  // contracting lhs {3,1} with rhs {0,3} (that order), batch lhs 0 / rhs 2.
  const std::vector<float> a = Random(2 * 3 * 4 * 5, 3);
  const std::vector<float> b = Random(5 * 6 * 2 * 3, 4);
  std::vector<float> ref(2 * 4 * 6);
  for (int bi = 0; bi < 2; ++bi) {
    for (int mi = 0; mi < 4; ++mi) {
      for (int ni = 0; ni < 6; ++ni) {
        double s = 0;
        // Contracting index order: (k2, k1), last varying fastest.
        for (int k2 = 0; k2 < 5; ++k2) {
          for (int k1 = 0; k1 < 3; ++k1) {
            s += static_cast<double>(a[((bi * 3 + k1) * 4 + mi) * 5 + k2]) *
                 b[((k2 * 6 + ni) * 2 + bi) * 3 + k1];
          }
        }
        ref[(bi * 4 + mi) * 6 + ni] = static_cast<float>(s);
      }
    }
  }
  ExpectFloats<float>(
      Eval(OneOp("f32[2,4,6]", "dot", {"f32[2,3,4,5]", "f32[5,6,2,3]"},
                 "lhs_batch_dims={0}, lhs_contracting_dims={3,1}, "
                 "rhs_batch_dims={2}, rhs_contracting_dims={0,3}"),
           {Lit(F32, {2, 3, 4, 5}, a), Lit(F32, {5, 6, 2, 3}, b)}),
      ref);
}

}  // namespace
}  // namespace trench
