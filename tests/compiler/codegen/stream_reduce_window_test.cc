// reduce-window whose input and result do not fit in VMEM
// (compiler/codegen/stream_reduce_window.h): with 64 KiB of VMEM (compiler
// and simulator alike) the results are computed in blocks of output rows
// from the input rows each block reads. Strides, padding on both sides
// (a lead pad larger than a block), base and window dilation, rank 3,
// ragged last blocks, single-op and computed reducers, every element type,
// against the oracle.
#include <string>
#include <vector>

#include "tests/compiler/codegen/streaming_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracleWithVmem;
using testing::kAllTypes;
using testing::ReducerRoot;
using testing::ReduceWindowModule;
using testing::SumOfSquaresRoot;

constexpr int64_t kVmem = 64 << 10;

struct Case {
  std::string in, out, window;
};

// Inputs of at least 72,000 elements: more than 64 KiB with the result
// for every type.
const std::vector<Case> kCases = {
    {"[300,240]", "[300,240]", "size=3x3 pad=1_1x1_1"},
    {"[301,240]", "[101,120]", "size=4x2 stride=3x2 pad=2_1x0_0"},
    {"[150,480]", "[298,480]", "size=2x2 pad=0_0x1_0 lhs_dilate=2x1"},
    {"[200,360]", "[197,179]", "size=2x2 stride=1x2 rhs_dilate=3x2"},
    {"[100,30,24]", "[50,30,24]", "size=3x1x2 stride=2x1x1 pad=1_1x0_0x0_1"},
    {"[300,240]", "[339,240]", "size=2x1 pad=40_0x0_0"},
};

ComparisonOptions SumTolerance() {
  ComparisonOptions o;
  o.f32 = {1e-5, 1e-5};
  return o;
}

TEST(StreamReduceWindowTest, EveryWindowAddAndMax) {
  uint64_t seed = 1;
  for (const std::string t : {"f32", "s32", "bf16"}) {
    for (const Case& c : kCases) {
      SCOPED_TRACE(t + c.in + c.window);
      ExpectMatchesOracleWithVmem(
          ReduceWindowModule(t, c.in, c.out, c.window, ReducerRoot(t, "add"),
                             "2"),
          seed++, SumTolerance(), kVmem);
      ExpectMatchesOracleWithVmem(
          ReduceWindowModule(t, c.in, c.out, c.window,
                             ReducerRoot(t, "maximum"), "2"),
          seed++, ComparisonOptions::Exact(), kVmem);
    }
  }
}

TEST(StreamReduceWindowTest, EveryTypeComputedReducer) {
  uint64_t seed = 100;
  for (const std::string& t : kAllTypes) {
    for (size_t k : {1, 4}) {
      const Case& c = kCases[k];
      SCOPED_TRACE(t + c.in + c.window);
      ExpectMatchesOracleWithVmem(
          ReduceWindowModule(t, c.in, c.out, c.window, SumOfSquaresRoot(t),
                             t == "pred" ? "false" : "1"),
          seed++, SumTolerance(), kVmem);
    }
  }
}

}  // namespace
}  // namespace trench::codegen
