// reduce-window on the simulator against the oracle: every dtype, every
// window attribute (size, stride, padding, base and window dilation), single
// op and computed reducers, variadic.
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracle;
using testing::kAllTypes;
using testing::ReducerRoot;
using testing::ReduceWindowModule;
using testing::SumOfSquaresRoot;

struct Case {
  std::string in, out, window;
};

const std::vector<Case> kCases = {
    {"[10]", "[9]", "size=2"},
    {"[10]", "[4]", "size=3 stride=2"},
    {"[7,9]", "[4,5]", "size=2x3 stride=2x2 pad=1_0x1_1"},
    {"[5,6]", "[8,6]", "size=2x2 pad=0_0x1_0 lhs_dilate=2x1"},
    {"[6,7]", "[3,3]", "size=2x2 stride=1x2 rhs_dilate=3x2"},
    {"[4,5,3]", "[5,4,3]",
     "size=2x3x1 stride=1x2x1 pad=1_1x1_1x0_0 "
     "lhs_dilate=1x2x1 rhs_dilate=1x2x1"},
    {"[3,150]", "[3,150]", "size=1x3 pad=0_0x1_1"},
    {"[3,4]", "[5,4]", "size=2x1 pad=3_0x0_0"},
};

TEST(ReduceWindowTest, AddMaxEveryTypeEveryWindow) {
  ComparisonOptions sum_tol;
  sum_tol.f32 = {1e-5, 1e-5};
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    const bool pred = t == "pred";
    for (const Case& c : kCases) {
      ExpectMatchesOracle(
          ReduceWindowModule(t, c.in, c.out, c.window,
                             ReducerRoot(t, pred ? "or" : "add"),
                             pred ? "false" : "2"),
          1, sum_tol);
      ExpectMatchesOracle(
          ReduceWindowModule(t, c.in, c.out, c.window,
                             ReducerRoot(t, pred ? "and" : "maximum"),
                             pred ? "true" : "2"),
          2, ComparisonOptions::Exact());
    }
  }
}

TEST(ReduceWindowTest, ComputedReducersEveryType) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    const std::string body = SumOfSquaresRoot(t);
    for (size_t k : {1, 3, 5}) {
      const Case& c = kCases[k];
      ExpectMatchesOracle(ReduceWindowModule(t, c.in, c.out, c.window, body,
                                             t == "pred" ? "false" : "1"),
                          3, ComparisonOptions::Exact());
    }
    if (t != "pred") {
      ExpectMatchesOracle(
          ReduceWindowModule(t, kCases[2].in, kCases[2].out, kCases[2].window,
                             ReducerRoot(t, "minimum"), "3"),
          4, ComparisonOptions::Exact());
    }
  }
}

TEST(ReduceWindowTest, VariadicArgMaxInWindows) {
  for (const char* t : {"f32", "bf16", "s8", "u64", "f64"}) {
    const std::string text =
        std::string("HloModule m\nargmax {\n  a = ") + t +
        "[] parameter(0)\n  b = s32[] parameter(1)\n  c = " + t +
        "[] parameter(2)\n  d = s32[] parameter(3)\n"
        "  keep = pred[] compare(a, c), direction=GE\n  v = " +
        t +
        "[] select(keep, a, c)\n  i = s32[] select(keep, b, d)\n"
        "  ROOT r = (" +
        t +
        "[], s32[]) tuple(v, i)\n}\n"
        "ENTRY e {\n  x = " +
        t +
        "[6,9] parameter(0)\n"
        "  n = s32[6,9] iota(), iota_dimension=1\n  lo = " +
        t + "[] constant(0)\n  z = s32[] constant(-1)\n  ROOT r = (" + t +
        "[3,5], s32[3,5]) reduce-window(x, n, lo, z), "
        "window={size=2x3 stride=2x2 pad=0_0x1_1}, to_apply=argmax\n}\n";
    SCOPED_TRACE(t);
    ExpectMatchesOracle(text, 5, ComparisonOptions::Exact());
  }
}

}  // namespace
}  // namespace trench::codegen
