// Elementwise ops streamed through double-buffered VMEM chunks
// (emit_elementwise.cc + streaming.h): arrays larger than VMEM (small
// CompileOptions::vmem_bytes), the "it pays" size at the default capacity,
// in-place results, scalar clamp bounds, 64-bit and narrow types, against
// the oracle.
#include <string>

#include "tests/compiler/codegen/streaming_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracleWithVmem;

std::string Binary(const std::string& op, const std::string& shape,
                   const std::string& out) {
  return "HloModule m\nENTRY e {\n  a = " + shape +
         " parameter(0)\n  b = " + shape + " parameter(1)\n  ROOT r = " + out +
         " " + op + "(a, b)\n}\n";
}

TEST(StreamingElementwiseTest, LargerThanVmem) {
  // 3 x 40 KiB through 32 KiB of VMEM (1024-element chunks, ragged end).
  ExpectMatchesOracleWithVmem(Binary("add", "f32[10000]", "f32[10000]"), 1,
                              ComparisonOptions::Exact(), 32 << 10);
  ExpectMatchesOracleWithVmem(Binary("multiply", "f32[30,700]", "f32[30,700]"),
                              2, ComparisonOptions::Exact(), 24 << 10);
  std::string compare = Binary("compare", "s32[9000]", "pred[9000]");
  compare.insert(compare.rfind('\n', compare.size() - 2), ", direction=LT");
  ExpectMatchesOracleWithVmem(compare, 3, ComparisonOptions::Exact(), 24 << 10);
}

TEST(StreamingElementwiseTest, StreamsAtDefaultCapacityWhenItPays) {
  // 70000 elements >= 2 default chunks: streamed, and DMA overlaps.
  tpu::KernelStats s = ExpectMatchesOracleWithVmem(
      Binary("subtract", "f32[70000]", "f32[70000]"), 4,
      ComparisonOptions::Exact(), 16 << 20);
  // Three chunks: two inputs and one output each; then the final kernel's
  // copy of the result to the output buffer.
  EXPECT_EQ(s.dma_transfers, 3 * 3 + 1);
}

TEST(StreamingElementwiseTest, InPlaceChain) {
  // t dies at u and u at v: buffer assignment writes u over t, v over u.
  const std::string text = R"(HloModule m
ENTRY e {
  a = f32[6000] parameter(0)
  b = f32[6000] parameter(1)
  t = f32[6000] add(a, b)
  u = f32[6000] multiply(t, b)
  ROOT v = f32[6000] subtract(u, a)
}
)";
  ExpectMatchesOracleWithVmem(text, 5, ComparisonOptions::Exact(), 32 << 10);
}

TEST(StreamingElementwiseTest, ScalarBoundsAndTypes) {
  const std::string clamp = R"(HloModule m
ENTRY e {
  lo = f32[] parameter(0)
  x = f32[9000] parameter(1)
  hi = f32[] parameter(2)
  ROOT r = f32[9000] clamp(lo, x, hi)
}
)";
  ExpectMatchesOracleWithVmem(clamp, 6, ComparisonOptions::Exact(), 32 << 10);
  ExpectMatchesOracleWithVmem(Binary("add", "s64[5000]", "s64[5000]"), 7,
                              ComparisonOptions::Exact(), 64 << 10);
  ExpectMatchesOracleWithVmem(Binary("maximum", "bf16[5000]", "bf16[5000]"), 8,
                              ComparisonOptions::Exact(), 12 << 10);
  const std::string convert = R"(HloModule m
ENTRY e {
  x = f32[7000] parameter(0)
  ROOT r = s8[7000] convert(x)
}
)";
  ExpectMatchesOracleWithVmem(convert, 9, ComparisonOptions::Exact(), 12 << 10);
}

TEST(StreamingElementwiseTest, WideBitcastConvertLargerThanVmem) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[4096] parameter(0)
  ROOT r = u16[4096,2] bitcast-convert(x)
}
)";
  ExpectMatchesOracleWithVmem(text, 10, ComparisonOptions::Exact(), 8 << 10);
}

TEST(StreamingElementwiseTest, TooSmallForOneChunkIsResourceExhausted) {
  auto m = testing::Parse(Binary("add", "f32[10000]", "f32[10000]"));
  ASSERT_NE(m, nullptr);
  CompileOptions o;
  o.vmem_bytes = 8 << 10;  // 2 sets x 3 arrays x 4 KiB do not fit.
  auto exe = CompileModule(*m, o);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace trench::codegen
