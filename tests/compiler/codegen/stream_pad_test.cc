// pad whose result exceeds VMEM (compiler/codegen/stream_pad.h): with 64
// KiB of VMEM (compiler and simulator alike) the result is filled chunk by
// chunk and the operand placed by HBM-to-HBM DMAs; edge, negative-edge
// and interior padding (minor-dim interior: element-sized DMA chunks),
// ragged chunks, several element types, against the oracle exactly.
#include <string>
#include <vector>

#include "tests/compiler/codegen/streaming_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracleWithVmem;

constexpr int64_t kVmem = 64 << 10;

// pad(a: t[in], v: t[]) -> t[out] with `config`.
std::string PadModule(const std::string& t, const std::string& in,
                      const std::string& out, const std::string& config) {
  return "HloModule m\nENTRY e {\n  a = " + t + in +
         " parameter(0)\n  v = " + t + "[] parameter(1)\n  ROOT r = " + t +
         out + " pad(a, v), padding=" + config + "\n}\n";
}

struct Case {
  std::string in, out, config;
};

TEST(StreamPadTest, EdgeNegativeAndInteriorPaddingOfLargeResults) {
  const std::vector<Case> cases = {
      {"[150,200]", "[153,205]", "1_2x0_5"},       // Edges, long rows.
      {"[150,200]", "[148,199]", "-1_-1x-1_0"},    // Crops both ends.
      {"[100,60]", "[200,63]", "0_1_1x1_2"},       // Major interior.
      {"[60,100]", "[61,299]", "1_0x-2_3_2"},      // Minor interior.
      {"[7,9,300]", "[9,13,301]", "1_1x2_2x0_1"},  // Rank 3.
      {"[40000]", "[40003]", "2_1"},               // Ragged chunk.
      {"[10,10]", "[150,150]", "70_70x-30_170"},   // Crops the operand away.
  };
  uint64_t seed = 1;
  for (const std::string t : {"f32", "bf16", "f64", "s8", "pred", "u16"}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(t + c.in + c.config);
      tpu::KernelStats s = ExpectMatchesOracleWithVmem(
          PadModule(t, c.in, c.out, c.config), seed++,
          ComparisonOptions::Exact(), kVmem);
      EXPECT_GE(s.dma_transfers, 3);
    }
  }
}

}  // namespace
}  // namespace trench::codegen
