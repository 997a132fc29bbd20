// gather whose operand does not fit in VMEM (compiler/codegen/
// stream_gather_rows.h): with 64 KiB of VMEM (compiler and simulator
// alike) every slice moves HBM to HBM at its clamped start. Rows, narrow
// ragged windows, one-element slices, index vectors inside the indices,
// operand batching dims, starts clamped on both sides (indices spread past
// both ends of the operand), every element and index type, against the
// oracle exactly.
#include <string>
#include <vector>

#include "tests/compiler/codegen/streaming_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracleWithVmem;
using testing::kAllTypes;
using testing::kExact;
using testing::kIndexTypes;
using testing::SpreadIndices;

constexpr int64_t kVmem = 64 << 10;

// gather(a: t[op], i: it[idx] * k) -> t[out] with dimension numbers `dn`.
std::string Gather(const std::string& t, const std::string& op,
                   const std::string& it, const std::string& idx,
                   const std::string& out, const std::string& dn, int k) {
  return "HloModule m\nENTRY e {\n  a = " + t + op + " parameter(0)\n" +
         SpreadIndices("i", it, idx, 1, k) + "  ROOT g = " + t + out +
         " gather(a, i), " + dn + "\n}\n";
}

const char kRows[] =
    "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
    "index_vector_dim=1, slice_sizes={1,200}";
const char kWindows[] =
    "offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, "
    "index_vector_dim=1, slice_sizes={5,7}";

TEST(StreamGatherRowsTest, RowsAndNarrowWindowsEveryType) {
  uint64_t seed = 1;
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    // t[300,200] is at least 60 KB: with the indices and the result it
    // cannot be staged in 64 KiB.
    ExpectMatchesOracleWithVmem(
        Gather(t, "[300,200]", "s32", "[40]", "[40,200]", kRows, 41), seed++,
        kExact, kVmem);
    ExpectMatchesOracleWithVmem(
        Gather(t, "[300,200]", "s32", "[6,2]", "[6,5,7]", kWindows, 23), seed++,
        kExact, kVmem);
  }
}

TEST(StreamGatherRowsTest, EveryIndexType) {
  for (const std::string& it : kIndexTypes) {
    SCOPED_TRACE(it);
    ExpectMatchesOracleWithVmem(
        Gather("f32", "[300,200]", it, "[9,2]", "[9,5,7]", kWindows, 11), 3,
        kExact, kVmem);
  }
}

TEST(StreamGatherRowsTest, OutOfRangeStartsClamp) {
  ExpectMatchesOracleWithVmem(
      "HloModule m\nENTRY e {\n  a = f32[300,200] parameter(0)\n"
      "  i = u64[3,2] constant({{18446744073709551615, 0}, {4, "
      "18446744073709551614}, {299, 199}})\n  ROOT g = f32[3,5,7] gather(a, "
      "i), " +
          std::string(kWindows) + "\n}\n",
      4, kExact, kVmem);
}

TEST(StreamGatherRowsTest, OneElementSlicesAndComplexTypes) {
  for (const std::string t : {"f32", "c64", "c128"}) {
    SCOPED_TRACE(t);
    ExpectMatchesOracleWithVmem(
        Gather(t, "[20000]", "s32", "[700,1]", "[700]",
               "offset_dims={}, collapsed_slice_dims={0}, "
               "start_index_map={0}, index_vector_dim=1, slice_sizes={1}",
               1300),
        5, kExact, kVmem);
  }
}

TEST(StreamGatherRowsTest, IndexVectorInsideAndOperandBatchingDims) {
  // indices [2,2,3] with the index vector along dim 1; the offset dim
  // between the batch dims of the output.
  ExpectMatchesOracleWithVmem(
      Gather("s16", "[300,130]", "s32", "[2,2,3]", "[2,100,3]",
             "offset_dims={1}, collapsed_slice_dims={0}, "
             "start_index_map={1,0}, index_vector_dim=1, "
             "slice_sizes={1,100}",
             19),
      6, kExact, kVmem);
  ExpectMatchesOracleWithVmem(
      Gather("u16", "[3,300,50]", "s32", "[3,4]", "[3,4,50]",
             "offset_dims={2}, collapsed_slice_dims={1}, "
             "start_index_map={1}, operand_batching_dims={0}, "
             "start_indices_batching_dims={0}, index_vector_dim=2, "
             "slice_sizes={1,1,50}",
             37),
      7, kExact, kVmem);
}

}  // namespace
}  // namespace trench::codegen
