#include "tpu/transcendental.h"

#include <cmath>
#include <cstdint>

#include "tpu/numerics.h"

namespace trench::tpu {
namespace {

constexpr float kInf = INFINITY;
constexpr float kNaN = NAN;
constexpr float kLn2Hi = 0.693359375f;  // 9 bits: k * kLn2Hi is exact.
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kPiF = 3.14159265358979323846f;
constexpr float kPiLoF = -8.742278e-8f;  // pi - kPiF
constexpr float kPio2F = 1.57079632679489662f;
constexpr float kPio2LoF = -4.371139e-8f;  // pi/2 - kPio2F
constexpr float kPio4F = 0.785398163397448310f;
constexpr float kPio4LoF = -2.1855695e-8f;

// 2^k for k in [-126, 127].
float Pow2(int k) { return BitsF32(static_cast<uint32_t>(k + 127) << 23); }

// x * 2^k with a single rounding (the pre-scaling steps are exact).
float ScaleB(float x, int k) {
  while (k > 127) {
    x *= Pow2(127);
    k -= 127;
    if (std::isinf(x)) return x;
  }
  while (k < -126) {
    x *= Pow2(-64);
    k += 64;
    if (x == 0) return x;
  }
  return x * Pow2(k);
}

// e^r - 1 for |r| <= ln2/2: Taylor to degree 9 (truncation < 2^-33).
float Expm1Poly(float r) {
  float p = 2.75573192e-6f;
  p = p * r + 2.48015873e-5f;
  p = p * r + 1.98412698e-4f;
  p = p * r + 1.38888889e-3f;
  p = p * r + 8.33333333e-3f;
  p = p * r + 4.16666667e-2f;
  p = p * r + 1.66666667e-1f;
  p = p * r + 0.5f;
  return r + r * r * p;
}

// e^r for |r| <= ln2/2 (cephes expf minimax).
float ExpPoly(float r) {
  float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * z + r + 1.0f;
}

// log(1+f) for f in [sqrt(.5)-1, sqrt(2)-1] minus the f - f^2/2 head
// (cephes logf minimax), returned as the tail y: log(1+f) = f - f^2/2 + y.
float LogTail(float f) {
  float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  return p * f * z;
}

// sin and cos of r, |r| <= pi/4 (cephes sinf/cosf minimax).
float SinPoly(float r) {
  float z = r * r;
  float p = -1.9515295891e-4f;
  p = p * z + 8.3321608736e-3f;
  p = p * z - 1.6666654611e-1f;
  return p * z * r + r;
}
float CosPoly(float r) {
  float z = r * r;
  float p = 2.443315711809948e-5f;
  p = p * z - 1.388731625493765e-3f;
  p = p * z + 4.166664568298827e-2f;
  return p * z * z - 0.5f * z + 1.0f;
}
// tan(r), |r| <= pi/4 (cephes tanf minimax).
float TanPoly(float r) {
  float z = r * r;
  if (r == 0) return r;
  float p = 9.38540185543e-3f;
  p = p * z + 3.11992232697e-3f;
  p = p * z + 2.44301354525e-2f;
  p = p * z + 5.34112807005e-2f;
  p = p * z + 1.33387994085e-1f;
  p = p * z + 3.33331568548e-1f;
  return p * z * r + r;
}

// Bits of 2/pi, most significant first.
constexpr uint32_t kTwoOverPi[] = {
    0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0, 0xDB629599,
    0x3C439041, 0xFE5163AB, 0xDEBBC561, 0xB7246E3A, 0x424DD2E0};

// Reduces finite x to r in [-pi/4, pi/4] (returned as double) and the
// quadrant n mod 4, with x = n*pi/2 + r.
double ReducePio2(float x, int* quadrant) {
  double xd = x;
  if (std::fabs(x) < 33554432.0f) {  // 2^25: 4-part Cody-Waite in f64.
    constexpr double kP1 = 0x1.921fb5p+0, kP2 = 0x1.110b46p-26,
                     kP3 = 0x1.1a6263p-54, kP4 = 0x1.8a2e03707344ap-81;
    double n = std::nearbyint(xd * 0.63661977236758134);
    *quadrant = static_cast<int>(static_cast<int64_t>(n) & 3);
    return (((xd - n * kP1) - n * kP2) - n * kP3) - n * kP4;
  }
  // Payne-Hanek: |x| = m * 2^e with m a 24-bit integer and e >= 2. Bits of
  // 2/pi that contribute multiples of 4 are skipped; a 96-bit window W gives
  // x*2/pi mod 4 = m*W / 2^94 (mod 4), truncation error < 2^-69.
  uint32_t bits = F32Bits(std::fabs(x));
  int e = static_cast<int>(bits >> 23) - 150;
  uint64_t m = (bits & 0x7fffff) | 0x800000;
  int s = e - 2;  // Skip bits 1..s.
  unsigned __int128 w = 0;
  for (int i = 0; i < 96; ++i) {
    int bit = s + i;  // 0-based bit index of 2/pi's fraction.
    uint32_t word = kTwoOverPi[bit / 32];
    w = (w << 1) | ((word >> (31 - bit % 32)) & 1);
  }
  // m*W < 2^120. Integer part mod 4 at bit 94.
  unsigned __int128 p = w * m;
  int n = static_cast<int>((p >> 94) & 3);
  unsigned __int128 frac = p & ((static_cast<unsigned __int128>(1) << 94) - 1);
  double f =
      std::ldexp(static_cast<double>(static_cast<uint64_t>(frac >> 30)), -64) +
      std::ldexp(static_cast<double>(
                     static_cast<uint64_t>(frac & ((uint64_t{1} << 30) - 1))),
                 -94);
  if (f >= 0.5) {
    f -= 1.0;
    n = (n + 1) & 3;
  }
  if (x < 0) {
    f = -f;
    n = (4 - n) & 3;
  }
  *quadrant = n;
  return f * 1.5707963267948966;
}

// log(x) in f64 for finite x > 0 (for pow): atanh series, |t| <= 0.172.
double LogF64(double x) {
  int e;
  double m = std::frexp(x, &e);  // [0.5, 1)
  if (m < 0.70710678118654752) {
    m *= 2;
    --e;
  }
  double t = (m - 1) / (m + 1), t2 = t * t;
  double s = 1.0 / 19;
  for (int k = 17; k >= 1; k -= 2) s = s * t2 + 1.0 / k;
  return e * 0.69314718055994531 + 2 * t * s;
}

}  // namespace

float ApproxExp(float x) {
  if (std::isnan(x)) return x;
  if (x > 88.72283935546875f) return kInf;
  if (x < -103.97208f) return 0.0f;
  int k = static_cast<int>(std::nearbyint(x * kLog2e));
  float r = (x - k * kLn2Hi) - k * kLn2Lo;
  return ScaleB(ExpPoly(r), k);
}

float ApproxExpm1(float x) {
  if (std::isnan(x)) return x;
  if (x > 88.72283935546875f) return kInf;
  if (x < -17.33f) return -1.0f;
  if (std::fabs(x) <= 0.34657359f) return Expm1Poly(x);
  int k = static_cast<int>(std::nearbyint(x * kLog2e));
  float r = (x - k * kLn2Hi) - k * kLn2Lo;
  float em1 = Expm1Poly(r);
  if (k > 24) return ScaleB(em1 + 1.0f, k) - 1.0f;
  // 2^k - 1 is exact for -24 <= k <= 24, and so is the scaling.
  return ScaleB(em1, k) + (Pow2(k) - 1.0f);
}

float ApproxLog(float x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (std::isinf(x)) return x;
  int e = 0;
  if (x < 1.17549435e-38f) {  // Subnormal: make it normal first.
    x *= 16777216.0f;
    e = -24;
  }
  uint32_t b = F32Bits(x);
  e += static_cast<int>(b >> 23) - 126;
  float m = BitsF32((b & 0x7fffff) | 0x3f000000);  // [0.5, 1)
  float f;
  if (m < 0.707106781186547524f) {
    --e;
    f = m + m - 1.0f;
  } else {
    f = m - 1.0f;
  }
  float z = f * f;
  float y = LogTail(f) + e * kLn2Lo;
  y += -0.5f * z;
  return (f + y) + e * kLn2Hi;
}

float ApproxLog1p(float x) {
  if (std::isnan(x) || x < -1.0f) return kNaN;
  if (x == -1.0f) return -kInf;
  if (std::isinf(x)) return x;
  float u = 1.0f + x;
  if (u == 1.0f) return x;
  float d = u - 1.0f;
  // log(u) * x / (u - 1) corrects for the rounding of 1 + x (Goldberg).
  return ApproxLog(u) * (x / d);
}

float ApproxTanh(float x) {
  if (std::isnan(x)) return x;
  float z = std::fabs(x);
  if (z > 9.02f) return x > 0 ? 1.0f : -1.0f;
  if (z >= 0.625f) {
    float e = ApproxExpm1(2 * z);
    float r = e / (e + 2.0f);
    return x > 0 ? r : -r;
  }
  if (x == 0) return x;
  float z2 = x * x;
  float p = -5.70498872745e-3f;
  p = p * z2 + 2.06390887954e-2f;
  p = p * z2 - 5.37397155531e-2f;
  p = p * z2 + 1.33314422036e-1f;
  p = p * z2 - 3.33332819422e-1f;
  return p * z2 * x + x;
}

float ApproxLogistic(float x) {
  if (std::isnan(x)) return x;
  if (x >= 0) return 1.0f / (1.0f + ApproxExp(-x));
  float e = ApproxExp(x);
  return e / (1.0f + e);
}

float ApproxSin(float x) {
  if (std::isnan(x) || std::isinf(x)) return kNaN;
  if (std::fabs(x) < 1e-4f) return SinPoly(x);
  int n;
  float r = static_cast<float>(ReducePio2(x, &n));
  switch (n) {
    case 0:
      return SinPoly(r);
    case 1:
      return CosPoly(r);
    case 2:
      return -SinPoly(r);
    default:
      return -CosPoly(r);
  }
}

float ApproxCos(float x) {
  if (std::isnan(x) || std::isinf(x)) return kNaN;
  int n;
  float r = static_cast<float>(ReducePio2(x, &n));
  switch (n) {
    case 0:
      return CosPoly(r);
    case 1:
      return -SinPoly(r);
    case 2:
      return -CosPoly(r);
    default:
      return SinPoly(r);
  }
}

float ApproxTan(float x) {
  if (std::isnan(x) || std::isinf(x)) return kNaN;
  if (std::fabs(x) < 1e-4f) return TanPoly(x);
  int n;
  float r = static_cast<float>(ReducePio2(x, &n));
  float t = TanPoly(r);
  return (n & 1) ? -1.0f / t : t;
}

float ApproxRsqrt(float x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return std::copysign(kInf, x);
  if (std::isinf(x)) return 0.0f;
  float scale = 1.0f;
  if (x < 1.17549435e-38f) {
    x *= 16777216.0f;  // 2^24 -> result * 2^12
    scale = 4096.0f;
  }
  float y = BitsF32(0x5f3759dfu - (F32Bits(x) >> 1));
  for (int i = 0; i < 3; ++i) y = y * (1.5f - 0.5f * x * y * y);
  float t = x * y;
  float e = std::fma(-t, y, 1.0f);
  y = std::fma(y * 0.5f, e, y);
  return y * scale;
}

float ApproxSqrt(float x) {
  if (std::isnan(x) || x < 0) return x == 0 ? x : kNaN;
  if (x == 0 || std::isinf(x)) return x;
  float scale = 1.0f;
  if (x < 1.17549435e-38f) {
    x *= 16777216.0f;
    scale = 1.0f / 4096.0f;
  }
  float y = BitsF32(0x5f3759dfu - (F32Bits(x) >> 1));
  for (int i = 0; i < 3; ++i) y = y * (1.5f - 0.5f * x * y * y);
  float s = x * y;
  float e = std::fma(-s, s, x);  // Residual of s^2 ~ x.
  s = std::fma(e, 0.5f * y, s);
  return s * scale;
}

float ApproxCbrt(float x) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  float a = std::fabs(x);
  float scale = 1.0f;
  if (a < 1.17549435e-38f) {
    a *= 16777216.0f;  // 2^24 -> result * 2^8
    scale = 1.0f / 256.0f;
  }
  float y = BitsF32(F32Bits(a) / 3 + 0x2a5137a0u);
  for (int i = 0; i < 3; ++i) y = y - (y - a / (y * y)) * (1.0f / 3.0f);
  // Final Newton step with the residual in the unit's 48-bit accumulator.
  double yd = y, ad = a;
  yd = yd - (yd * yd * yd - ad) / (3.0 * yd * yd);
  float r = static_cast<float>(yd) * scale;
  return x < 0 ? -r : r;
}

