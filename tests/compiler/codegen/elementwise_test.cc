// Elementwise ops on the simulator against the oracle, over ragged shapes.
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracle;
using testing::F32Ulps;

// Shapes whose minor dims hit every tile edge case.
const std::vector<std::string>& Shapes() {
  static const auto* shapes = new std::vector<std::string>{
      "[]",      "[1]",     "[7]",     "[8]",       "[9]",
      "[127]",   "[128]",   "[129]",   "[300]",     "[1,1]",
      "[3,300]", "[9,129]", "[2,1,7]", "[2,3,128]", "[1,1025]"};
  return *shapes;
}

std::string Binary(const std::string& op, const std::string& t,
                   const std::string& dims, const std::string& out_t = "") {
  std::string s = t + dims, o = (out_t.empty() ? t : out_t) + dims;
  return "HloModule m\nENTRY e {\n  a = " + s + " parameter(0)\n  b = " + s +
         " parameter(1)\n  ROOT r = " + o + " " + op + "(a, b)\n}\n";
}

std::string Unary(const std::string& op, const std::string& t,
                  const std::string& dims, const std::string& out_t = "") {
  std::string s = t + dims, o = (out_t.empty() ? t : out_t) + dims;
  return "HloModule m\nENTRY e {\n  a = " + s +
         " parameter(0)\n  ROOT r = " + o + " " + op + "(a)\n}\n";
}

TEST(ElementwiseTest, ExactBinaryOps) {
  for (std::string op : {"add", "subtract", "multiply", "maximum", "minimum"}) {
    for (std::string t : {"f32", "s32", "u32", "bf16", "f16"}) {
      for (const std::string& d : Shapes()) {
        ExpectMatchesOracle(Binary(op, t, d), 7, ComparisonOptions::Exact());
      }
    }
  }
}

TEST(ElementwiseTest, IntegerOnlyBinaryOps) {
  for (std::string op :
       {"and", "or", "xor", "shift-left", "shift-right-arithmetic",
        "shift-right-logical", "divide", "remainder"}) {
    for (std::string t : {"s32", "u32"}) {
      for (std::string d : {"[1]", "[129]", "[9,300]"}) {
        ExpectMatchesOracle(Binary(op, t, d), 3, ComparisonOptions::Exact());
      }
    }
  }
  for (std::string op : {"and", "or", "xor"}) {
    ExpectMatchesOracle(Binary(op, "pred", "[3,129]"), 5,
                        ComparisonOptions::Exact());
  }
}

TEST(ElementwiseTest, FloatDivisionWithinOneUlp) {
  for (const std::string& d : Shapes()) {
    ExpectMatchesOracle(Binary("divide", "f32", d), 11, F32Ulps(1));
  }
}

TEST(ElementwiseTest, UnaryOpsWithinDocumentedUlps) {
  // Bounds from tpu/ISA.md (transcendental unit); exact ops get 0.
  const std::vector<std::pair<std::string, double>> ops = {
      {"negate", 0},
      {"abs", 0},
      {"floor", 0},
      {"ceil", 0},
      {"exponential", 2},
      {"log", 2},
      {"tanh", 3},
      {"logistic", 3},
      {"sqrt", 1},
      {"rsqrt", 2},
      {"sine", 2},
      {"cosine", 2},
      {"sign", 0},
      {"round-nearest-even", 0},
      {"round-nearest-afz", 0},
      {"exponential-minus-one", 2},
      {"log-plus-one", 3}};
  for (const auto& [op, ulps] : ops) {
    for (std::string d : {"[]", "[7]", "[129]", "[2,9,300]"}) {
      ExpectMatchesOracle(
          Unary(op, "f32", d), 13,
          ulps == 0 ? ComparisonOptions::Exact() : F32Ulps(ulps));
    }
  }
}

TEST(ElementwiseTest, NarrowFloatUnaryOps) {
  // Computed in f32 and rounded once to the narrow type.
  for (std::string t : {"bf16", "f16"}) {
    for (std::string op : {"negate", "exponential", "tanh", "sqrt"}) {
      ExpectMatchesOracle(Unary(op, t, "[9,129]"), 17);
    }
  }
}

