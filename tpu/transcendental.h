// The transcendental unit's f32 functions. Real TPUs evaluate these with
// approximations, not correctly rounded libm; so does this machine. Each
// function is range reduction + a polynomial (Taylor / cephes-style minimax)
// evaluated in f32, with an extended-precision range reduction where the
// reduction itself would otherwise dominate the error (sin/cos/tan: 104-bit
// pi/2 and a Payne-Hanek path for |x| >= 2^25; pow: log2 in f64).
//
// Every function has a documented maximum error in ulps (of the exact result
// rounded to f32; below the normal range, of the subnormal spacing), which
// tests/tpu/transcendental_test.cc measures over dense sweeps and asserts.
// The bounds hold over the whole f32 domain unless a narrower domain is
// stated. Special values (NaN, +-inf, +-0) follow C99 Annex F.
#pragma once

namespace trench::tpu {

// Maximum error in ulps, as documented in tpu/ISA.md.
inline constexpr double kExpMaxUlp = 2;
inline constexpr double kExpm1MaxUlp = 2;
inline constexpr double kLogMaxUlp = 2;
inline constexpr double kLog1pMaxUlp = 3;
inline constexpr double kTanhMaxUlp = 3;
inline constexpr double kLogisticMaxUlp = 3;
inline constexpr double kSinCosMaxUlp = 2;
inline constexpr double kTanMaxUlp = 4;
inline constexpr double kSqrtMaxUlp = 1;
inline constexpr double kRsqrtMaxUlp = 2;
inline constexpr double kCbrtMaxUlp = 1;
inline constexpr double kErfMaxUlp = 4;
inline constexpr double kAtan2MaxUlp = 3;
inline constexpr double kPowMaxUlp = 2;
inline constexpr double kRecipMaxUlp = 1;
inline constexpr double kDivMaxUlp = 1;

float ApproxExp(float x);
float ApproxExpm1(float x);
float ApproxLog(float x);
float ApproxLog1p(float x);
float ApproxTanh(float x);
float ApproxLogistic(float x);
float ApproxSin(float x);
float ApproxCos(float x);
float ApproxTan(float x);
float ApproxSqrt(float x);
float ApproxRsqrt(float x);
float ApproxCbrt(float x);
float ApproxErf(float x);
float ApproxAtan2(float y, float x);
float ApproxPow(float x, float y);
float ApproxRecip(float x);
// Approximate reciprocal + Newton steps + one residual correction.
float ApproxDiv(float a, float b);

}  // namespace trench::tpu
