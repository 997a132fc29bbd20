// The numerics contract across ops: data movement carries bounds, control
// flow propagates them, sort/reduce rules, and robustness (bounds are never
// negative or NaN; malformed inputs are errors).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/oracle/numerics_test_util.h"

namespace trench {
namespace {

using testing::Allowed;
using testing::Bounds;
using testing::BoundsStatus;
using testing::ExpectFloats;
using testing::Lit;
using testing::R0;
using testing::R1;
using testing::Uniform;

constexpr PrimitiveType F32 = PrimitiveType::F32;
constexpr PrimitiveType S32 = PrimitiveType::S32;

const char* kAdd =
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = "
    "f32[] add(a, b)\n}\n\n";

TEST(NumericsOpsTest, DataMovementCarriesBounds) {
  // s = a * b has a rounding bound per element; moving it around moves the
  // bounds with the values.
  const std::string hlo =
      "HloModule m\n\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[2,3] "
      "parameter(1)\n  i = s32[] parameter(2)\n  s = f32[2,3] multiply(a, b)\n"
      "  t = f32[3,2] transpose(s), dimensions={1,0}\n  r = f32[3,2] "
      "reverse(t), dimensions={0}\n  z = s32[] constant(0)\n  d = f32[1,2] "
      "dynamic-slice(r, i, z), dynamic_slice_sizes={1,2}\n  cc = f32[2,2] "
      "concatenate(d, d), "
      "dimensions={0}\n  ROOT c = f32[4] reshape(cc)\n}\n";
  // Only element (1, 2) of s is inexact (0.1 * 3); the rest are exact.
  const Literal a = Lit(F32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 0.1f});
  const Literal b = Lit(F32, {2, 3}, std::vector<float>{1, 1, 1, 1, 1, 3});
  // r = reverse(transpose(s)): row 0 of r is column 2 of s = {3, 0.1*3}.
  const BoundedResult r = Bounds(hlo, {a, b, R0(S32, int32_t{0})});
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_LT(Allowed(r, 0), 1e-30);
  EXPECT_GT(Allowed(r, 1), 1e-9);
  EXPECT_LT(Allowed(r, 2), 1e-30);
  EXPECT_GT(Allowed(r, 3), 1e-9);
  // Row 2 of r is column 0 of s: exact.
  const BoundedResult r2 = Bounds(hlo, {a, b, R0(S32, int32_t{2})});
  for (int i = 0; i < 4; ++i) EXPECT_LT(Allowed(r2, i), 1e-30);
}

// A bitcast reads its operand in the operand's layout: the bounds move
// with the values, whatever layout the bound arrays themselves carry.
TEST(NumericsOpsTest, BitcastBoundsFollowTheOperandsLayout) {
  const std::string hlo =
      "HloModule m\n\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[2,3] "
      "parameter(1)\n  s = f32[2,3]{0,1} multiply(a, b)\n"
      "  ROOT r = f32[6] bitcast(s)\n}\n";
  // Only element (0, 1) of s is inexact (0.1 * 3). Column-major, it is
  // physical element 2.
  const Literal a = Lit(F32, {2, 3}, std::vector<float>{1, 0.1f, 3, 4, 5, 6});
  const Literal b = Lit(F32, {2, 3}, std::vector<float>{1, 3, 1, 1, 1, 1});
  const BoundedResult r = Bounds(hlo, {a, b});
  ASSERT_EQ(r.outputs.size(), 1u);
  ExpectFloats<float>(r.nominal, {1, 4, 0.1f * 3, 5, 3, 6});
  for (int i = 0; i < 6; ++i) {
    if (i == 2) {
      EXPECT_GT(Allowed(r, i), 1e-9);
    } else {
      EXPECT_LT(Allowed(r, i), 1e-30) << i;
    }
  }
}

// A scatter whose combiner the contract does not classify (subtract)
// makes the elements it updates undetermined, but the elements no update
// reaches keep their operand's bound (found by fuzzing: it was dropped).
TEST(NumericsOpsTest, UnclassifiedScatterKeepsTheOperandBoundElsewhere) {
  const std::string hlo =
      "HloModule m\n\nsub {\n  p = f32[] parameter(0)\n  q = f32[] "
      "parameter(1)\n  ROOT d = f32[] subtract(p, q)\n}\n\nENTRY e {\n  "
      "a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  i = s32[1,1] "
      "parameter(2)\n  u = f32[1] parameter(3)\n  s = f32[4] multiply(a, "
      "b)\n  ROOT r = f32[4] scatter(s, i, u), update_window_dims={}, "
      "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
      "index_vector_dim=1, to_apply=sub\n}\n";
  // Every product 0.1 * 3 is inexact; the update lands on element 2.
  const Literal a = R1(F32, std::vector<float>{0.1f, 0.1f, 0.1f, 0.1f});
  const Literal b = R1(F32, std::vector<float>{3, 3, 3, 3});
  const Literal i = Lit(S32, {1, 1}, std::vector<int32_t>{2});
  const BoundedResult r =
      Bounds(hlo, {a, b, i, R1(F32, std::vector<float>{1})});
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_TRUE(std::isinf(Allowed(r, 2)));
  for (int k : {0, 1, 3}) {
    EXPECT_GT(Allowed(r, k), 1e-9) << k;
    EXPECT_FALSE(std::isinf(Allowed(r, k))) << k;
  }
}

// Found by fuzzing: f32 subnormals below bf16's range vanish on the matrix
// unit (DEFAULT: one bf16 pass), an absolute error the relative bound of
// the pass does not cover; a dot of them that comes out 0 is fine.
TEST(NumericsOpsTest, SubnormalOperandsMayVanishOnTheMatrixUnit) {
  const std::string hlo =
      "HloModule m\n\nENTRY e {\n  a = f32[3] parameter(0)\n  b = f32[3] "
      "parameter(1)\n  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, "
      "rhs_contracting_dims={0}\n}\n";
  const float tiny = 7 * 0x1p-149f;  // 7 f32 subnormal steps.
  const BoundedResult r =
      Bounds(hlo, {R1(F32, std::vector<float>{tiny, tiny, 0}),
                   R1(F32, std::vector<float>{-2, -3, 4})});
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_LT(r.nominal.data<float>()[0], 0);
  EXPECT_TRUE(CompareWithBounds(R0(F32, 0.0f), r).ok());
  EXPECT_FALSE(CompareWithBounds(R0(F32, 1e-30f), r).ok());
}

// Found by fuzzing with special values: with HIGH/HIGHEST precision the
// matrix unit splits inf into bf16 parts (inf - inf = NaN), so a
// non-finite dot result is undetermined there; with DEFAULT (one pass) it
// is fixed. A convolution whose padding meets an inf may give NaN too.
TEST(NumericsOpsTest, NonFiniteOperandsOfMultiPassDotsAreUndetermined) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<Literal> args = {R1(F32, std::vector<float>{inf, 1}),
                                     R1(F32, std::vector<float>{2, 3})};
  const std::string dot =
      "HloModule m\n\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] "
      "parameter(1)\n  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, "
      "rhs_contracting_dims={0}";
  const Literal nan = R0(F32, std::numeric_limits<float>::quiet_NaN());
  const BoundedResult one = Bounds(dot + "\n}\n", args);
  EXPECT_FALSE(CompareWithBounds(nan, one).ok());
  const BoundedResult six =
      Bounds(dot + ", operand_precision={highest,highest}\n}\n", args);
  ASSERT_EQ(six.outputs.size(), 1u);
  EXPECT_EQ(six.outputs[0].undetermined, 1);
  EXPECT_TRUE(CompareWithBounds(nan, six).ok());

