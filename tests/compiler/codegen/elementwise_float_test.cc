// Float elementwise ops on f32, f64, bf16 and f16 against the oracle. Exact
// ops compare bit for bit (NaNs of any payload match) on full-range bits
// plus every pair of special values (NaN, +-inf, +-0, extremes,
// subnormals, halves); transcendentals within tpu/ISA.md's ulp bounds on
// f32, exactly on f64 (host libm on both sides), and within one ulp of the
// narrow type on bf16/f16 (computed in f32, rounded once).
#include <string>
#include <utility>
#include <vector>

#include "tests/compiler/codegen/elementwise_test_util.h"

namespace trench::codegen {
namespace {

using testing::Binary;
using testing::ExpectMatchesOracle;
using testing::ExpectMatchesOracleFullRange;
using testing::F32Ulps;
using testing::Unary;

const std::vector<std::string> kFloats = {"f32", "f64", "bf16", "f16"};

TEST(ElementwiseFloatTest, ExactBinaryOpsFullRange) {
  for (std::string op :
       {"add", "subtract", "multiply", "remainder", "maximum", "minimum"}) {
    for (const std::string& t : kFloats) {
      ExpectMatchesOracleFullRange(Binary(op, t, "[3,130]"), 1);
    }
  }
  ExpectMatchesOracleFullRange(Binary("divide", "f64", "[3,130]"), 1);
}

TEST(ElementwiseFloatTest, DivisionWithinOneUlp) {
  ExpectMatchesOracleFullRange(Binary("divide", "f32", "[3,130]"), 2,
                               F32Ulps(1));
  for (std::string t : {"bf16", "f16"}) {
    ExpectMatchesOracleFullRange(Binary("divide", t, "[3,130]"), 2,
                                 ComparisonOptions());
  }
}

TEST(ElementwiseFloatTest, ExactUnaryOpsFullRange) {
  for (std::string op : {"negate", "abs", "sign", "floor", "ceil",
                         "round-nearest-afz", "round-nearest-even"}) {
    for (const std::string& t : kFloats) {
      ExpectMatchesOracleFullRange(Unary(op, t, "[3,130]"), 3);
    }
  }
}

TEST(ElementwiseFloatTest, IsFinite) {
  for (const std::string& t : kFloats) {
    ExpectMatchesOracleFullRange(Unary("is-finite", t, "[3,130]", "pred"), 4);
  }
}

// Unary transcendentals with their f32 bounds (tpu/ISA.md).
const std::vector<std::pair<std::string, double>>& Transcendentals() {
  static const auto* ops = new std::vector<std::pair<std::string, double>>{
      {"exponential", 2}, {"exponential-minus-one", 2},
      {"log", 2},         {"log-plus-one", 3},
      {"tanh", 3},        {"logistic", 3},
      {"sine", 2},        {"cosine", 2},
      {"tan", 4},         {"sqrt", 1},
      {"rsqrt", 2},       {"cbrt", 1},
      {"erf", 4}};
  return *ops;
}

TEST(ElementwiseFloatTest, TranscendentalsOnRandomInputs) {
  for (const auto& [op, ulps] : Transcendentals()) {
    ExpectMatchesOracle(Unary(op, "f32", "[3,130]"), 5, F32Ulps(ulps));
    ExpectMatchesOracle(Unary(op, "f64", "[1030]"), 5,
                        ComparisonOptions::Exact());
    ExpectMatchesOracle(Unary(op, "bf16", "[3,130]"), 5);
    ExpectMatchesOracle(Unary(op, "f16", "[]"), 5);
  }
  ExpectMatchesOracle(Binary("atan2", "f32", "[3,130]"), 5, F32Ulps(3));
  ExpectMatchesOracle(Binary("power", "f32", "[3,130]"), 5, F32Ulps(2));
  for (std::string op : {"atan2", "power"}) {
    ExpectMatchesOracle(Binary(op, "f64", "[3,130]"), 5,
                        ComparisonOptions::Exact());
    ExpectMatchesOracle(Binary(op, "bf16", "[3,130]"), 5);
    ExpectMatchesOracle(Binary(op, "f16", "[3,130]"), 5);
  }
}

TEST(ElementwiseFloatTest, TranscendentalsOnSpecialValues) {
  // Every f32 bit pattern class: NaN/inf/zero patterns must match and
  // finite results stay within the documented bounds.
  for (const auto& [op, ulps] : Transcendentals()) {
    ExpectMatchesOracleFullRange(Unary(op, "f32", "[3,130]"), 6, F32Ulps(ulps));
    ExpectMatchesOracleFullRange(Unary(op, "f64", "[3,130]"), 6);
  }
  ExpectMatchesOracleFullRange(Binary("atan2", "f32", "[3,130]"), 6,
                               F32Ulps(3));
}

TEST(ElementwiseFloatTest, PowerSpecialCases) {
  // x^0 = 1 and 1^y = 1 even for NaN; pow's C99 cases otherwise.
  const std::string text =
      "HloModule m\nENTRY e {\n"
      "  a = f32[12] constant({nan, 1, 0, -0, inf, -inf, -1, -1, 2, 0, -0, "
      "-2})\n"
      "  b = f32[12] constant({0, nan, -1, -1, -2, 3, inf, 0.5, -inf, 0, 3, "
      "3})\n"
      "  ROOT r = f32[12] power(a, b)\n}\n";
  ExpectMatchesOracle(text, 1, F32Ulps(2));
}

TEST(ElementwiseFloatTest, CompareFloatAndTotalOrder) {
  for (std::string dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    for (const std::string& t : kFloats) {
      for (std::string type : {"FLOAT", "TOTALORDER"}) {
        ExpectMatchesOracleFullRange(
            Binary("compare", t, "[3,130]", "pred",
                   ", direction=" + dir + ", type=" + type),
            7);
      }
    }
  }
}

TEST(ElementwiseFloatTest, NarrowChainsRoundAfterEachOp) {
  // (a * b) + a in bf16 rounds the product before the add.
  for (std::string t : {"bf16", "f16"}) {
    const std::string s = t + "[3,130]";
    ExpectMatchesOracle(
        "HloModule m\nENTRY e {\n  a = " + s + " parameter(0)\n  b = " + s +
            " parameter(1)\n  p = " + s + " multiply(a, b)\n  ROOT r = " + s +
            " add(p, a)\n}\n",
        8, ComparisonOptions::Exact());
  }
}

TEST(ElementwiseFloatTest, RaggedShapes) {
  for (std::string d : {"[]", "[1]", "[127]", "[1030]", "[2,9,131]"}) {
    for (const std::string& t : kFloats) {
      ExpectMatchesOracle(Binary("add", t, d), 9, ComparisonOptions::Exact());
      ExpectMatchesOracle(Unary("exponential", t, d), 9,
                          t == "f32" ? F32Ulps(2) : ComparisonOptions());
    }
  }
}

}  // namespace
}  // namespace trench::codegen
