// Helpers for the oracle's tests: build literals from values, run inline
// HLO text, compare results bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/ir/hlo_parser.h"
#include "oracle/evaluator.h"

namespace trench::testing {

// An array literal of `type` and `dims` whose storage is filled from
// `values` (Storage must have the element type's width: uint16_t for
// bf16/f16 bit patterns, uint8_t for pred).
template <typename Storage>
Literal Lit(PrimitiveType type, std::vector<int64_t> dims,
            const std::vector<Storage>& values) {
  Literal l(Shape(type, std::move(dims)));
  EXPECT_EQ(sizeof(Storage), static_cast<size_t>(ByteWidth(type)));
  EXPECT_EQ(static_cast<int64_t>(values.size()), l.element_count());
  const size_t n = std::min(l.bytes().size(), values.size() * sizeof(Storage));
  if (n > 0) std::memcpy(l.mutable_bytes().data(), values.data(), n);
  return l;
}

template <typename Storage>
Literal R1(PrimitiveType type, const std::vector<Storage>& values) {
  return Lit(type, {static_cast<int64_t>(values.size())}, values);
}

template <typename Storage>
Literal R0(PrimitiveType type, Storage value) {
  return Lit(type, {}, std::vector<Storage>{value});
}

// Parses `hlo` and evaluates it on `args`; fails the test on error.
// (Inside a TEST body an unqualified Run names testing::Test::Run; call it
// as testing::Run or use RunHlo.)
inline Literal Run(const std::string& hlo, std::vector<Literal> args,
                   const EvaluatorOptions& options = {}) {
  auto module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return Literal();
  auto result = Evaluate(**module, args, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return Literal();
  return std::move(result).value();
}

inline Literal RunHlo(const std::string& hlo, std::vector<Literal> args,
                      const EvaluatorOptions& options = {}) {
  return Run(hlo, std::move(args), options);
}

// The status of evaluating `hlo` on `args` (parse errors fail the test).
inline Status RunStatus(const std::string& hlo, std::vector<Literal> args,
                        const EvaluatorOptions& options = {}) {
  auto module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return module.status();
  return Evaluate(**module, args, options).status();
}

// The elements of an array literal as Storage values.
template <typename Storage>
std::vector<Storage> Values(const Literal& l) {
  std::vector<Storage> out(l.bytes().size() / sizeof(Storage));
  if (!out.empty()) {
    std::memcpy(out.data(), l.bytes().data(), out.size() * sizeof(Storage));
  }
  return out;
}

// Float equality for tests: NaN matches any NaN; otherwise bitwise, so
// the sign of zero counts.
template <typename F>
bool SameFloat(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof(F)) == 0;
}

template <typename F>
void ExpectFloats(const Literal& l, const std::vector<F>& expected) {
  const std::vector<F> got = Values<F>(l);
  ASSERT_EQ(got.size(), expected.size()) << l.Summary();
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(SameFloat(got[i], expected[i]))
        << "element " << i << ": got " << got[i] << ", expected "
        << expected[i];
  }
}

// An HLO module with one op on parameters of the given shapes.
inline std::string OneOp(const std::string& result_shape, const std::string& op,
                         const std::vector<std::string>& param_shapes,
                         const std::string& attrs = "") {
  std::string text = "HloModule m\n\nENTRY e {\n";
  std::string operands;
  for (size_t i = 0; i < param_shapes.size(); ++i) {
    const std::string p = "p" + std::to_string(i);
    text += "  " + p + " = " + param_shapes[i] + " parameter(" +
            std::to_string(i) + ")\n";
    operands += (i ? ", " : "") + p;
  }
  text += "  ROOT r = " + result_shape + " " + op + "(" + operands + ")";
  if (!attrs.empty()) text += ", " + attrs;
  return text + "\n}\n";
}

// Naive dot for lhs [m,k] x rhs [k,n] in f64, k ascending.
inline std::vector<float> NaiveMatmul(const std::vector<float>& a,
                                      const std::vector<float>& b, int64_t m,
                                      int64_t k, int64_t n) {
  std::vector<float> c(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        s += static_cast<double>(a[i * k + p]) * b[p * n + j];
      }
      c[i * n + j] = static_cast<float>(s);
    }
  }
  return c;
}

inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace trench::testing
