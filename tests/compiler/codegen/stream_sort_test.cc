// sort whose operands do not fit in VMEM (compiler/codegen/stream_sort.h):
// with 64 KiB of VMEM (compiler and simulator alike) whole rows along the
// sort dimension are sorted tile by tile. Tiles of several outer indices
// (ragged last one), tiles of a few inner columns when one outer index is
// too big (ragged last one), a key with a payload (stability on the many
// equal keys of random integers), every element type, against the oracle
// exactly; rows that alone exceed VMEM, merge-split in HBM (ragged last
// block, strided rows, a payload); too little VMEM for two elements is
// ResourceExhausted.
#include <string>
#include <vector>

#include "tests/compiler/codegen/streaming_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracleWithVmem;
using testing::kAllTypes;
using testing::kExact;
using testing::SortModule;

constexpr int64_t kVmem = 64 << 10;

TEST(StreamSortTest, TilesOfOuterRowsEveryType) {
  uint64_t seed = 1;
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    // Rows of 150 along the minor dim; [41,300,3] along the middle one.
    ExpectMatchesOracleWithVmem(SortModule(t, "[300,150]", 1, "LT", true),
                                seed++, kExact, kVmem);
    ExpectMatchesOracleWithVmem(SortModule(t, "[41,300,3]", 1, "GT", false),
                                seed++, kExact, kVmem);
  }
}

TEST(StreamSortTest, TilesOfInnerColumns) {
  // One index of dim 0 is the whole array: tiles of a few columns.
  ExpectMatchesOracleWithVmem(SortModule("f32", "[2000,5]", 0, "LT", false), 3,
                              kExact, kVmem);
  ExpectMatchesOracleWithVmem(SortModule("s8", "[1500,7]", 0, "LT", true), 4,
                              kExact, kVmem);
  ExpectMatchesOracleWithVmem(SortModule("bf16", "[2,1200,11]", 1, "GT", true),
                              5, kExact, kVmem);
}

TEST(StreamSortTest, RowsLongerThanVmemAreMergeSplitInHbm) {
  // With 16 KiB: 2507 f32 keys in 5 blocks, the last one ragged; random
  // s32 keys with a payload (stability across blocks); two strided rows of
  // 1800 (inner 2) and several rows of a middle dim.
  constexpr int64_t kSmall = 16 << 10;
  ExpectMatchesOracleWithVmem(SortModule("f32", "[2507]", 0, "LT", false), 6,
                              kExact, kSmall);
  ExpectMatchesOracleWithVmem(SortModule("s32", "[2200]", 0, "GT", true), 7,
                              kExact, kSmall);
  ExpectMatchesOracleWithVmem(SortModule("bf16", "[1800,2]", 0, "LT", true), 8,
                              kExact, kSmall);
  ExpectMatchesOracleWithVmem(SortModule("s8", "[3,1500,1]", 1, "GT", false), 9,
                              kExact, kSmall);
}

TEST(StreamSortTest, NoRoomForTwoElementsIsResourceExhausted) {
  std::unique_ptr<HloModule> m =
      testing::Parse(SortModule("f32", "[20000]", 0, "LT", false));
  ASSERT_NE(m, nullptr);
  CompileOptions co;
  co.vmem_bytes = 1024;
  auto exe = CompileModule(*m, co);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), StatusCode::kResourceExhausted)
      << exe.status().ToString();
}

}  // namespace
}  // namespace trench::codegen