  const std::string conv =
      "HloModule m\n\nENTRY e {\n  x = f32[1,2,1] parameter(0)\n  k = "
      "f32[2,1,1] parameter(1)\n  ROOT c = f32[1,3,1] convolution(x, k), "
      "window={size=2 pad=1_1}, dim_labels=b0f_0io->b0f\n}\n";
  const BoundedResult padded = Bounds(
      conv, {testing::RunHlo("HloModule m\nENTRY e {\n  ROOT c = f32[1,2,1] "
                             "constant({{{inf}, {1}}})\n}\n",
                             {}),
             testing::RunHlo("HloModule m\nENTRY e {\n  ROOT c = f32[2,1,1] "
                             "constant({{{2}}, {{3}}})\n}\n",
                             {})});
  ASSERT_EQ(padded.outputs.size(), 1u);
  EXPECT_EQ(padded.outputs[0].undetermined, 3);
}

// Found by fuzzing: an f16 product whose partial products overflow in some
// order (300 * 300 > 65504) although the whole product (0.09) does not is
// undetermined: the order of a reduce is the compiler's choice.
TEST(NumericsOpsTest, ProductWhosePartialProductsMayOverflowIsUndetermined) {
  const std::string hlo =
      "HloModule m\n\nmul {\n  p = f16[] parameter(0)\n  q = f16[] "
      "parameter(1)\n  ROOT r = f16[] multiply(p, q)\n}\n\nENTRY e {\n  "
      "x = f16[4] parameter(0)\n  one = f16[] constant(1)\n  ROOT r = f16[] "
      "reduce(x, one), dimensions={0}, to_apply=mul\n}\n";
  Literal x(Shape(PrimitiveType::F16, {4}));
  auto xd = x.mutable_data<f16>();
  const float v[] = {0.001f, 300, 300, 0.001f};
  for (int k = 0; k < 4; ++k) xd[k] = f16(v[k]);
  const BoundedResult r = Bounds(hlo, {x});
  EXPECT_TRUE(std::isinf(Allowed(r, 0)));
  // Factors that cannot overflow in any order stay determined.
  for (int k = 0; k < 4; ++k) xd[k] = f16(k + 1.5f);
  EXPECT_FALSE(std::isinf(Allowed(Bounds(hlo, {x}), 0)));
}

