// Integer and pred elementwise ops on every integer width against the
// oracle: full-range random bits plus every pair of special values (0, 1,
// -1, INT_MIN, INT_MAX, ...), so division by zero, INT_MIN / -1, shifts by
// >= the width and wrapping are all exercised; exact comparison.
#include <string>
#include <vector>

#include "tests/compiler/codegen/elementwise_test_util.h"

namespace trench::codegen {
namespace {

using testing::Binary;
using testing::ExpectMatchesOracle;
using testing::ExpectMatchesOracleFullRange;
using testing::Unary;

const std::vector<std::string> kInts = {"s8", "s16", "s32", "s64",
                                        "u8", "u16", "u32", "u64"};
const std::vector<std::string> kSigned = {"s8", "s16", "s32", "s64"};

TEST(ElementwiseIntTest, ArithmeticFullRange) {
  for (std::string op : {"add", "subtract", "multiply", "divide", "remainder",
                         "maximum", "minimum"}) {
    for (const std::string& t : kInts) {
      ExpectMatchesOracleFullRange(Binary(op, t, "[3,130]"), 1);
    }
  }
}

TEST(ElementwiseIntTest, BitOpsAndShiftsFullRange) {
  for (std::string op : {"and", "or", "xor", "shift-left",
                         "shift-right-logical", "shift-right-arithmetic"}) {
    for (const std::string& t : kInts) {
      ExpectMatchesOracleFullRange(Binary(op, t, "[3,130]"), 2);
    }
  }
}

TEST(ElementwiseIntTest, ShiftsBySmallAmounts) {
  // RandomArguments draws in [-8, 7] (signed) or [0, 15] (unsigned): most
  // shift amounts are in range, negative ones read as huge unsigned.
  for (std::string op :
       {"shift-left", "shift-right-logical", "shift-right-arithmetic"}) {
    for (const std::string& t : kInts) {
      ExpectMatchesOracle(Binary(op, t, "[1030]"), 3,
                          ComparisonOptions::Exact());
    }
  }
}

TEST(ElementwiseIntTest, PowerWrapsAndHandlesNegativeExponents) {
  for (const std::string& t : kInts) {
    ExpectMatchesOracle(Binary("power", t, "[3,130]"), 4,
                        ComparisonOptions::Exact());
    ExpectMatchesOracleFullRange(Binary("power", t, "[2,64]"), 5);
  }
}

TEST(ElementwiseIntTest, UnaryOps) {
  for (const std::string& t : kInts) {
    for (std::string op : {"negate", "not", "popcnt", "count-leading-zeros"}) {
      ExpectMatchesOracleFullRange(Unary(op, t, "[3,130]"), 6);
    }
  }
  for (const std::string& t : kSigned) {
    for (std::string op : {"abs", "sign"}) {
      ExpectMatchesOracleFullRange(Unary(op, t, "[3,130]"), 7);
    }
  }
}

TEST(ElementwiseIntTest, RaggedShapes) {
  for (std::string d : {"[]", "[1]", "[129]", "[1030]", "[2,3,131]"}) {
    for (std::string t : {"s8", "u16", "s64", "u64"}) {
      ExpectMatchesOracle(Binary("multiply", t, d), 8,
                          ComparisonOptions::Exact());
      ExpectMatchesOracleFullRange(Binary("subtract", t, d), 9);
    }
  }
}

TEST(ElementwiseIntTest, CompareSignedAndUnsigned) {
  for (std::string dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    for (const std::string& t : kInts) {
      const std::string type = t[0] == 's' ? "SIGNED" : "UNSIGNED";
      ExpectMatchesOracleFullRange(
          Binary("compare", t, "[3,130]", "pred",
                 ", direction=" + dir + ", type=" + type),
          10);
    }
  }
}

TEST(ElementwiseIntTest, PredOps) {
  for (std::string op :
       {"and", "or", "xor", "add", "multiply", "maximum", "minimum"}) {
    ExpectMatchesOracle(Binary(op, "pred", "[3,130]"), 11,
                        ComparisonOptions::Exact());
  }
  ExpectMatchesOracle(Unary("not", "pred", "[1030]"), 12,
                      ComparisonOptions::Exact());
  for (std::string dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    ExpectMatchesOracle(
        Binary("compare", "pred", "[3,130]", "pred", ", direction=" + dir), 13,
        ComparisonOptions::Exact());
  }
}

std::string Ternary(const std::string& op, const std::string& t0,
                    const std::string& d0, const std::string& t,
                    const std::string& d, const std::string& d2) {
  return "HloModule m\nENTRY e {\n  a = " + t0 + d0 +
         " parameter(0)\n  b = " + t + d + " parameter(1)\n  c = " + t + d2 +
         " parameter(2)\n  ROOT r = " + t + d + " " + op + "(a, b, c)\n}\n";
}

TEST(ElementwiseIntTest, SelectAndClampEveryType) {
  for (std::string t : {"pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32",
                        "u64", "bf16", "f16", "f32", "f64"}) {
    for (std::string d : {"[]", "[3,130]"}) {
      ExpectMatchesOracleFullRange(Ternary("select", "pred", d, t, d, d), 14);
      // clamp(lo, x, hi), array and scalar bounds.
      std::string clamp =
          "HloModule m\nENTRY e {\n  lo = " + t + d +
          " parameter(0)\n  x = " + t + d + " parameter(1)\n  hi = " + t + d +
          " parameter(2)\n  ROOT r = " + t + d + " clamp(lo, x, hi)\n}\n";
      ExpectMatchesOracleFullRange(clamp, 15);
      ExpectMatchesOracle(clamp, 16, ComparisonOptions::Exact());
    }
    std::string scalar_bounds =
        "HloModule m\nENTRY e {\n  lo = " + t + "[] parameter(0)\n  x = " + t +
        "[3,130] parameter(1)\n  hi = " + t +
        "[] parameter(2)\n  ROOT r = " + t + "[3,130] clamp(lo, x, hi)\n}\n";
    ExpectMatchesOracle(scalar_bounds, 17, ComparisonOptions::Exact());
  }
}

}  // namespace
}  // namespace trench::codegen
