// Helpers for the code generator tests: compile an inline HLO module, run
// it on the simulator with the same random inputs the oracle gets, and
// compare with the oracle's values.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/compile.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/random_inputs.h"
#include "compiler/ir/verifier.h"
#include "oracle/comparator.h"
#include "oracle/evaluator.h"
#include "tpu/simulator.h"

namespace trench::codegen::testing {

inline std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().ToString() << "\n" << text;
  if (!m.ok()) return nullptr;
  Status v = VerifyModule(**m);
  EXPECT_TRUE(v.ok()) << v.ToString() << "\n" << text;
  return std::move(m).value();
}

// The flattened input literals' bytes (row-major, as the simulator wants).
inline std::vector<std::vector<uint8_t>> InputBytes(
    const std::vector<Literal>& args) {
  std::vector<std::vector<uint8_t>> out;
  for (const Literal& a : args) {
    for (const Literal* leaf : a.Leaves()) {
      out.emplace_back(leaf->bytes().begin(), leaf->bytes().end());
    }
  }
  return out;
}

// A simulator output as a literal.
inline Literal ToLiteral(const tpu::OutputBuffer& b) {
  Literal l(Shape(*PrimitiveTypeFromName(b.dtype), b.dims));
  if (!b.bytes.empty()) {
    std::memcpy(l.mutable_bytes().data(), b.bytes.data(), b.bytes.size());
  }
  return l;
}

// Runs `exe` on `args`; returns the run result (test failure on errors).
inline tpu::RunResult Run(const tpu::Executable& exe,
                          const std::vector<Literal>& args) {
  auto r = tpu::RunExecutable(exe, InputBytes(args));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return {};
  return std::move(r).value();
}

// Compiles `text` (the back end alone, CompileModule, or with
// full_pipeline the pass pipeline too, Compile), runs it and the oracle on
// RandomArguments(seed), and expects every output leaf to match within
// `options`.
inline void ExpectRunMatchesOracle(const std::string& text, uint64_t seed,
                                   const ComparisonOptions& options,
                                   bool full_pipeline) {
  SCOPED_TRACE(text);
  std::unique_ptr<HloModule> m = Parse(text);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), seed);
  auto expected = Evaluate(*m, args);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  StatusOr<tpu::Executable> exe = tpu::Executable();
  if (full_pipeline) {
    auto c = Compile(*m, CompileOptions());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    exe = std::move(c->executable);
  } else {
    exe = CompileModule(*m, CompileOptions());
  }
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  tpu::RunResult r = Run(*exe, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk)
      << r.report.message << " at " << r.report.kernel << ": "
      << r.report.instruction;
  std::vector<Literal> leaves;
  for (const tpu::OutputBuffer& b : r.outputs) leaves.push_back(ToLiteral(b));
  ASSERT_FALSE(leaves.empty());
  Literal actual = expected->shape().IsTuple()
                       ? Literal::Tuple(std::move(leaves))
                       : std::move(leaves.at(0));
  ComparisonResult c = CompareLiterals(actual, *expected, options);
  EXPECT_TRUE(c.ok()) << c.ToText();
}

// The back end alone (CompileModule).
inline void ExpectMatchesOracle(const std::string& text, uint64_t seed,
                                const ComparisonOptions& options = {}) {
  ExpectRunMatchesOracle(text, seed, options, /*full_pipeline=*/false);
}

// The whole compiler (Compile: pass pipeline, then the back end).
inline void ExpectCompiledMatchesOracle(const std::string& text, uint64_t seed,
                                        const ComparisonOptions& options = {}) {
  ExpectRunMatchesOracle(text, seed, options, /*full_pipeline=*/true);
}

// A relative tolerance of `ulps` units in the last place of f32.
inline ComparisonOptions F32Ulps(double ulps) {
  ComparisonOptions o;
  o.f32 = {1e-6, ulps * 0x1p-23};
  return o;
}

// Every element type the Foundation ops take (complex aside).
inline const std::vector<std::string> kAllTypes = {
    "pred", "s8",  "s16", "s32",  "s64", "u8", "u16",
    "u32",  "u64", "f16", "bf16", "f32", "f64"};
// The integer types that can index (gather/scatter indices, dynamic-slice
// starts).
inline const std::vector<std::string> kIndexTypes = {"s8", "s16", "s32", "s64",
                                                     "u8", "u16", "u32", "u64"};
inline const ComparisonOptions kExact = ComparisonOptions::Exact();

inline bool IsFloatType(const std::string& t) {
  return t == "f16" || t == "bf16" || t == "f32" || t == "f64";
}

// A module whose only computation is the entry with instructions `body`
// (lines ending in '\n').
inline std::string EntryModule(const std::string& body) {
  return "HloModule m\nENTRY e {\n" + body + "}\n";
}

// The root line of a binary reducer on scalar parameters x and y:
// "  ROOT z = t[] op(x, y)".
inline std::string ReducerRoot(const std::string& t, const std::string& op) {
  return "  ROOT z = " + t + "[] " + op + "(x, y)\n";
}

