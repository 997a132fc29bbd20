// Broadcast, transpose, slice and reverse whose operand and result exceed
// VMEM stream in result blocks (compiler/codegen/stream_data_movement.h);
// concatenations of narrow pieces that do not fit are copied by strided
// HBM-to-HBM DMAs. With 64 KiB of VMEM (compiler and simulator alike)
// these used to fail with ResourceExhausted; now they compile and match the
// oracle bit for bit, for every dtype, with ragged last blocks.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tests/compiler/codegen/streaming_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracleWithVmem;
using testing::kAllTypes;

constexpr int64_t kVmem = 64 << 10;

// ROOT r = t`out` op(a), with a = t`in` and the op's attributes `attrs`.
std::string Unary(const std::string& t, const std::string& in,
                  const std::string& out, const std::string& op,
                  const std::string& attrs) {
  return "HloModule m\nENTRY e {\n  a = " + t + in + " parameter(0)\n" +
         "  ROOT r = " + t + out + " " + op + "(a), " + attrs + "\n}\n";
}

// Expects the oracle's values with kVmem of VMEM where the root's operand
// or result alone exceeds it: no kernel staging them whole fits, so
// success means they streamed (slab after slab: several DMAs).
void ExpectStreams(const std::string& text, uint64_t seed) {
  std::unique_ptr<HloModule> m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  const HloInstruction* root = m->entry_computation()->root_instruction();
  int64_t biggest = 0;
  for (const HloInstruction* o : root->operands()) {
    biggest = std::max(biggest, o->shape().byte_size());
  }
  if (root->shape().IsArray()) {
    biggest = std::max(biggest, root->shape().byte_size());
  }
  EXPECT_GT(biggest, kVmem) << "not a streaming case";
  tpu::KernelStats s = ExpectMatchesOracleWithVmem(
      text, seed, ComparisonOptions::Exact(), kVmem);
  EXPECT_GE(s.dma_transfers, 4) << text;
}

TEST(StreamDataMovementTest, Transposes) {
  ExpectStreams(
      Unary("f32", "[300,200]", "[200,300]", "transpose", "dimensions={1,0}"),
      1);
  ExpectStreams(Unary("f32", "[30,41,53]", "[53,30,41]", "transpose",
                      "dimensions={2,0,1}"),
                2);
  ExpectStreams(Unary("f32", "[30,41,53]", "[41,53,30]", "transpose",
                      "dimensions={1,2,0}"),
                3);
  // The minor dim kept but short (12-byte rows): gathered, not DMAed.
  ExpectStreams(Unary("f32", "[97,211,3]", "[211,97,3]", "transpose",
                      "dimensions={1,0,2}"),
                4);
  // One result row (97 * 211 f32 = 80 KB) does not fit: split inside it.
  ExpectStreams(Unary("f32", "[211,97,2]", "[2,211,97]", "transpose",
                      "dimensions={2,0,1}"),
                5);
}

TEST(StreamDataMovementTest, BroadcastSliceReverse) {
  ExpectStreams(
      Unary("f32", "[300]", "[300,201]", "broadcast", "dimensions={0}"), 6);
  ExpectStreams(
      Unary("f32", "[41,30]", "[41,30,17]", "broadcast", "dimensions={0,1}"),
      7);
  ExpectStreams(
      Unary("f32", "[41,30]", "[30,50,41]", "broadcast", "dimensions={2,0}"),
      8);
  ExpectStreams(Unary("f32", "[600,401]", "[200,100]", "slice",
                      "slice={[1:600:3], [3:401:4]}"),
                9);
  ExpectStreams(
      Unary("f32", "[300,211]", "[300,211]", "reverse", "dimensions={1}"), 10);
  ExpectStreams(
      Unary("f32", "[300,211]", "[300,211]", "reverse", "dimensions={0,1}"),
      11);
  ExpectStreams(
      Unary("f32", "[30,41,53]", "[30,41,53]", "reverse", "dimensions={0,2}"),
      12);
}

TEST(StreamDataMovementTest, EveryType) {
  // 75000 elements: > 64 KiB for every type.
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    ExpectStreams(
        Unary(t, "[300,250]", "[250,300]", "transpose", "dimensions={1,0}"),
        13);
    ExpectStreams(
        Unary(t, "[300,250]", "[300,250]", "reverse", "dimensions={1}"), 14);
    ExpectStreams(Unary(t, "[301]", "[301,250]", "broadcast", "dimensions={0}"),
                  15);
  }
  ExpectStreams(
      Unary("c64", "[100,90]", "[90,100]", "transpose", "dimensions={1,0}"),
      16);
}

TEST(StreamDataMovementTest, WhatCannotStreamIsCopiedByDma) {
  // c128 moves as two u64 halves; narrow concatenate pieces are boxes in
  // the result: both become strided HBM-to-HBM DMAs.
  ExpectMatchesOracleWithVmem(
      Unary("c128", "[60,70]", "[70,60]", "transpose", "dimensions={1,0}"), 17,
      ComparisonOptions::Exact(), kVmem);
  ExpectMatchesOracleWithVmem(R"(HloModule m
ENTRY e {
  a = f32[6000,7] parameter(0)
  b = f32[6000,5] parameter(1)
  ROOT r = f32[6000,12] concatenate(a, b), dimensions={1}
}
)",
                              18, ComparisonOptions::Exact(), kVmem);
}

}  // namespace
}  // namespace trench::codegen
