// select-and-scatter on the simulator against the oracle: every dtype,
// overlapping and padded windows, GE/LE selects, add and non-commutative
// scatters.
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracle;
using testing::kAllTypes;
using testing::SelectAndScatterModule;

struct Case {
  std::string op, src, window;
};

const std::vector<Case> kCases = {
    {"[8]", "[4]", "size=2 stride=2"},
    {"[9]", "[4]", "size=3 stride=2"},  // Overlapping windows.
    {"[7,6]", "[4,3]", "size=2x2 stride=2x2 pad=1_0x0_0"},
    {"[5,7]", "[3,4]", "size=3x3 stride=2x2 pad=1_1x1_1"},
    {"[3,130]", "[3,65]", "size=1x2 stride=1x2"},
};

TEST(SelectAndScatterTest, GeAddEveryType) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    const bool pred = t == "pred";
    const std::string body =
        "  ROOT z = " + t + "[] " + (pred ? "or" : "add") + "(x, y)\n";
    for (const Case& c : kCases) {
      ExpectMatchesOracle(SelectAndScatterModule(t, c.op, c.src, c.window, "GE",
                                                 body, pred ? "false" : "0"),
                          1, ComparisonOptions::Exact());
    }
    ExpectMatchesOracle(
        SelectAndScatterModule(t, kCases[3].op, kCases[3].src, kCases[3].window,
                               "LE", body, pred ? "false" : "1"),
        2, ComparisonOptions::Exact());
  }
}

TEST(SelectAndScatterTest, NonCommutativeScatterKeepsSourceOrder) {
  // scatter(src, acc) = 2 * acc - src... order of overlapping windows
  // matters; the result must follow row-major source order exactly.
  for (const char* t : {"s32", "f32", "s64", "f64", "bf16"}) {
    SCOPED_TRACE(t);
    const std::string body =
        "  two = " + std::string(t) + "[] constant(2)\n  m = " + t +
        "[] multiply(y, two)\n  ROOT z = " + t + "[] subtract(m, x)\n";
    ExpectMatchesOracle(
        SelectAndScatterModule(t, "[9]", "[4]", "size=3 stride=2", "GE", body,
                               "1"),
        3, ComparisonOptions::Exact());
    ExpectMatchesOracle(
        SelectAndScatterModule(t, kCases[3].op, kCases[3].src, kCases[3].window,
                               "GT", body, "0"),
        4, ComparisonOptions::Exact());
  }
}

}  // namespace
}  // namespace trench::codegen
