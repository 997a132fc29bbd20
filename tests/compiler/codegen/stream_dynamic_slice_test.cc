// dynamic-slice and dynamic-update-slice of narrow windows whose span
// (the HBM from the window's first to its last element) does not fit in
// VMEM with the window (compiler/codegen/emit_dynamic_slice.cc): with 64
// KiB of VMEM (compiler and simulator alike) the window moves HBM to HBM
// in short DMA chunks. Every element type, starts clamped on both sides
// (spread past both ends), out of place and in place, against the oracle
// exactly.
#include <string>
#include <vector>

#include "tests/compiler/codegen/streaming_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracleWithVmem;
using testing::kAllTypes;
using testing::kExact;
using testing::SpreadIndices;

constexpr int64_t kVmem = 64 << 10;

// Start index lines x (param 1) and y (param 2), spread by `k`.
std::string Starts(int k) {
  return SpreadIndices("x", "s32", "[]", 1, k) +
         SpreadIndices("y", "s32", "[]", 2, k);
}

TEST(StreamDynamicSliceTest, NarrowWindowsOfLargeArraysEveryType) {
  uint64_t seed = 1;
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    // Rows of 3 elements (under a DMA-worthy run), spanning 250 of the
    // 300 rows of 200: far more than 64 KiB for every type.
    for (int k : {7, 40}) {
      ExpectMatchesOracleWithVmem("HloModule m\nENTRY e {\n  a = " + t +
                                      "[300,200] parameter(0)\n" + Starts(k) +
                                      "  ROOT d = " + t +
                                      "[250,3] dynamic-slice(a, x, y), "
                                      "dynamic_slice_sizes={250,3}\n}\n",
                                  seed++, kExact, kVmem);
      ExpectMatchesOracleWithVmem(
          "HloModule m\nENTRY e {\n  a = " + t + "[300,200] parameter(0)\n" +
              Starts(k) + "  u = " + t + "[250,3] parameter(3)\n  ROOT d = " +
              t + "[300,200] dynamic-update-slice(a, u, x, y)\n}\n",
          seed++, kExact, kVmem);
    }
  }
}

TEST(StreamDynamicSliceTest, InPlaceUpdateOfAComputedArray) {
  // The update's target is a computed value (negate), so buffer assignment
  // may update it in place.
  ExpectMatchesOracleWithVmem(
      "HloModule m\nENTRY e {\n  p = f32[300,200] parameter(0)\n  a = "
      "f32[300,200] negate(p)\n" +
          Starts(30) +
          "  u = f32[250,3] parameter(3)\n  ROOT d = f32[300,200] "
          "dynamic-update-slice(a, u, x, y)\n}\n",
      30, kExact, kVmem);
}

}  // namespace
}  // namespace trench::codegen