// Found by fuzzing (a trace cut to f16): x / exp(x) for a dot x = 11.59
// whose bound reaches below 11.09: exp(x) overflows f16 in the oracle
// (0 after the divide) but not for every x in the bound, so neither the
// infinity nor the zero is fixed.
TEST(NumericsOpsTest, ExpOverflowReachedOnlyByPartOfTheBoundIsUndetermined) {
  const std::string hlo =
      "HloModule m\n\nENTRY e {\n  a = f16[2] parameter(0)\n  b = f16[2] "
      "parameter(1)\n  c = f16[] dot(a, b), lhs_contracting_dims={0}, "
      "rhs_contracting_dims={0}\n  d = f16[] exponential(c)\n  ROOT e = "
      "f16[] divide(c, d)\n}\n";
  Literal a(Shape(PrimitiveType::F16, {2})), b(Shape(PrimitiveType::F16, {2}));
  auto ad = a.mutable_data<f16>();
  auto bd = b.mutable_data<f16>();
  ad[0] = f16(100.0f), bd[0] = f16(1.0f);
  ad[1] = f16(-88.4f), bd[1] = f16(1.0f);  // c ~ 11.6: exp(c) > 65504.
  EXPECT_TRUE(std::isinf(Allowed(Bounds(hlo, {a, b}), 0)));
  // Far above the overflow point for every x in the bound: fixed, 0.
  ad[1] = f16(-60.0f);  // c = 40.
  EXPECT_FALSE(std::isinf(Allowed(Bounds(hlo, {a, b}), 0)));
}

// Found by fuzzing: round(x) of an x within its bound of 0 may be -0 or
// +0, and atan2 tells them apart (atan2(-0, -0) = -pi): the zero carries a
// nonzero bound, so atan2 at the branch cut is undetermined.
TEST(NumericsOpsTest, SignOfARoundedZeroIsNotDetermined) {
  const std::string hlo =
      "HloModule m\n\nadd {\n  p = f32[] parameter(0)\n  q = f32[] "
      "parameter(1)\n  ROOT s = f32[] add(p, q)\n}\n\nENTRY e {\n  x = "
      "f32[4] parameter(0)\n  z = f32[] constant(0)\n  s = f32[] reduce(x, "
      "z), dimensions={0}, to_apply=add\n  r = f32[] round-nearest-afz(s)\n  "
      "ROOT t = f32[] atan2(r, r)\n}\n";
  // The sum is 0 exactly, but another order may round to a tiny +-value.
  const BoundedResult r =
      Bounds(hlo, {R1(F32, std::vector<float>{0.25f, -0.25f, 1e-3f, -1e-3f})});
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_TRUE(std::isinf(Allowed(r, 0)));
}