TEST(ElementwiseTest, IntegerUnaryOps) {
  ExpectMatchesOracle(Unary("negate", "s32", "[300]"), 1,
                      ComparisonOptions::Exact());
  ExpectMatchesOracle(Unary("abs", "s32", "[300]"), 1,
                      ComparisonOptions::Exact());
  for (std::string t : {"s32", "u32", "pred"}) {
    ExpectMatchesOracle(Unary("not", t, "[8,129]"), 2,
                        ComparisonOptions::Exact());
  }
}

TEST(ElementwiseTest, CompareAllDirections) {
  for (std::string dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    for (std::string t : {"f32", "s32", "u32", "bf16"}) {
      for (std::string d : {"[1]", "[129]", "[3,300]"}) {
        std::string text = "HloModule m\nENTRY e {\n  a = " + t + d +
                           " parameter(0)\n  b = " + t + d +
                           " parameter(1)\n  ROOT r = pred" + d +
                           " compare(a, b), direction=" + dir + "\n}\n";
        ExpectMatchesOracle(text, 21, ComparisonOptions::Exact());
      }
    }
  }
}

TEST(ElementwiseTest, Select) {
  for (std::string t : {"f32", "s32", "bf16", "pred"}) {
    for (std::string d : {"[]", "[9]", "[7,129]"}) {
      std::string text =
          "HloModule m\nENTRY e {\n  p = pred" + d +
          " parameter(0)\n  a = " + t + d + " parameter(1)\n  b = " + t + d +
          " parameter(2)\n  ROOT r = " + t + d + " select(p, a, b)\n}\n";
      ExpectMatchesOracle(text, 4, ComparisonOptions::Exact());
    }
  }
}

TEST(ElementwiseTest, ConvertAmongTypes) {
  const std::vector<std::string> types = {"f32",  "s32", "u32",
                                          "bf16", "f16", "pred"};
  for (const std::string& from : types) {
    for (const std::string& to : types) {
      ExpectMatchesOracle(Unary("convert", from, "[9,129]", to), 31,
                          ComparisonOptions::Exact());
    }
  }
}

TEST(ElementwiseTest, MoreTranscendentalsWithinDocumentedUlps) {
  const std::vector<std::pair<std::string, double>> unary = {
      {"cbrt", 1}, {"tan", 4}, {"erf", 4}};
  for (const auto& [op, ulps] : unary) {
    ExpectMatchesOracle(Unary(op, "f32", "[3,300]"), 19, F32Ulps(ulps));
  }
  ExpectMatchesOracle(Binary("atan2", "f32", "[3,300]"), 19, F32Ulps(3));
  ExpectMatchesOracle(Binary("power", "f32", "[3,300]"), 19, F32Ulps(2));
  ExpectMatchesOracle(Binary("remainder", "f32", "[3,300]"), 19,
                      ComparisonOptions::Exact());
}

TEST(ElementwiseTest, BitCountsAndClamp) {
  for (std::string t : {"s32", "u32"}) {
    for (std::string op : {"popcnt", "count-leading-zeros"}) {
      ExpectMatchesOracle(Unary(op, t, "[9,129]"), 23,
                          ComparisonOptions::Exact());
    }
  }
  for (std::string t : {"f32", "s32", "bf16"}) {
    std::string s = t + "[7,129]";
    ExpectMatchesOracle(
        "HloModule m\nENTRY e {\n  lo = " + s + " parameter(0)\n  x = " + s +
            " parameter(1)\n  hi = " + s + " parameter(2)\n  ROOT r = " + s +
            " clamp(lo, x, hi)\n}\n",
        29, ComparisonOptions::Exact());
  }
}

TEST(ElementwiseTest, UnsupportedIsAClearError) {
  auto m = testing::Parse(Unary("sinh", "f32", "[4]"));
  ASSERT_NE(m, nullptr);
  auto exe = CompileModule(*m, CompileOptions());
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(exe.status().message(), "hloc: cannot compile sinh for f32");
  // Complex transcendentals: refused like the oracle does.
  auto m2 = testing::Parse(Unary("exponential", "c64", "[4]"));
  ASSERT_NE(m2, nullptr);
  auto exe2 = CompileModule(*m2, CompileOptions());
  ASSERT_FALSE(exe2.ok());
  EXPECT_EQ(exe2.status().message(),
            "hloc: cannot compile exponential for c64");
}

}  // namespace
}  // namespace trench::codegen
