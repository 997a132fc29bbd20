// Helpers for the elementwise codegen tests: HLO text builders, inputs that
// cover a type's whole range and its special values, and an oracle
// comparison on explicit arguments.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen::testing {

inline std::string Unary(const std::string& op, const std::string& t,
                         const std::string& dims, const std::string& out_t = "",
                         const std::string& attrs = "") {
  std::string s = t + dims, o = (out_t.empty() ? t : out_t) + dims;
  return "HloModule m\nENTRY e {\n  a = " + s +
         " parameter(0)\n  ROOT r = " + o + " " + op + "(a)" + attrs + "\n}\n";
}

inline std::string Binary(const std::string& op, const std::string& t,
                          const std::string& dims,
                          const std::string& out_t = "",
                          const std::string& attrs = "") {
  std::string s = t + dims, o = (out_t.empty() ? t : out_t) + dims;
  return "HloModule m\nENTRY e {\n  a = " + s + " parameter(0)\n  b = " + s +
         " parameter(1)\n  ROOT r = " + o + " " + op + "(a, b)" + attrs +
         "\n}\n";
}

inline uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Special bit patterns of a type (NaN, infinities, signed zeros, extremes,
// subnormals, ties) in its storage width.
inline std::vector<uint64_t> SpecialBits(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::F32:
      return {0x7fc00000, 0xffc00000, 0x7f800000, 0xff800000, 0x0,
              0x80000000, 0x7f7fffff, 0xff7fffff, 0x1,        0x80000001,
              0x00800000, 0x3f800000, 0xbf800000, 0x3f000000, 0x3fc00000,
              0xbfc00000, 0x40200000, 0x4f000000, 0xcf000000, 0x4b000001};
    case PrimitiveType::F64:
      return {0x7ff8000000000000,
              0xfff8000000000000,
              0x7ff0000000000000,
              0xfff0000000000000,
              0x0,
              0x8000000000000000,
              0x7fefffffffffffff,
              0x1,
              0x3ff0000000000000,
              0xbff0000000000000,
              0x3fe0000000000000,
              0x3ff8000000000000,
              0xc004000000000000,
              0x41e0000000000000,
              0xc1e0000000000000,
              0x43e0000000000000,
              0x3ff0000010000000,
              0x3ff0000008000001};
    case PrimitiveType::BF16:
      return {0x7fc0, 0xffc0, 0x7f80, 0xff80, 0x0,    0x8000, 0x7f7f,
              0x1,    0x3f80, 0xbf80, 0x3f00, 0x3fc0, 0xbfc0, 0x4f00};
    case PrimitiveType::F16:
      return {0x7e00, 0xfe00, 0x7c00, 0xfc00, 0x0,    0x8000, 0x7bff,
              0x1,    0x3c00, 0xbc00, 0x3800, 0x3e00, 0xbe00, 0x0400};
    default: {
      const int bits = BitWidth(t);
      const uint64_t all = bits == 64 ? ~0ull : (1ull << bits) - 1;
      const uint64_t min = 1ull << (bits - 1);
      return {0, 1, all, min, min - 1, min + 1, 2, all - 1, 7, all - 7};
    }
  }
}

// A literal of `count` elements of type t: the special values first, then
// random bit patterns (every bit random), for pred 0/1.
inline Literal FullRangeLiteral(PrimitiveType t, std::vector<int64_t> dims,
                                uint64_t seed, bool specials = true) {
  Literal l(Shape(t, dims));
  const int bytes = ByteWidth(t);
  uint8_t* p = l.mutable_bytes().data();
  const int64_t n = l.element_count();
  std::vector<uint64_t> sp =
      specials ? SpecialBits(t) : std::vector<uint64_t>{};
  uint64_t state = seed;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t v = static_cast<size_t>(i) < sp.size() ? sp[i] : SplitMix(state);
    if (t == PrimitiveType::PRED) v &= 1;
    std::memcpy(p + i * bytes, &v, bytes);
  }
  return l;
}

// Compiles `text`, runs it and the oracle on `args` and compares.
inline void ExpectMatchesOracleOn(const std::string& text,
                                  const std::vector<Literal>& args,
                                  const ComparisonOptions& options) {
  SCOPED_TRACE(text);
  std::unique_ptr<HloModule> m = Parse(text);
  if (m == nullptr) return;
  auto expected = Evaluate(*m, args);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  auto exe = CompileModule(*m, CompileOptions());
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  tpu::RunResult r = Run(*exe, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk)
      << r.report.message << " at " << r.report.kernel << ": "
      << r.report.instruction;
  ASSERT_EQ(r.outputs.size(), 1u);
  ComparisonResult c =
      CompareLiterals(ToLiteral(r.outputs[0]), *expected, options);
  EXPECT_TRUE(c.ok()) << c.ToText();
}

// Full-range random operands (with special values) for every parameter.
inline void ExpectMatchesOracleFullRange(
    const std::string& text, uint64_t seed,
    const ComparisonOptions& options = ComparisonOptions::Exact()) {
  std::unique_ptr<HloModule> m = Parse(text);
  if (m == nullptr) return;
  std::vector<Literal> args;
  const HloComputation& entry = *m->entry_computation();
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    const Shape& s = entry.parameter_instruction(i)->shape();
    Literal l = FullRangeLiteral(s.element_type(), s.dims(), seed + 77 * i,
                                 /*specials=*/false);
    // All pairs of special values across parameters 0 and 1: element
    // q*n + j of parameter i holds special (j + q*i) mod n.
    if (s.element_type() != PrimitiveType::PRED) {
      const std::vector<uint64_t> sp = SpecialBits(s.element_type());
      const int64_t n = static_cast<int64_t>(sp.size());
      const int bytes = ByteWidth(s.element_type());
      for (int64_t k = 0; k < l.element_count() && k < n * n; ++k) {
        const uint64_t v = sp[(k % n + (k / n) * i) % n];
        std::memcpy(l.mutable_bytes().data() + k * bytes, &v, bytes);
      }
    }
    args.push_back(std::move(l));
  }
  ExpectMatchesOracleOn(text, args, options);
}

}  // namespace trench::codegen::testing