// Found by fuzzing: a sum that is finite in one order (3e38 - 2e38 + 2e38)
// may overflow in another (3e38 + 2e38 first): undetermined.
TEST(NumericsOpsTest, SumWhosePartialSumsMayOverflowIsUndetermined) {
  const std::string hlo =
      "HloModule m\n\nadd {\n  p = f32[] parameter(0)\n  q = f32[] "
      "parameter(1)\n  ROOT s = f32[] add(p, q)\n}\n\nENTRY e {\n  x = "
      "f32[3] parameter(0)\n  z = f32[] constant(0)\n  ROOT s = f32[] "
      "reduce(x, z), dimensions={0}, to_apply=add\n}\n";
  EXPECT_TRUE(std::isinf(Allowed(
      Bounds(hlo, {R1(F32, std::vector<float>{3e38f, -2e38f, 2e38f})}), 0)));
  EXPECT_FALSE(std::isinf(Allowed(
      Bounds(hlo, {R1(F32, std::vector<float>{3e30f, -2e30f, 2e30f})}), 0)));
}

TEST(NumericsOpsTest, UndeterminedIndexMakesTheSliceUndetermined) {
  // The index comes from a float compare at a tie, converted to s32.
  const std::string hlo =
      "HloModule m\n\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] "
      "parameter(1)\n  x = f32[4] parameter(2)\n  s = f32[] add(a, b)\n  "
      "k = s32[] convert(s)\n  ROOT d = f32[2] dynamic-slice(x, k), "
      "dynamic_slice_sizes={2}\n}\n";
  const Literal x = R1(F32, std::vector<float>{1, 2, 3, 4});
  // 0.1 + 0.9 rounds near 1.0: convert may give 0 or 1.
  const BoundedResult r =
      Bounds(hlo, {R0(F32, 0.1f), R0(F32, 0.9f), Literal(x)});
  EXPECT_TRUE(std::isinf(Allowed(r, 0)));
  EXPECT_GT(
      r.undetermined_reasons.count("dynamic-slice with undetermined indices"),
      0u);
  const BoundedResult ok =
      Bounds(hlo, {R0(F32, 0.5f), R0(F32, 1.0f), Literal(x)});
  EXPECT_LT(Allowed(ok, 0), 1e-30);
}

TEST(NumericsOpsTest, WhileLoopAccumulatesBounds) {
  // for i in 0..9: acc = acc * 1.1 + x
  const std::string hlo =
      "HloModule w\n\ncond {\n  s = (s32[], f32[8]) parameter(0)\n  i = s32[] "
      "get-tuple-element(s), index=0\n  n = s32[] constant(10)\n  ROOT c = "
      "pred[] compare(i, n), direction=LT\n}\n\nbody {\n  s = (s32[], f32[8]) "
      "parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n  acc = f32[8] "
      "get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  j = s32[] "
      "add(i, one)\n  k = f32[] constant(1.1)\n  kk = f32[8] broadcast(k), "
      "dimensions={}\n  m = f32[8] multiply(acc, kk)\n  a = f32[8] add(m, "
      "kk)\n  ROOT t = (s32[], f32[8]) tuple(j, a)\n}\n\nENTRY e {\n  x = "
      "f32[8] parameter(0)\n  z = s32[] constant(0)\n  s = (s32[], f32[8]) "
      "tuple(z, x)\n  ROOT w = (s32[], f32[8]) while(s), condition=cond, "
      "body=body\n}\n";
  const Literal x = R1(F32, Uniform(8, 0, 1, 9));
  const BoundedResult r = Bounds(hlo, {x});
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(Allowed(r, 0, 0), 0);  // The counter is exact.
  for (int i = 0; i < 8; ++i) {
    const double y = r.outputs[1].nominal.GetAsDouble(i);
    EXPECT_GT(Allowed(r, i, 1), 0);
    EXPECT_LT(Allowed(r, i, 1), 1e-4 * std::fabs(y));
  }
  // A value computed in f64 throughout and rounded once is accepted.
  Literal f64_result(Shape(F32, {8}));
  for (int i = 0; i < 8; ++i) {
    double acc = x.GetAsDouble(i);
    for (int it = 0; it < 10; ++it) acc = acc * double{1.1f} + double{1.1f};
    f64_result.SetFromDouble(i, acc);
  }
  std::vector<Literal> parts;
  parts.push_back(R0(S32, int32_t{10}));
  parts.push_back(std::move(f64_result));
  EXPECT_TRUE(CompareWithBounds(Literal::Tuple(std::move(parts)), r).ok());
}

