// sort on the simulator against the oracle: every dtype, any sort
// dimension, multi-operand (key + payload, stability visible through the
// payload on the many equal keys of random integers), computed
// comparators.
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracle;
using testing::kAllTypes;
using testing::SortModule;

TEST(SortTest, EveryTypeStableWithPayload) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesOracle(SortModule(t, "[37]", 0, "LT", true), 1,
                        ComparisonOptions::Exact());
    ExpectMatchesOracle(SortModule(t, "[5,13]", 1, "GT", true), 2,
                        ComparisonOptions::Exact());
    ExpectMatchesOracle(SortModule(t, "[6,3,4]", 0, "LT", false), 3,
                        ComparisonOptions::Exact());
    ExpectMatchesOracle(SortModule(t, "[2,9,3]", 1, "GT", false), 4,
                        ComparisonOptions::Exact());
  }
}

TEST(SortTest, EdgeLengths) {
  ExpectMatchesOracle(SortModule("f32", "[1]", 0, "LT", true), 5,
                      ComparisonOptions::Exact());
  ExpectMatchesOracle(SortModule("s32", "[4,1]", 1, "LT", true), 5,
                      ComparisonOptions::Exact());
  ExpectMatchesOracle(SortModule("s32", "[0,3]", 1, "LT", true), 5,
                      ComparisonOptions::Exact());
  ExpectMatchesOracle(SortModule("s8", "[1100,2]", 0, "LT", true), 5,
                      ComparisonOptions::Exact());
  // More rows than one tile: 1030 rows of 3.
  ExpectMatchesOracle(SortModule("f32", "[1030,3]", 1, "GT", true), 5,
                      ComparisonOptions::Exact());
}

TEST(SortTest, ComputedComparatorOverTwoKeys) {
  // Lexicographic: by |a| descending... then by the second key ascending,
  // the payload of each rides along. Ties remain (stable).
  for (const char* t : {"f32", "bf16", "s16", "u8", "s64", "f64"}) {
    SCOPED_TRACE(t);
    const bool is_unsigned = t[0] == 'u';
    const std::string abs_a = is_unsigned ? "a" : "aa";
    const std::string abs_b = is_unsigned ? "b" : "ab";
    std::string text = "HloModule m\ncmp {\n  a = " + std::string(t) +
                       "[] parameter(0)\n  b = " + t +
                       "[] parameter(1)\n  c = s32[] parameter(2)\n"
                       "  d = s32[] parameter(3)\n";
    if (!is_unsigned) {
      text +=
          "  aa = " + std::string(t) + "[] abs(a)\n  ab = " + t + "[] abs(b)\n";
    }
    text += "  gt = pred[] compare(" + abs_a + ", " + abs_b +
            "), direction=GT\n  eq = pred[] compare(" + abs_a + ", " + abs_b +
            "), direction=EQ\n  lt = pred[] compare(c, d), direction=LT\n"
            "  tie = pred[] and(eq, lt)\n  ROOT r = pred[] or(gt, tie)\n}\n"
            "ENTRY e {\n  k = " +
            t +
            "[4,21] parameter(0)\n"
            "  v = s32[4,21] parameter(1)\n  ROOT r = (" +
            t +
            "[4,21], s32[4,21]) sort(k, v), dimensions={1}, to_apply=cmp\n}\n";
    ExpectMatchesOracle(text, 6, ComparisonOptions::Exact());
  }
}

// A lexicographic compare of 16 keys (34 comparator parameters with the
// payload's, more than the 28 vector registers): the parameters are loaded
// where the comparator reads them. Keys of five values each, so that later
// keys decide many rows; a payload shows stability.
TEST(SortTest, LexicographicComparatorOverSixteenKeys) {
  constexpr int kKeys = 16;
  for (const char* t : {"s32", "f32", "s64"}) {
    SCOPED_TRACE(t);
    const std::string ty = t;
    std::string text = "HloModule m\ncmp {\n";
    for (int i = 0; i < 2 * kKeys + 2; ++i) {
      text += "  p" + std::to_string(i) + " = " + (i < 2 * kKeys ? ty : "s32") +
              "[] parameter(" + std::to_string(i) + ")\n";
    }
    auto p = [](int i) { return "p" + std::to_string(i); };
    text +=
        "  r15 = pred[] compare(" + p(30) + ", " + p(31) + "), direction=LT\n";
    for (int k = kKeys - 2; k >= 0; --k) {
      const std::string n = std::to_string(k);
      text += "  lt" + n + " = pred[] compare(" + p(2 * k) + ", " +
              p(2 * k + 1) + "), direction=LT\n  eq" + n +
              " = pred[] compare(" + p(2 * k) + ", " + p(2 * k + 1) +
              "), direction=EQ\n  an" + n + " = pred[] and(eq" + n + ", r" +
              std::to_string(k + 1) + ")\n  r" + n + " = pred[] or(lt" + n +
              ", an" + n + ")\n";
    }
    text += "  ROOT c = pred[] copy(r0)\n}\nENTRY e {\n  three = " + ty +
            "[] constant(3)\n  b3 = " + ty +
            "[8,130] broadcast(three), dimensions={}\n";
    std::string types, keys;
    for (int i = 0; i < kKeys; ++i) {
      const std::string n = std::to_string(i);
      // Integers -2..2 (as the key type): a random value's remainder by 3.
      text += "  x" + n + " = s32[8,130] parameter(" + n + ")\n  c" + n +
              " = " + ty + "[8,130] convert(x" + n + ")\n  k" + n + " = " + ty +
              "[8,130] remainder(c" + n + ", b3)\n";
      types += ty + "[8,130], ";
      keys += "k" + n + ", ";
    }
    text += "  v = s32[8,130] iota(), iota_dimension=1\n  ROOT r = (" + types +
            "s32[8,130]) sort(" + keys +
            "v), dimensions={1}, to_apply=cmp\n}\n";
    ExpectMatchesOracle(text, 7, ComparisonOptions::Exact());
  }
}

}  // namespace
}  // namespace trench::codegen