// A reducer root of several ops on x and y: x + y * y (x xor y for pred),
// rounded after every op like the oracle's general path.
inline std::string SumOfSquaresRoot(const std::string& t) {
  return t == "pred" ? ReducerRoot(t, "xor")
                     : "  s = " + t + "[] multiply(y, y)\n  ROOT z = " + t +
                           "[] add(x, s)\n";
}

// A binary scalar computation `name` on t: ROOT = op(p0, p1), or p1 for
// "assign" (scatter combiners).
inline std::string BinaryComputation(const std::string& name,
                                     const std::string& t,
                                     const std::string& op) {
  return name + " {\n  p0 = " + t + "[] parameter(0)\n  p1 = " + t +
         "[] parameter(1)\n" +
         (op == "assign" ? "  ROOT r = " + t + "[] copy(p1)\n"
                         : "  ROOT r = " + t + "[] " + op + "(p0, p1)\n") +
         "}\n";
}

// Scatter dimension numbers: rows of a 2-D operand by a scalar index
// each, and 2-D windows at a 2-D start each (index_vector_dim 1).
constexpr const char* kScatterRows =
    "update_window_dims={1}, inserted_window_dims={0}, "
    "scatter_dims_to_operand_dims={0}, index_vector_dim=1";
constexpr const char* kScatterWindows =
    "update_window_dims={1,2}, inserted_window_dims={}, "
    "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1";

// scatter(a: t`op`, i, u: t`upd`) with dimension numbers `dn` and the
// combiner computation `comb` (named comb); `indices` are the lines
// defining i from parameter(1).
inline std::string ScatterModule(const std::string& t, const std::string& op,
                                 const std::string& indices,
                                 const std::string& upd, const std::string& dn,
                                 const std::string& comb) {
  return "HloModule m\n" + comb + "ENTRY e {\n  a = " + t + op +
         " parameter(0)\n" + indices + "  u = " + t + upd +
         " parameter(2)\n  ROOT s = " + t + op + " scatter(a, i, u), " + dn +
         ", to_apply=comb\n}\n";
}

// Sorts t`dims` along `dim` by compare(lhs, rhs, `dir`) of operand 0,
// carrying an s32 iota payload (its position) when `payload`.
inline std::string SortModule(const std::string& t, const std::string& dims,
                              int dim, const std::string& dir, bool payload) {
  std::string s = "HloModule m\nless {\n  a = " + t +
                  "[] parameter(0)\n  b = " + t + "[] parameter(1)\n";
  if (payload) s += "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n";
  s += "  ROOT r = pred[] compare(a, b), direction=" + dir + "\n}\n";
  s += "ENTRY e {\n  k = " + t + dims + " parameter(0)\n";
  const std::string d = std::to_string(dim);
  if (payload) {
    s += "  v = s32" + dims + " iota(), iota_dimension=" + d +
         "\n  ROOT r = (" + t + dims + ", s32" + dims +
         ") sort(k, v), dimensions={" + d +
         "}, is_stable=true, to_apply=less\n}\n";
  } else {
    s += "  ROOT r = " + t + dims + " sort(k), dimensions={" + d +
         "}, to_apply=less\n}\n";
  }
  return s;
}

// reduce-window(a: t`in`, constant `init`) -> t`out` over `window` with
// the reducer r(x, y) whose instructions are `body`.
inline std::string ReduceWindowModule(const std::string& t,
                                      const std::string& in,
                                      const std::string& out,
                                      const std::string& window,
                                      const std::string& body,
                                      const std::string& init) {
  return "HloModule m\nr {\n  x = " + t + "[] parameter(0)\n  y = " + t +
         "[] parameter(1)\n" + body + "}\nENTRY e {\n  a = " + t + in +
         " parameter(0)\n  i = " + t + "[] constant(" + init +
         ")\n  ROOT r = " + t + out + " reduce-window(a, i), window={" +
         window + "}, to_apply=r\n}\n";
}

// select-and-scatter(o: t`op_dims`, s: t`src_dims`, constant `init`) over
// `window`, select = compare(a, b) in direction `dir`, scatter(x, y) whose
// instructions are `scatter_body`.
inline std::string SelectAndScatterModule(const std::string& t,
                                          const std::string& op_dims,
                                          const std::string& src_dims,
                                          const std::string& window,
                                          const std::string& dir,
                                          const std::string& scatter_body,
                                          const std::string& init) {
  return "HloModule m\nsel {\n  a = " + t + "[] parameter(0)\n  b = " + t +
         "[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=" + dir +
         "\n}\nsca {\n  x = " + t + "[] parameter(0)\n  y = " + t +
         "[] parameter(1)\n" + scatter_body + "}\nENTRY e {\n  o = " + t +
         op_dims + " parameter(0)\n  s = " + t + src_dims +
         " parameter(1)\n  i = " + t + "[] constant(" + init +
         ")\n  ROOT r = " + t + op_dims +
         " select-and-scatter(o, s, i), window={" + window +
         "}, select=sel, scatter=sca\n}\n";
}

}  // namespace trench::codegen::testing
