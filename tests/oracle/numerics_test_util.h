// Helpers for the numerics contract's tests: bounds of inline HLO text,
// bf16 literals, ulp steps.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "compiler/ir/hlo_parser.h"
#include "oracle/numerics_contract.h"
#include "tests/oracle/oracle_test_util.h"

namespace trench::testing {

// Bounds of `hlo` on `args`; fails the test (and returns an empty result)
// on error.
inline BoundedResult Bounds(const std::string& hlo,
                            const std::vector<Literal>& args,
                            const NumericsOptions& options = {}) {
  auto module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  auto result = EvaluateWithBounds(**module, args, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return {};
  return std::move(result).value();
}

inline Status BoundsStatus(const std::string& hlo,
                           const std::vector<Literal>& args) {
  auto module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return module.status();
  return EvaluateWithBounds(**module, args).status();
}

inline Literal Bf16s(const std::vector<int64_t>& dims,
                     const std::vector<float>& values) {
  std::vector<uint16_t> bits;
  for (float v : values) bits.push_back(bf16(v).bits);
  return Lit(PrimitiveType::BF16, dims, bits);
}

inline std::vector<float> Uniform(int64_t n, float lo, float hi,
                                  uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

// `l` (f32 or bf16 array) with element i moved by `ulps` representable
// values away from zero (REQUIRES: a finite, nonzero element).
inline Literal MoveUlps(const Literal& l, int64_t i, int ulps) {
  Literal out = l;
  if (l.element_type() == PrimitiveType::BF16) {
    out.mutable_data<uint16_t>()[i] += ulps;
  } else {
    out.mutable_data<uint32_t>()[i] += ulps;
  }
  return out;
}

// One ulp of the f32 or bf16 value v (normal range).
inline double Ulp(double v, PrimitiveType t) {
  const int p = t == PrimitiveType::BF16 ? 8 : 24;
  return std::ldexp(1.0, std::ilogb(v) + 1 - p);
}

// The allowed deviation of output `k`, element i.
inline double Allowed(const BoundedResult& r, int64_t i, size_t k = 0) {
  return r.outputs.at(k).allowed.data<double>()[i];
}

}  // namespace trench::testing