float ApproxErf(float x) {
  if (std::isnan(x)) return x;
  const float z = std::fabs(x);
  if (z < 1e-6f) return x * 1.12837916709551257f;
  if (z < 0.75f) {
    // Rational minimax (as XLA's ErfImpl32 / Eigen's fast erf).
    const float x2 = x * x;
    float a = -2.72614225801306e-10f;
    a = a * x2 + 2.77068142495902e-08f;
    a = a * x2 - 2.10102402082508e-06f;
    a = a * x2 - 5.69250639462346e-05f;
    a = a * x2 - 7.34990630326855e-04f;
    a = a * x2 - 2.95459980854025e-03f;
    a = a * x2 - 1.60960333262415e-02f;
    float b = -1.45660718464996e-05f;
    b = b * x2 - 2.13374055278905e-04f;
    b = b * x2 - 1.68282697438203e-03f;
    b = b * x2 - 7.37332916720468e-03f;
    b = b * x2 - 1.42647390514189e-02f;
    return x * a / b;
  }
  if (z > 4.0f) return x > 0 ? 1.0f : -1.0f;
  // 1 - erfc, erfc(z) = t * exp(-z^2 + P(t)), t = 1/(1 + z/2): the
  // Chebyshev fit of Numerical Recipes' erfcc (relative error < 1.2e-7).
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float r = 1.0f - t * ApproxExp(-z * z + p);
  return x > 0 ? r : -r;
}

