// The op matrix, elementwise family: unary, binary, compare, select, clamp,
// convert, bitcast-convert, reduce-precision, is-finite, clz, popcnt, on
// the ragged shapes [3,5], [9,130], [1029] (see op_matrix_test_util.h).
#include <string>
#include <vector>

#include "tests/compiler/codegen/op_matrix_test_util.h"

namespace trench::codegen::op_matrix {
namespace {

std::string Unary(const std::string& op, const std::string& out_t,
                  const Gen& g) {
  const std::string d = Dims(RaggedShape(g.index));
  const std::string o = out_t.empty() ? g.t : out_t;
  return "HloModule m\nENTRY e {\n  a = " + g.t + d +
         " parameter(0)\n  ROOT r = " + o + d + " " + op + "(a)\n}\n";
}

std::string Binary(const std::string& op, const Gen& g) {
  const std::string s = g.t + Dims(RaggedShape(g.index));
  return "HloModule m\nENTRY e {\n  a = " + s + " parameter(0)\n  b = " + s +
         " parameter(1)\n  ROOT r = " + s + " " + op + "(a, b)\n}\n";
}

// All six directions in one program (a tuple of six pred arrays).
std::string Compare(const Gen& g) {
  const std::string d = Dims(RaggedShape(g.index));
  std::string s = "HloModule m\nENTRY e {\n  a = " + g.t + d +
                  " parameter(0)\n  b = " + g.t + d + " parameter(1)\n";
  std::string names;
  for (std::string dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    s +=
        "  c" + dir + " = pred" + d + " compare(a, b), direction=" + dir + "\n";
    names += (names.empty() ? "c" : ", c") + dir;
  }
  std::string shapes;
  for (int i = 0; i < 6; ++i) shapes += (i ? ", pred" : "pred") + d;
  return s + "  ROOT r = (" + shapes + ") tuple(" + names + ")\n}\n";
}

std::string Select(const Gen& g) {
  const std::string d = Dims(RaggedShape(g.index));
  return "HloModule m\nENTRY e {\n  p = pred" + d +
         " parameter(0)\n  a = " + g.t + d + " parameter(1)\n  b = " + g.t + d +
         " parameter(2)\n  ROOT r = " + g.t + d + " select(p, a, b)\n}\n";
}

// Program 2 uses scalar bounds (XLA allows scalar min/max).
std::string Clamp(const Gen& g) {
  const std::string d = Dims(RaggedShape(g.index));
  const std::string bd = g.index == 2 ? "[]" : d;
  return "HloModule m\nENTRY e {\n  lo = " + g.t + bd +
         " parameter(0)\n  x = " + g.t + d + " parameter(1)\n  hi = " + g.t +
         bd + " parameter(2)\n  ROOT r = " + g.t + d + " clamp(lo, x, hi)\n}\n";
}

std::string ReducePrecision(const Gen& g) {
  const std::string d = Dims(RaggedShape(g.index));
  const char* bits[] = {"exponent_bits=5, mantissa_bits=10",
                        "exponent_bits=8, mantissa_bits=7",
                        "exponent_bits=4, mantissa_bits=3"};
  return "HloModule m\nENTRY e {\n  a = " + g.t + d +
         " parameter(0)\n  ROOT r = " + g.t + d + " reduce-precision(a), " +
         bits[g.index % 3] + "\n}\n";
}

// f32 ulp bounds: tpu/ISA.md's transcendental table + 1 ulp for the
// oracle's own std:: f32 function (+2 for logistic, which the oracle
// computes as 1/(1+exp(-x)) in f32, three roundings).
struct UlpOp {
  const char* op;
  double ulps;
};
constexpr UlpOp kTranscendental[] = {
    {"exponential", 3}, {"exponential-minus-one", 3},
    {"log", 3},         {"log-plus-one", 4},
    {"tanh", 4},        {"logistic", 5},
    {"sine", 3},        {"cosine", 3},
    {"tan", 5},         {"sqrt", 2},
    {"rsqrt", 3},       {"cbrt", 2},
    {"erf", 5},
};
constexpr UlpOp kTranscendentalBinary[] = {
    {"divide", 2}, {"power", 3}, {"atan2", 4}};

Numerics UlpsIfFloat(const std::string& t) {
  return ExactUnlessFloat(t, Numerics::kUlps);
}

std::vector<OpSpec> Specs() {
  std::vector<OpSpec> s;
  for (std::string op :
       {"negate", "abs", "sign", "floor", "ceil", "round-nearest-afz",
        "round-nearest-even", "not", "clz", "popcnt", "copy"}) {
    s.push_back({op, "", 3, [op](const Gen& g) { return Unary(op, "", g); }});
  }
  s.push_back({"is-finite", "", 3,
               [](const Gen& g) { return Unary("is-finite", "pred", g); }});
  for (const UlpOp& u : kTranscendental) {
    std::string op = u.op;
    OpSpec spec{op,          "",
                3,           [op](const Gen& g) { return Unary(op, "", g); },
                UlpsIfFloat, u.ulps};
    s.push_back(spec);
  }
  for (std::string op : {"add", "subtract", "multiply", "remainder", "maximum",
                         "minimum", "and", "or", "xor", "shift-left",
                         "shift-right-logical", "shift-right-arithmetic"}) {
    s.push_back({op, "", 3, [op](const Gen& g) { return Binary(op, g); }});
  }
  for (const UlpOp& u : kTranscendentalBinary) {
    std::string op = u.op;
    s.push_back({op, "", 3, [op](const Gen& g) { return Binary(op, g); },
                 UlpsIfFloat, u.ulps});
  }
  s.push_back({"compare", "", 3, Compare});
  s.push_back({"select", "", 3, Select});
  s.push_back({"clamp", "", 3, Clamp});
  s.push_back({"reduce-precision", "", 3, ReducePrecision});
  return s;
}

// convert and bitcast-convert: one case per (from, to) pair the verifier
// accepts, named convert_<from>_to_<to>.
std::vector<OpSpec> ConvertSpecs() {
  std::vector<OpSpec> s;
  for (std::string op : {"convert", "bitcast-convert"}) {
    for (const std::string& to : AllDtypes()) {
      s.push_back({op, op + "_to_" + to, 3,
                   [op, to](const Gen& g) { return Unary(op, to, g); }});
    }
  }
  return s;
}

std::vector<OpCase> AllCases() {
  std::vector<OpCase> cases = MakeCases(Specs());
  // Names read <op>_<from>_to_<to>: MakeCases appends the dtype last.
  for (OpCase& c : MakeCases(ConvertSpecs())) {
    const size_t to = c.name.find("_to_");
    const std::string target =
        c.name.substr(to + 4, c.name.rfind('_') - to - 4);
    c.name = c.name.substr(0, to) + "_" + c.dtype + "_to_" + target;
    cases.push_back(std::move(c));
  }
  return cases;
}

class OpMatrixElementwise : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpMatrixElementwise, Agrees) { ExpectCaseAgrees(GetParam()); }

INSTANTIATE_TEST_SUITE_P(OpMatrix, OpMatrixElementwise,
                         ::testing::ValuesIn(AllCases()), CaseName);

// The matrix must not shrink silently: the dtypes the verifier accepts per
// op (as of writing; a change here is a change of the IR's rules).
TEST(OpMatrixCoverage, ElementwiseOpsTakeTheirDtypes) {
  std::map<std::string, int> per_op;
  for (const OpCase& c : AllCases()) ++per_op[c.op];
  const std::vector<std::pair<std::vector<std::string>, int>> expected = {
      {{"add", "multiply", "maximum", "minimum", "compare", "select", "clamp",
        "copy"},
       13},
      {{"subtract", "divide", "power", "remainder", "negate"}, 12},
      {{"and", "or", "xor", "not"}, 9},  // pred and the integers.
      {{"shift-left", "shift-right-logical", "shift-right-arithmetic", "clz",
        "popcnt"},
       8},                   // The integers.
      {{"abs", "sign"}, 8},  // Signed integers and floats.
      {{"floor", "ceil", "round-nearest-afz", "round-nearest-even", "is-finite",
        "reduce-precision", "atan2"},
       4},  // The floats.
      {{"convert"}, 13 * 13},
      {{"bitcast-convert"}, 39},  // Pairs of equal width.
  };
  for (const auto& [ops, n] : expected) {
    for (const std::string& op : ops) EXPECT_EQ(per_op[op], n) << op;
  }
  for (const UlpOp& u : kTranscendental) EXPECT_EQ(per_op[u.op], 4) << u.op;
}

}  // namespace
}  // namespace trench::codegen::op_matrix