TEST(NumericsOpsTest, SortKeysMoveAndPayloadsAtCloseKeysAreUndetermined) {
  const std::string hlo =
      "HloModule s\n\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] "
      "parameter(1)\n  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n  "
      "ROOT r = pred[] compare(a, b), direction=LT\n}\n\nENTRY e {\n  x = "
      "f32[4] parameter(0)\n  y = f32[4] parameter(1)\n  p = s32[4] "
      "parameter(2)\n  k = f32[4] multiply(x, y)\n  ROOT s = (f32[4], s32[4]) "
      "sort(k, p), dimensions={0}, to_apply=cmp\n}\n";
  // Keys 0.3 (inexact), 0.30000001 (close), 5, 9.
  const BoundedResult r =
      Bounds(hlo, {R1(F32, std::vector<float>{0.1f, 9, 5, 0.30000001f}),
                   R1(F32, std::vector<float>{3, 1, 1, 1}),
                   Lit(S32, {4}, std::vector<int32_t>{0, 1, 2, 3})});
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_GT(Allowed(r, 0, 0), 0);
  EXPECT_TRUE(std::isfinite(Allowed(r, 0, 0)));
  EXPECT_TRUE(std::isinf(Allowed(r, 0, 1)));  // 0.3 vs 0.30000001.
  EXPECT_TRUE(std::isinf(Allowed(r, 1, 1)));
  EXPECT_EQ(Allowed(r, 2, 1), 0);
  EXPECT_EQ(Allowed(r, 3, 1), 0);
  // Exact keys with ties in an unstable sort: equal payloads are fine.
  const BoundedResult t =
      Bounds(hlo, {R1(F32, std::vector<float>{1, 1, 2, 1}),
                   R1(F32, std::vector<float>{1, 1, 1, 2}),
                   Lit(S32, {4}, std::vector<int32_t>{7, 8, 9, 9})});
  EXPECT_TRUE(std::isinf(Allowed(t, 0, 1)));  // Keys 1, 1 with 7, 8.
  EXPECT_EQ(Allowed(t, 2, 1), 0);             // Keys 2, 2 with 9, 9.
}

TEST(NumericsOpsTest, ReduceMaxAndIntegerOps) {
  const std::string hlo =
      std::string(
          "HloModule r\n\nmax {\n  a = f32[] parameter(0)\n  b = f32[] "
          "parameter(1)\n  ROOT r = f32[] maximum(a, b)\n}\n\n") +
      "ENTRY e {\n  x = f32[2,3] parameter(0)\n  y = f32[2,3] parameter(1)\n"
      "  s = f32[2,3] add(x, y)\n  z = f32[] constant(-inf)\n  ROOT m = f32[2] "
      "reduce(s, z), dimensions={1}, to_apply=max\n}\n";
  const BoundedResult r = Bounds(
      hlo, {Lit(F32, {2, 3}, std::vector<float>{1, 2, 3, 0.1f, 0.2f, 0.3f}),
            Lit(F32, {2, 3}, std::vector<float>{1, 1, 1, 0.2f, 0.2f, 0.2f})});
  EXPECT_LT(Allowed(r, 0), 1e-30);  // Exact sums: 2, 3, 4.
  EXPECT_GT(Allowed(r, 1), 0);
  EXPECT_LT(Allowed(r, 1), 1e-6);
  // Integer arithmetic is exact.
  const BoundedResult i =
      Bounds(testing::OneOp("s32[3]", "multiply", {"s32[3]", "s32[3]"}),
             {Lit(S32, {3}, std::vector<int32_t>{1, -2, 3}),
              Lit(S32, {3}, std::vector<int32_t>{4, 5, 1 << 30})});
  for (int k = 0; k < 3; ++k) EXPECT_EQ(Allowed(i, k), 0);
  EXPECT_FALSE(
      CompareWithBounds(Lit(S32, {3}, std::vector<int32_t>{4, -10, 0}), i)
          .ok());
}