float ApproxAtan2(float y, float x) {
  if (std::isnan(x) || std::isnan(y)) return kNaN;
  bool yneg = std::signbit(y), xneg = std::signbit(x);
  float r;
  if (y == 0) {
    r = xneg ? kPiF : 0.0f;
  } else if (std::isinf(x) && std::isinf(y)) {
    r = xneg ? 3 * kPio4F : kPio4F;
  } else if (std::isinf(x)) {
    r = xneg ? kPiF : 0.0f;
  } else if (std::isinf(y) || x == 0) {
    r = kPio2F;
  } else {
    float a = std::fabs(y), b = std::fabs(x);
    bool swap = a > b;
    float t = swap ? b / a : a / b;  // [0, 1]
    bool shift = t > 0.414213562f;
    if (shift) t = (t - 1.0f) / (t + 1.0f);
    float z = t * t;
    float p = 8.05374449538e-2f;
    p = p * z - 1.38776856032e-1f;
    p = p * z + 1.99777106478e-1f;
    p = p * z - 3.33329491539e-1f;
    r = p * z * t + t;
    if (shift) r = (kPio4F + r) + kPio4LoF;
    if (swap) r = (kPio2F - r) + kPio2LoF;
    if (xneg) r = (kPiF - r) + kPiLoF;
  }
  return yneg ? -r : r;
}

