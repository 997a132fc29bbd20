// convert (every pair of element types), bitcast-convert (same and
// different widths) and reduce-precision against the oracle, exactly, on
// full-range bits plus special values: saturation, NaN -> 0, wrapping and
// single rounding (e.g. s32/s64/f64 -> bf16 ties that a two-step rounding
// gets wrong).
#include <string>
#include <vector>

#include "tests/compiler/codegen/elementwise_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracle;
using testing::ExpectMatchesOracleFullRange;
using testing::ExpectMatchesOracleOn;
using testing::Unary;

const std::vector<std::string> kTypes = {"pred", "s8",  "s16", "s32", "s64",
                                         "u8",   "u16", "u32", "u64", "f16",
                                         "bf16", "f32", "f64"};

TEST(ElementwiseConvertTest, EveryPairFullRange) {
  for (const std::string& from : kTypes) {
    for (const std::string& to : kTypes) {
      ExpectMatchesOracleFullRange(Unary("convert", from, "[3,130]", to), 1);
    }
  }
}

TEST(ElementwiseConvertTest, EveryPairSmallValuesAndShapes) {
  for (const std::string& from : kTypes) {
    for (const std::string& to : kTypes) {
      ExpectMatchesOracle(Unary("convert", from, "[]", to), 2,
                          ComparisonOptions::Exact());
      ExpectMatchesOracle(Unary("convert", from, "[1030]", to), 2,
                          ComparisonOptions::Exact());
    }
  }
}

TEST(ElementwiseConvertTest, IntegersToBf16RoundOnce) {
  // 16842753 = 0x01010001 = 2^24 + 2^16 + 1 is just above a bf16 tie
  // (2^24 + 2^16); rounding to f32 first (ulp 2 there) lands exactly on the
  // tie, which then rounds to even (down): the right answer is up.
  const std::string text =
      "HloModule m\nENTRY e {\n"
      "  a = s32[6] constant({16842753, -16842753, 16842752, 2147483647, "
      "-2147483648, 8421377})\n"
      "  ROOT r = bf16[6] convert(a)\n}\n";
  ExpectMatchesOracle(text, 1, ComparisonOptions::Exact());
  const std::string wide =
      "HloModule m\nENTRY e {\n"
      "  a = s64[5] constant({72057594037927937, 72339069014638593, "
      "-72339069014638593, 9223372036854775807, -9223372036854775808})\n"
      "  ROOT r = bf16[5] convert(a)\n}\n";
  ExpectMatchesOracle(wide, 1, ComparisonOptions::Exact());
  const std::string f64 =
      "HloModule m\nENTRY e {\n"
      "  a = f64[4] constant({1.0039062500000002, 1.00390625, "
      "-1.0039062500000002, 1e300})\n"
      "  ROOT r = bf16[4] convert(a)\n}\n";
  ExpectMatchesOracle(f64, 1, ComparisonOptions::Exact());
}

TEST(ElementwiseConvertTest, FloatToIntSaturatesAndMapsNanToZero) {
  const std::string vals =
      "{nan, -nan, inf, -inf, 1e30, -1e30, 127.9, -128.9, 255.5, -0.5, "
      "65535.9, 2147483647, -2147483648}";
  for (std::string from : {"f32", "f64"}) {
    for (std::string to :
         {"s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"}) {
      ExpectMatchesOracle("HloModule m\nENTRY e {\n  a = " + from +
                              "[13] constant(" + vals + ")\n  ROOT r = " + to +
                              "[13] convert(a)\n}\n",
                          1, ComparisonOptions::Exact());
    }
  }
}

TEST(ElementwiseConvertTest, BitcastConvertSameWidth) {
  const std::vector<std::vector<std::string>> groups = {
      {"s8", "u8"},
      {"s16", "u16", "f16", "bf16"},
      {"s32", "u32", "f32"},
      {"s64", "u64", "f64"}};
  for (const auto& g : groups) {
    for (const std::string& from : g) {
      for (const std::string& to : g) {
        ExpectMatchesOracleFullRange(
            Unary("bitcast-convert", from, "[3,130]", to), 3);
      }
    }
  }
}

TEST(ElementwiseConvertTest, BitcastConvertDifferentWidths) {
  const std::vector<std::vector<std::string>> cases = {
      {"f32[3,130]", "u8[3,130,4]"}, {"u8[3,130,4]", "f32[3,130]"},
      {"f64[129]", "s32[129,2]"},    {"s16[7,2]", "f32[7]"},
      {"bf16[5,4]", "u64[5]"},       {"u64[]", "bf16[4]"}};
  for (const auto& c : cases) {
    ExpectMatchesOracleFullRange("HloModule m\nENTRY e {\n  a = " + c[0] +
                                     " parameter(0)\n  ROOT r = " + c[1] +
                                     " bitcast-convert(a)\n}\n",
                                 4);
  }
}

TEST(ElementwiseConvertTest, ReducePrecision) {
  const std::vector<std::pair<int, int>> formats = {
      {8, 7}, {5, 10}, {8, 23}, {11, 52}, {4, 3}, {5, 2},
      {1, 0}, {8, 0},  {2, 1},  {11, 20}, {6, 30}};
  for (std::string t : {"f32", "f64", "bf16", "f16"}) {
    for (const auto& [e, m] : formats) {
      ExpectMatchesOracleFullRange(
          Unary("reduce-precision", t, "[3,130]", "",
                ", exponent_bits=" + std::to_string(e) +
                    ", mantissa_bits=" + std::to_string(m)),
          5);
    }
  }
}

TEST(ElementwiseConvertTest, ExplicitArguments) {
  // Round trip of every u16 bit pattern through f16 -> f32 -> f16.
  Literal l(Shape(PrimitiveType::U16, {65536}));
  for (int i = 0; i < 65536; ++i) {
    const uint16_t v = static_cast<uint16_t>(i);
    std::memcpy(l.mutable_bytes().data() + 2 * i, &v, 2);
  }
  std::vector<Literal> args;
  args.push_back(std::move(l));
  ExpectMatchesOracleOn(
      "HloModule m\nENTRY e {\n  a = u16[65536] parameter(0)\n"
      "  h = f16[65536] bitcast-convert(a)\n"
      "  f = f32[65536] convert(h)\n"
      "  ROOT r = bf16[65536] convert(f)\n}\n",
      args, ComparisonOptions::Exact());
}

}  // namespace
}  // namespace trench::codegen