TEST(NumericsOpsTest, BoundsAreNeverNegativeOrNaN) {
  const float nan = testing::kNaN, inf = testing::kInf;
  std::vector<float> v = Uniform(64, -3, 3, 17);
  v[0] = nan, v[1] = inf, v[2] = -inf, v[3] = 0, v[4] = -0.0f, v[5] = 1e-40f;
  const Literal x = Lit(F32, {8, 8}, v);
  const Literal y = Lit(F32, {8, 8}, Uniform(64, -3, 3, 18));
  const std::string prefix =
      std::string("HloModule g\n\n") + kAdd +
      "ENTRY e {\n  x = f32[8,8] parameter(0)\n  y = f32[8,8] parameter(1)\n";
  const std::vector<std::string> bodies = {
      "  l = f32[8,8] log(x)\n  s = f32[8,8] sqrt(y)\n  ROOT r = f32[8,8] "
      "divide(l, s)\n",
      "  a = f32[8,8] power(x, y)\n  ROOT r = f32[8,8] tan(a)\n",
      "  a = f32[8,8] atan2(x, y)\n  b = f32[8,8] remainder(x, y)\n  ROOT r = "
      "f32[8,8] subtract(a, b)\n",
      "  d = f32[8,8] dot(x, y), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={0}\n  z = f32[] constant(0)\n  ROOT r = f32[8] "
      "reduce(d, z), dimensions={1}, to_apply=add\n",
      "  m = f32[8,8] multiply(x, y)\n  c = s32[8,8] convert(m)\n  f = "
      "f32[8,8] "
      "floor(m)\n  g = f32[8,8] convert(c)\n  ROOT r = f32[8,8] add(f, g)\n",
      "  e = f32[8,8] exponential(x)\n  t = f32[8,8] tanh(y)\n  lo = f32[] "
      "constant(-1)\n  hi = f32[] constant(1)\n  c = f32[8,8] clamp(lo, e, "
      "hi)\n  ROOT r = f32[8,8] multiply(c, t)\n"};
  for (const std::string& body : bodies) {
    const BoundedResult r = Bounds(prefix + body + "}\n", {x, y});
    for (const BoundedOutput& o : r.outputs) {
      for (double b : o.allowed.data<double>()) {
        EXPECT_FALSE(std::isnan(b)) << body;
        EXPECT_GE(b, 0) << body;
      }
    }
    // The nominal value always passes its own bounds.
    EXPECT_TRUE(CompareWithBounds(r.nominal, r).ok()) << body;
  }
}

TEST(NumericsOpsTest, MalformedInputsAreErrors) {
  const std::string hlo = testing::OneOp("f32[3]", "add", {"f32[3]", "f32[3]"});
  const Literal a = R1(F32, std::vector<float>{1, 2, 3});
  EXPECT_FALSE(BoundsStatus(hlo, {a}).ok());  // One argument short.
  EXPECT_FALSE(BoundsStatus(hlo, {a, R1(F32, std::vector<float>{1, 2})}).ok());
  EXPECT_FALSE(
      BoundsStatus(hlo, {a, Lit(S32, {3}, std::vector<int32_t>{1, 2, 3})})
          .ok());
  const BoundedResult r = Bounds(hlo, {a, a});
  // Wrong type, wrong dims, wrong structure: reported, not crashed.
  EXPECT_FALSE(
      CompareWithBounds(Lit(S32, {3}, std::vector<int32_t>{2, 4, 6}), r)
          .outputs[0]
          .shape_error.empty());
  EXPECT_FALSE(CompareWithBounds(R1(F32, std::vector<float>{2, 4}), r)
                   .outputs[0]
                   .shape_error.empty());
  std::vector<Literal> two;
  two.push_back(a);
  two.push_back(a);
  const ComparisonResult c =
      CompareWithBounds(Literal::Tuple(std::move(two)), r);
  EXPECT_FALSE(c.ok());
  EXPECT_FALSE(c.structure_error.empty());
  EXPECT_FALSE(CompareWithBounds(a, BoundedResult{}).ok());
  // JSON of a bounded mismatch names the allowance.
  const Json j =
      CompareWithBounds(R1(F32, std::vector<float>{2, 4, 7}), r).ToJson();
  const std::string text = j.Dump();
  EXPECT_NE(text.find("\"allowed\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"bounded\""), std::string::npos) << text;
}

}  // namespace
}  // namespace trench
