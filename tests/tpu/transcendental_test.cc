// Measures every transcendental approximation over a dense sweep of f32
// inputs against a double reference and asserts the documented ulp bound.
#include "tpu/transcendental.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "tests/tpu/tpu_test_util.h"
#include "tpu/numerics.h"

namespace trench::tpu {
namespace {

struct Worst {
  double ulp = 0;
  float x = 0, y = 0;
};

// Every `step`-th f32 bit pattern of both signs within [lo, hi], plus all
// of [-4, 4] at a finer step (where most reductions have their seams).
Worst Sweep(float (*f)(float), double (*ref)(double), float lo, float hi) {
  Worst w;
  auto visit = [&](float x) {
    if (!(x >= lo && x <= hi)) return;
    double e = UlpErrorF32(f(x), ref(x));
    if (e > w.ulp) {
      w.ulp = e;
      w.x = x;
    }
  };
  for (uint64_t b = 0; b < 0x7f800000u; b += 1021) {
    visit(BitsF32(static_cast<uint32_t>(b)));
    visit(BitsF32(static_cast<uint32_t>(b) | 0x80000000u));
  }
  for (int i = -(1 << 20); i <= (1 << 20); ++i) visit(i * 0x1p-18f);
  return w;
}

void Check(const char* name, float (*f)(float), double (*ref)(double),
           double bound, float lo = -INFINITY, float hi = INFINITY) {
  Worst w = Sweep(f, ref, lo, hi);
  std::printf("[ ulp      ] %-9s max %.3f ulp at x=%.9g (bound %.0f)\n", name,
              w.ulp, w.x, bound);
  EXPECT_LE(w.ulp, bound) << name << " at " << w.x;
}

double Logistic(double x) { return 1 / (1 + std::exp(-x)); }
double Rsqrt(double x) { return 1 / std::sqrt(x); }
double Recip(double x) { return 1 / x; }
double Exp(double x) { return std::exp(x); }
double Expm1(double x) { return std::expm1(x); }
double Log(double x) { return std::log(x); }
double Log1p(double x) { return std::log1p(x); }
double Tanh(double x) { return std::tanh(x); }
double Sin(double x) { return std::sin(x); }
double Cos(double x) { return std::cos(x); }
double Tan(double x) { return std::tan(x); }
double Sqrt(double x) { return std::sqrt(x); }
double Cbrt(double x) { return std::cbrt(x); }
double Erf(double x) { return std::erf(x); }

TEST(TranscendentalTest, ExpFamily) {
  Check("exp", ApproxExp, Exp, kExpMaxUlp);
  Check("expm1", ApproxExpm1, Expm1, kExpm1MaxUlp);
  Check("logistic", ApproxLogistic, Logistic, kLogisticMaxUlp);
  Check("tanh", ApproxTanh, Tanh, kTanhMaxUlp);
}

TEST(TranscendentalTest, LogFamily) {
  Check("log", ApproxLog, Log, kLogMaxUlp, 0);
  Check("log1p", ApproxLog1p, Log1p, kLog1pMaxUlp, -1);
}

TEST(TranscendentalTest, Trigonometric) {
  Check("sin", ApproxSin, Sin, kSinCosMaxUlp);
  Check("cos", ApproxCos, Cos, kSinCosMaxUlp);
  Check("tan", ApproxTan, Tan, kTanMaxUlp);
}

TEST(TranscendentalTest, RootsErfAndReciprocal) {
  Check("sqrt", ApproxSqrt, Sqrt, kSqrtMaxUlp, 0);
  Check("rsqrt", ApproxRsqrt, Rsqrt, kRsqrtMaxUlp, 0);
  Check("cbrt", ApproxCbrt, Cbrt, kCbrtMaxUlp);
  Check("erf", ApproxErf, Erf, kErfMaxUlp);
  Check("recip", ApproxRecip, Recip, kRecipMaxUlp);
}

// Two-argument functions: random bit patterns plus structured grids.
TEST(TranscendentalTest, Atan2PowDiv) {
  std::mt19937 rng(5);
  double atan2_worst = 0, div_worst = 0, pow_worst = 0;
  for (int i = 0; i < 3000000; ++i) {
    float x = BitsF32(rng()), y = BitsF32(rng());
    if (std::isnan(x) || std::isnan(y)) continue;
    atan2_worst = std::max(
        atan2_worst,
        UlpErrorF32(ApproxAtan2(y, x), std::atan2(double{y}, double{x})));
    div_worst = std::max(div_worst,
                         UlpErrorF32(ApproxDiv(y, x), double{y} / double{x}));
    // pow: base over many binades (including near 1), exponent in [-40, 40].
    float base = std::ldexp(std::uniform_real_distribution<float>(0.5f, 1)(rng),
                            static_cast<int>(rng() % 80) - 40);
    if (i % 4 == 0)
      base = 1 + std::uniform_real_distribution<float>(-1e-3f, 1e-3f)(rng);
    float p = std::uniform_real_distribution<float>(-40, 40)(rng);
    if (i % 3 == 0) p = std::nearbyint(p);
    double ref = std::pow(double{base}, double{p});
    if (ref < 1e-38 || ref > 3e38)
      continue;  // Bound stated for normal results.
    pow_worst = std::max(pow_worst, UlpErrorF32(ApproxPow(base, p), ref));
  }
  std::printf("[ ulp      ] atan2 max %.3f, div max %.3f, pow max %.3f\n",
              atan2_worst, div_worst, pow_worst);
  EXPECT_LE(atan2_worst, kAtan2MaxUlp);
  EXPECT_LE(div_worst, kDivMaxUlp);
  EXPECT_LE(pow_worst, kPowMaxUlp);
}

TEST(TranscendentalTest, SpecialValues) {
  EXPECT_EQ(ApproxExp(-INFINITY), 0.0f);
  EXPECT_EQ(ApproxExp(INFINITY), INFINITY);
  EXPECT_EQ(ApproxExp(0), 1.0f);
  EXPECT_TRUE(std::isnan(ApproxLog(-1)));
  EXPECT_EQ(ApproxLog(0), -INFINITY);
  EXPECT_EQ(ApproxLog(1), 0.0f);
  EXPECT_EQ(ApproxLog1p(-1), -INFINITY);
  EXPECT_EQ(ApproxSqrt(-0.0f), -0.0f);
  EXPECT_TRUE(std::signbit(ApproxSqrt(-0.0f)));
  EXPECT_TRUE(std::isnan(ApproxSqrt(-1)));
  EXPECT_EQ(ApproxRsqrt(0), INFINITY);
  EXPECT_EQ(ApproxRsqrt(INFINITY), 0.0f);
  EXPECT_TRUE(std::isnan(ApproxSin(INFINITY)));
  EXPECT_EQ(ApproxTanh(INFINITY), 1.0f);
  EXPECT_EQ(ApproxTanh(-0.0f), -0.0f);
  EXPECT_EQ(ApproxErf(INFINITY), 1.0f);
  EXPECT_EQ(ApproxCbrt(-8.0f), -2.0f);
  EXPECT_EQ(ApproxAtan2(0.0f, -1.0f), BitsF32(0x40490fdb));  // pi
  EXPECT_EQ(ApproxAtan2(-0.0f, 1.0f), -0.0f);
  EXPECT_EQ(ApproxPow(-2.0f, 3.0f), -8.0f);
  EXPECT_TRUE(std::isnan(ApproxPow(-2.0f, 0.5f)));
  EXPECT_EQ(ApproxPow(0.0f, -1.0f), INFINITY);
  EXPECT_EQ(ApproxPow(-0.0f, -3.0f), -INFINITY);
  EXPECT_EQ(ApproxPow(NAN, 0.0f), 1.0f);
  // -inf to a non-integer power (C99 Annex F), found by hlo-fuzz's edge
  // values: it was NaN.
  EXPECT_EQ(ApproxPow(-INFINITY, 2.5f), INFINITY);
  EXPECT_EQ(ApproxPow(-INFINITY, 0.5f), INFINITY);
  EXPECT_EQ(ApproxPow(-INFINITY, -2.5f), 0.0f);
  EXPECT_FALSE(std::signbit(ApproxPow(-INFINITY, -2.5f)));
  EXPECT_EQ(ApproxPow(-INFINITY, 3.0f), -INFINITY);
  EXPECT_EQ(ApproxPow(-INFINITY, -3.0f), -0.0f);
  EXPECT_TRUE(std::signbit(ApproxPow(-INFINITY, -3.0f)));
  EXPECT_EQ(ApproxDiv(1.0f, 0.0f), INFINITY);
  EXPECT_EQ(ApproxDiv(-6.0f, 3.0f), -2.0f);
  EXPECT_EQ(ApproxRecip(4.0f), 0.25f);
}

TEST(TranscendentalTest, VectorInstructionsUseTheApproximations) {
  std::vector<float> a(kVregElems), b(kVregElems);
  for (int i = 0; i < kVregElems; ++i) {
    a[i] = -20 + 0.04f * i;
    b[i] = 0.5f + 0.01f * i;
  }
  std::vector<float> r = testing::RunBody<float>(
      R"(
  vld.f32 v1, vmem[0]
  vld.f32 v2, vmem[8192]
  vexp.f32 v0, v1
  vst.f32 vmem[65536], v0
  vdiv.f32 v0, v1, v2
  vst.f32 vmem[69632], v0
  vpow.f32 v0, v2, v1
  vst.f32 vmem[73728], v0)",
      {testing::ToBytes(a), testing::ToBytes(b)}, 3 * kVregElems);
  for (int i = 0; i < kVregElems; ++i) {
    EXPECT_EQ(F32Bits(r[i]), F32Bits(ApproxExp(a[i])));
    EXPECT_EQ(F32Bits(r[kVregElems + i]), F32Bits(ApproxDiv(a[i], b[i])));
    EXPECT_EQ(F32Bits(r[2 * kVregElems + i]), F32Bits(ApproxPow(b[i], a[i])));
  }
}

}  // namespace
}  // namespace trench::tpu
