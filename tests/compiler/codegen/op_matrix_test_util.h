// The op matrix: every op of the Foundation list x every element type the
// verifier accepts for it, compiled the way hloc does (compile.h Compile():
// the pass pipeline, then the back end) and run on the simulator,
// compared with the oracle (oracle/evaluator.h). Shared by the
// op_matrix_*_test.cc files, one per op family; each (op, dtype) pair is
// one value-parameterized test case named OpMatrix/<Family>.Agrees/<op>_<t>.
//
// Legality: a case exists iff the verifier accepts the case's first
// program (so shape inference decides which dtypes an op takes). The later
// programs of a case must verify too (a generator bug otherwise).
//
// Numerics (what "agree" means), by case:
//   kExact        bitwise (NaN == NaN): integers, pred, data movement, and
//                 float ops whose result is exactly defined (add, multiply,
//                 min/max, compare, convert, fmod, ...). bf16/f16 ops are
//                 computed in f32 and rounded once on both sides.
//   kDefault      oracle/comparator.h's default tolerances (float results
//                 of ops whose association order is unspecified: scatter
//                 with add, select-and-scatter, composite computations).
//   kUlps         f32: at most `ulps` units in the last place (tpu/ISA.md's
//                 transcendental bound + the oracle's own f32 rounding,
//                 see the op table); bf16/f16: 1 ulp of the narrow type
//                 (the f32 result rounded once); f64: comparator default
//                 (the target uses the host's libm, ISA.md).
//   kContraction  dot/convolution/reduce/reduce-window with add, floats:
//                 per element |actual - expected| <= S * (r + K * 2^-23)
//                 + 1 ulp of the result type, where S = sum of |terms|
//                 (the oracle on the same program with operands |x| in
//                 f64), K = terms per element, r = 2^-8 + 2^-16 when
//                 operands may be rounded to bf16 (dot/convolution at
//                 precision DEFAULT: one bf16 MXU pass) else 0, and K *
//                 2^-23 covers any f32 summation order (2x the classic
//                 (K-1)u bound). f64 results use 2^-52 for the order term
//                 and allow the bf16 operand rounding too. scatter and
//                 select-and-scatter (which add with their to_apply, one
//                 rounding to the result type per add, in unspecified
//                 order) use the same rule with 2^-mantissa(result type)
//                 as the order term, K = most adds per element.
//                 Integers: exact.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen::op_matrix {

enum class Numerics { kExact, kDefault, kUlps, kContraction };

inline const std::vector<std::string>& AllDtypes() {
  static const auto* t = new std::vector<std::string>{
      "pred", "s8",  "s16", "s32",  "s64", "u8", "u16",
      "u32",  "u64", "f16", "bf16", "f32", "f64"};
  return *t;
}

inline bool IsFloatName(const std::string& t) {
  return t == "f16" || t == "bf16" || t == "f32" || t == "f64";
}

// What a program generator is asked for: element type `t`, program number
// `index` (each has its own shapes), and `mag`: the magnitude variant of a
// contraction (operands replaced by |convert<f64>(x)|, result in f64).
struct Gen {
  std::string t;
  int index = 0;
  bool mag = false;
  // The element type the computation runs in (f64 for the magnitude one).
  std::string ct() const { return mag ? "f64" : t; }
};

using Generator = std::function<std::string(const Gen&)>;

// One op of the list: how many programs, how to write them, numerics.
struct OpSpec {
  std::string op;         // HLO spelling, e.g. "shift-left".
  std::string case_name;  // Defaults to op; e.g. "reduce_variadic".
  int programs = 3;
  Generator gen;
  // Numerics for a dtype (given the case's dtype name).
  std::function<Numerics(const std::string&)> numerics;
  double ulps = 0;             // kUlps, f32.
  std::vector<int64_t> terms;  // kContraction: K per program.
  bool bf16_operands = false;  // kContraction: DEFAULT-precision MXU.
  // kContraction: each step rounds to the result type (scatter-like ops
  // combine with the to_apply computation, one rounding per add).
  bool result_type_steps = false;
  // Restricts the dtypes tried (empty: all of AllDtypes()).
  std::vector<std::string> dtypes;
};

struct OpCase {
  std::string name;  // "add_f32": the gtest parameter name.
  std::string op;
  std::string dtype;
  std::vector<std::string> programs;
  std::vector<std::string> magnitude;  // kContraction on floats.
  Numerics numerics = Numerics::kExact;
  double ulps = 0;
  std::vector<int64_t> terms;
  bool bf16_operands = false;
  bool result_type_steps = false;
};

