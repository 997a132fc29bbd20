// select-and-scatter whose operand, source and result do not fit in VMEM
// (compiler/codegen/stream_select_and_scatter.h): with 64 KiB of VMEM
// (compiler and simulator alike) the result is computed in blocks of rows
// from the source and operand rows each block needs. Pooling windows with
// and without overlap, padding on both sides (a lead pad larger than a
// block), window dilation, rank 3, ragged last blocks, GE/LE selects, a
// non-commutative scatter whose result depends on the source order, every
// element type, against the oracle.
#include <string>
#include <vector>

#include "tests/compiler/codegen/streaming_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracleWithVmem;
using testing::kAllTypes;
using testing::SelectAndScatterModule;

constexpr int64_t kVmem = 64 << 10;

struct Case {
  std::string op, src, window;
};

// Operands of at least 72,000 elements: more than 64 KiB with the result
// for every type.
const std::vector<Case> kCases = {
    {"[300,240]", "[150,120]", "size=2x2 stride=2x2"},
    {"[301,240]", "[151,120]", "size=3x3 stride=2x2 pad=1_1x1_1"},
    {"[300,240]", "[300,240]", "size=3x3 pad=1_1x1_1"},
    {"[100,30,24]", "[50,30,24]", "size=3x1x2 stride=2x1x1 pad=1_1x0_0x0_1"},
    {"[300,240]", "[339,240]", "size=2x1 pad=40_0x0_0"},
    {"[200,360]", "[197,179]", "size=2x2 stride=1x2 rhs_dilate=3x2"},
};

std::string Add(const std::string& t) {
  return "  ROOT z = " + t + "[] " + (t == "pred" ? "or" : "add") + "(x, y)\n";
}

TEST(StreamSelectAndScatterTest, EveryWindowGeAndLe) {
  uint64_t seed = 1;
  for (const std::string t : {"f32", "s32", "bf16"}) {
    for (const Case& c : kCases) {
      SCOPED_TRACE(t + c.op + c.window);
      for (const char* dir : {"GE", "LE"}) {
        ExpectMatchesOracleWithVmem(
            SelectAndScatterModule(t, c.op, c.src, c.window, dir, Add(t), "1"),
            seed++, ComparisonOptions::Exact(), kVmem);
      }
    }
  }
}

TEST(StreamSelectAndScatterTest, EveryType) {
  uint64_t seed = 100;
  for (const std::string& t : kAllTypes) {
    for (size_t k : {1, 3}) {
      const Case& c = kCases[k];
      SCOPED_TRACE(t + c.op + c.window);
      ExpectMatchesOracleWithVmem(
          SelectAndScatterModule(t, c.op, c.src, c.window, "GE", Add(t),
                                 t == "pred" ? "false" : "0"),
          seed++, ComparisonOptions::Exact(), kVmem);
    }
  }
}

// scatter(src, acc) = 2 * acc - src: overlapping windows that choose the
// same element must be folded in row-major source order, also when those
// source rows are chosen again by the next block.
TEST(StreamSelectAndScatterTest, NonCommutativeScatterKeepsSourceOrder) {
  uint64_t seed = 200;
  for (const char* t : {"s32", "f64"}) {
    const std::string body =
        "  two = " + std::string(t) + "[] constant(2)\n  m = " + t +
        "[] multiply(y, two)\n  ROOT z = " + t + "[] subtract(m, x)\n";
    for (size_t k : {1, 2}) {
      const Case& c = kCases[k];
      SCOPED_TRACE(std::string(t) + c.op + c.window);
      ExpectMatchesOracleWithVmem(
          SelectAndScatterModule(t, c.op, c.src, c.window, "GT", body, "1"),
          seed++, ComparisonOptions::Exact(), kVmem);
    }
  }
}

}  // namespace
}  // namespace trench::codegen
