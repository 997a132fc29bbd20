// pad on the simulator against the oracle, every element type: edge,
// negative-edge and interior padding, the row-DMA and the vscatter paths,
// and padding that crops the operand away entirely.
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracle;
using testing::kAllTypes;
using testing::kExact;

// pad(a: t[in], v: t[]) -> t[out] with `config`.
std::string PadModule(const std::string& t, const std::string& in,
                      const std::string& out, const std::string& config) {
  return "HloModule m\nENTRY e {\n  a = " + t + in +
         " parameter(0)\n  v = " + t + "[] parameter(1)\n  ROOT r = " + t +
         out + " pad(a, v), padding=" + config + "\n}\n";
}

TEST(PadTest, EdgePaddingEveryType) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    // Minor rows of 70 elements stay contiguous: DMA placement.
    ExpectMatchesOracle(PadModule(t, "[3,70]", "[6,73]", "1_2x0_3"), 1, kExact);
    // Short rows: vscatter placement.
    ExpectMatchesOracle(PadModule(t, "[5,7]", "[8,10]", "2_1x3_0"), 2, kExact);
  }
}

TEST(PadTest, NegativeAndInteriorPaddingEveryType) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    // Interior 2 on the minor dim, negative low edge on the major one.
    ExpectMatchesOracle(PadModule(t, "[5,7]", "[6,18]", "-1_2_0x-2_1_2"), 3,
                        kExact);
    // Negative on both edges crops; interior on the major dim only keeps
    // rows contiguous (DMA with a doubled row stride).
    ExpectMatchesOracle(PadModule(t, "[4,80]", "[7,76]", "0_0_1x-3_-1_0"), 4,
                        kExact);
  }
}

TEST(PadTest, RanksOneAndThree) {
  ExpectMatchesOracle(PadModule("f32", "[9]", "[30]", "3_2_2"), 5, kExact);
  ExpectMatchesOracle(
      PadModule("s16", "[2,3,4]", "[5,3,11]", "1_2_0x0_0_0x-1_-1_3"), 6,
      kExact);
}

TEST(PadTest, OperandCroppedAwayOrEmpty) {
  // Every operand element falls outside the result: only padding remains.
  ExpectMatchesOracle(PadModule("f32", "[3]", "[2]", "-5_4"), 8, kExact);
  ExpectMatchesOracle(PadModule("bf16", "[0,3]", "[2,5]", "1_1x1_1"), 9,
                      kExact);
  ExpectMatchesOracle(PadModule("s32", "[4,3]", "[0,3]", "-2_-2x0_0"), 10,
                      kExact);
}

TEST(PadTest, PaddingValueFromAComputedScalar) {
  ExpectMatchesOracle(
      "HloModule m\nENTRY e {\n  a = f64[2,3] parameter(0)\n"
      "  c = f64[] constant(-7.25)\n  ROOT r = f64[4,4] pad(a, c), "
      "padding=1_1x0_1\n}\n",
      11, kExact);
}

}  // namespace
}  // namespace trench::codegen