inline std::string Identifier(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

// FNV-1a: a stable seed per case (std::hash is not stable).
inline uint64_t StableHash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// True if `text` parses and verifies.
inline bool Legal(const std::string& text) {
  auto m = ParseHloModule(text);
  return m.ok() && VerifyModule(**m).ok();
}

// The cases of `specs`: one per (spec, dtype) whose first program is legal.
inline std::vector<OpCase> MakeCases(const std::vector<OpSpec>& specs) {
  std::vector<OpCase> cases;
  for (const OpSpec& s : specs) {
    const auto& dtypes = s.dtypes.empty() ? AllDtypes() : s.dtypes;
    for (const std::string& t : dtypes) {
      if (!Legal(s.gen(Gen{t, 0, false}))) continue;
      OpCase c;
      c.op = s.op;
      c.dtype = t;
      c.name = Identifier((s.case_name.empty() ? s.op : s.case_name) + "_" + t);
      c.numerics = s.numerics ? s.numerics(t) : Numerics::kExact;
      c.ulps = s.ulps;
      c.terms = s.terms;
      c.bf16_operands = s.bf16_operands;
      c.result_type_steps = s.result_type_steps;
      for (int i = 0; i < s.programs; ++i) {
        c.programs.push_back(s.gen(Gen{t, i, false}));
        if (c.numerics == Numerics::kContraction) {
          c.magnitude.push_back(s.gen(Gen{t, i, true}));
        }
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

// Numerics helpers for OpSpec::numerics.
inline Numerics ExactUnlessFloat(const std::string& t, Numerics f) {
  return IsFloatName(t) ? f : Numerics::kExact;
}

// ---- Text helpers ----

inline std::string Dims(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) {
    s += (i ? "," : "") + std::to_string(d[i]);
  }
  return s + "]";
}

// The ragged shapes most programs use, by program index.
inline const std::vector<int64_t>& RaggedShape(int index) {
  static const auto* shapes = new std::vector<std::vector<int64_t>>{
      {3, 5}, {9, 130}, {1029}, {2, 3, 129}};
  return (*shapes)[index % shapes->size()];
}

// A scalar literal of type t from a small integer v (pred: v != 0).
inline std::string ScalarText(const std::string& t, int v) {
  if (t == "pred") return v != 0 ? "true" : "false";
  if (t[0] == 'u' && v < 0) v = -v;
  if (IsFloatName(t)) return std::to_string(v) + ".5";
  return std::to_string(v);
}

// Zero of t ("false" for pred).
inline std::string ZeroText(const std::string& t) {
  if (t == "pred") return "false";
  return IsFloatName(t) ? "0" : "0";
}

// The smallest value of t ("-inf" for floats).
inline std::string LowestText(const std::string& t) {
  if (t == "pred") return "false";
  if (IsFloatName(t)) return "-inf";
  if (t[0] == 'u') return "0";
  const int bits = std::stoi(t.substr(1));
  if (bits == 64) return "-9223372036854775808";
  return std::to_string(-(int64_t{1} << (bits - 1)));
}

// The binary op that combines values of t in reductions/scatters: "add",
// or "or" for pred.
inline std::string AddOp(const std::string& t) {
  return t == "pred" ? "or" : "add";
}

// A scalar computation `name` applying `op` to two t scalars.
inline std::string BinaryComputation(const std::string& name,
                                     const std::string& t,
                                     const std::string& op) {
  return name + " {\n  x = " + t + "[] parameter(0)\n  y = " + t +
         "[] parameter(1)\n  ROOT r = " + t + "[] " + op + "(x, y)\n}\n";
}

// Parameter `name` = parameter(i) of type t[dims]; in the magnitude
// variant it is |convert<f64>(parameter)| (without abs: convert<f64>, an
// exact, order-preserving copy for operands that select rather than add).
inline std::string ParamLines(const std::string& name, int i, const Gen& g,
                              const std::vector<int64_t>& dims,
                              bool abs = true) {
  const std::string d = Dims(dims);
  const std::string p = "  " + name + (g.mag ? "_raw" : "") + " = " + g.t + d +
                        " parameter(" + std::to_string(i) + ")\n";
  if (!g.mag) return p;
  if (!abs)
    return p + "  " + name + " = f64" + d + " convert(" + name + "_raw)\n";
  return p + "  " + name + "_f = f64" + d + " convert(" + name + "_raw)\n  " +
         name + " = f64" + d + " abs(" + name + "_f)\n";
}

// ---- Running a case ----

// Checks kContraction: see the file comment.
inline std::string CheckContraction(const OpCase& c, int index,
                                    const Literal& actual,
                                    const Literal& expected,
                                    const Literal& magnitude) {
  const PrimitiveType t = expected.element_type();
  const double k = static_cast<double>(c.terms.at(index));
  const bool wide = t == PrimitiveType::F64;
  const double step = c.result_type_steps ? std::ldexp(1.0, -MantissaBits(t))
                                          : (wide ? 0x1p-52 : 0x1p-23);
  const double order = k * step;
  const double round = c.bf16_operands ? 0x1p-8 + 0x1p-16 : 0;
  const double ulp = std::ldexp(1.0, -MantissaBits(t));
  if (actual.element_count() != expected.element_count() ||
      magnitude.element_count() != expected.element_count()) {
    return "[mismatch] element counts differ";
  }
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    const double e = expected.GetAsDouble(i), a = actual.GetAsDouble(i);
    const double s = magnitude.GetAsDouble(i);
    const double bound = s * (round + order) + std::fabs(e) * ulp;
    if (!(std::fabs(a - e) <= bound)) {
      return "[mismatch] element " + std::to_string(i) + ": actual " +
             std::to_string(a) + " expected " + std::to_string(e) + " bound " +
             std::to_string(bound) + " (S=" + std::to_string(s) +
             ", K=" + std::to_string(c.terms.at(index)) + ")";
    }
  }
  return "";
}

// Compares per the case's numerics; "" when they agree.
inline std::string Agree(const OpCase& c, int index, const Literal& actual,
                         const Literal& expected, const Literal* magnitude) {
  const bool is_float = IsFloatName(c.dtype);
  switch (c.numerics) {
    case Numerics::kContraction:
      if (magnitude != nullptr && is_float) {
        return CheckContraction(c, index, actual, expected, *magnitude);
      }
      [[fallthrough]];
    case Numerics::kExact: {
      ComparisonResult r =
          CompareLiterals(actual, expected, ComparisonOptions::Exact());
      return r.ok() ? "" : "[mismatch] exact: " + r.ToText();
    }
    case Numerics::kDefault: {
      ComparisonResult r = CompareLiterals(actual, expected);
      return r.ok() ? "" : "[mismatch] default tolerance: " + r.ToText();
    }
    case Numerics::kUlps: {
      ComparisonResult r = CompareLiterals(actual, expected);
      if (c.dtype == "f64") {
        return r.ok() ? "" : "[mismatch] default tolerance: " + r.ToText();
      }
      const uint64_t bound = c.dtype == "f32" ? c.ulps : 1;
      bool ok = r.structure_error.empty();
      for (const OutputComparison& o : r.outputs) {
        ok = ok && o.shape_error.empty() && o.nonfinite_mismatch_count == 0 &&
             o.max_ulp_error <= bound;
      }
      return ok ? ""
                : "[mismatch] more than " + std::to_string(bound) +
                      " ulps: " + r.ToText();
    }
  }
  return "";
}

// Runs program `index` of `c`; "" on agreement, else "[class] message"
// with class one of parse, oracle, compile, run, mismatch.
inline std::string RunProgram(const OpCase& c, int index) {
  const std::string& text = c.programs.at(index);
  auto m = ParseHloModule(text);
  if (!m.ok()) return "[parse] " + m.status().ToString();
  Status v = VerifyModule(**m);
  if (!v.ok()) return "[parse] verifier: " + v.ToString();
  const uint64_t seed = StableHash(c.name) + index;
  std::vector<Literal> args = RandomArguments(*(*m)->entry_computation(), seed);
  auto expected = Evaluate(**m, args);
  if (!expected.ok()) return "[oracle] " + expected.status().ToString();
  std::optional<Literal> magnitude;
  if (!c.magnitude.empty() && IsFloatName(c.dtype)) {
    auto mm = ParseHloModule(c.magnitude.at(index));
    if (!mm.ok()) return "[parse] magnitude: " + mm.status().ToString();
    auto s = Evaluate(**mm, args);
    if (!s.ok()) return "[oracle] magnitude: " + s.status().ToString();
    magnitude = std::move(*s);
  }
  // hloc's path: the pass pipeline (with the required conv-expander), then
  // the back end.
  auto compiled = Compile(**m, CompileOptions());
  if (!compiled.ok()) return "[compile] " + compiled.status().ToString();
  auto run =
      tpu::RunExecutable(compiled->executable, testing::InputBytes(args));
  if (!run.ok()) return "[run] " + run.status().ToString();
  if (run->report.status != tpu::RunStatus::kOk) {
    return "[run] " + std::string(tpu::RunStatusName(run->report.status)) +
           ": " + run->report.message + " at " + run->report.kernel + ": " +
           run->report.instruction;
  }
  std::vector<Literal> leaves;
  for (const tpu::OutputBuffer& b : run->outputs) {
    leaves.push_back(testing::ToLiteral(b));
  }
  if (leaves.empty()) return "[run] no outputs";
  Literal actual = expected->shape().IsTuple()
                       ? Literal::Tuple(std::move(leaves))
                       : std::move(leaves.at(0));
  return Agree(c, index, actual, *expected, magnitude ? &*magnitude : nullptr);
}

// The body of every matrix test: every program of the case must agree.
inline void ExpectCaseAgrees(const OpCase& c) {
  for (size_t i = 0; i < c.programs.size(); ++i) {
    const std::string failure = RunProgram(c, static_cast<int>(i));
    EXPECT_EQ(failure, "") << "program " << i << ":\n" << c.programs[i];
    if (!failure.empty()) return;  // One failure per case is enough.
  }
}

// gtest prints parameters on failure: the name, not the bytes.
inline void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

inline std::string CaseName(const ::testing::TestParamInfo<OpCase>& info) {
  return info.param.name;
}

}  // namespace trench::codegen::op_matrix