float ApproxPow(float x, float y) {
  if (y == 0 || x == 1.0f) return 1.0f;
  if (std::isnan(x) || std::isnan(y)) return kNaN;
  bool y_int = std::nearbyint(y) == y;
  bool y_odd =
      y_int && std::fabs(y) < 16777216.0f && (static_cast<int64_t>(y) & 1) != 0;
  if (std::isinf(y)) {
    float ax = std::fabs(x);
    if (ax == 1.0f) return 1.0f;
    return (ax > 1.0f) == (y > 0) ? kInf : 0.0f;
  }
  bool neg = false;
  if (x < 0 || (x == 0 && std::signbit(x))) {
    // A negative finite base to a non-integer power has no real value;
    // -inf to any power does (C99 Annex F: +0 for y < 0, +inf for y > 0,
    // signed by an odd integer y).
    if (!y_int && x != 0 && !std::isinf(x)) return kNaN;
    neg = y_odd;
  }
  float ax = std::fabs(x);
  float r;
  if (ax == 0) {
    r = y < 0 ? kInf : 0.0f;
  } else if (std::isinf(ax)) {
    r = y < 0 ? 0.0f : kInf;
  } else {
    double t = static_cast<double>(y) * LogF64(ax);
    if (t > 88.7228394) {
      r = kInf;
    } else if (t < -103.98) {
      r = 0.0f;
    } else {
      double k = std::nearbyint(t * 1.4426950408889634);
      double rd = (t - k * 0.69314718055994531) - k * 2.3190468138462996e-17;
      r = ScaleB(ExpPoly(static_cast<float>(rd)), static_cast<int>(k));
    }
  }
  return neg ? -r : r;
}

float ApproxDiv(float a, float b) {
  if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b) ||
      a == 0 || b == 0) {
    return a / b;  // Special-value path: exact by definition.
  }
  int ea, eb;
  float ma = std::frexp(std::fabs(a), &ea) * 2.0f;  // [1, 2)
  float mb = std::frexp(std::fabs(b), &eb) * 2.0f;
  // Reciprocal seed (linear minimax on [1, 2]) + 3 Newton steps.
  float r = 1.4117647058823530f - 0.47058823529411764f * mb;
  for (int i = 0; i < 3; ++i) r = r * (2.0f - mb * r);
  float q = ma * r;
  float e = std::fma(-q, mb, ma);  // Residual correction.
  q = std::fma(e, r, q);
  float res = ScaleB(q, ea - eb);
  return (std::signbit(a) != std::signbit(b)) ? -res : res;
}

float ApproxRecip(float x) { return ApproxDiv(1.0f, x); }

}  // namespace trench::tpu
