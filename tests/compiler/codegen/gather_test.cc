// gather on the simulator against the oracle: every element type and every
// index type, general dimension numbers (index vectors of several
// components, index_vector_dim inside the indices, offset dims between
// batch dims, operand batching dims), clamped out-of-range starts and
// zero-sized cases. Random indices lie in [-8, 7] (signed) or [0, 15], so
// small operands see starts clamped on both sides.
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::EntryModule;
using testing::ExpectMatchesOracle;
using testing::kAllTypes;
using testing::kExact;
using testing::kIndexTypes;

// gather(a: t[op], i: it[idx]) -> t[out] with dimension numbers `dn`.
std::string Gather(const std::string& t, const std::string& op,
                   const std::string& it, const std::string& idx,
                   const std::string& out, const std::string& dn) {
  return EntryModule("  a = " + t + op + " parameter(0)\n  i = " + it + idx +
                     " parameter(1)\n  ROOT g = " + t + out +
                     " gather(a, i), " + dn + "\n");
}

const char kRows[] =
    "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
    "index_vector_dim=1, slice_sizes={1,5}";
const char kWindows[] =
    "offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, "
    "index_vector_dim=1, slice_sizes={2,3}";

TEST(GatherTest, RowsEveryType) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    for (uint64_t seed : {1, 2}) {
      ExpectMatchesOracle(Gather(t, "[7,5]", "s32", "[4]", "[4,5]", kRows),
                          seed, kExact);
      ExpectMatchesOracle(
          Gather(t, "[6,9]", "s32", "[3,2]", "[3,2,3]", kWindows), seed,
          kExact);
    }
  }
}

TEST(GatherTest, EveryIndexType) {
  for (const std::string& it : kIndexTypes) {
    SCOPED_TRACE(it);
    for (uint64_t seed : {3, 4, 5}) {
      ExpectMatchesOracle(
          Gather("f32", "[20,9]", it, "[5,2]", "[5,2,3]", kWindows), seed,
          kExact);
    }
  }
}

TEST(GatherTest, OutOfRangeStartsClamp) {
  const std::vector<std::string> indices = {
      "s32[2,2] constant({{1000, -1000}, {-1, 7}})",
      "s64[2,2] constant({{-5000000000, 5000000000}, {2, 3}})",
      "u64[2,2] constant({{18446744073709551615, 0}, {4, "
      "18446744073709551614}})",
      "u32[2,2] constant({{4294967295, 2147483648}, {1, 6}})",
      "s8[2,2] constant({{-128, 127}, {3, -3}})"};
  for (const std::string& i : indices) {
    SCOPED_TRACE(i);
    ExpectMatchesOracle(EntryModule("  a = bf16[6,9] parameter(0)\n  i = " + i +
                                    "\n  ROOT g = bf16[2,2,3] gather(a, i), " +
                                    kWindows + "\n"),
                        6, kExact);
  }
}

TEST(GatherTest, IndexVectorDimInsideAndOffsetDimsBetweenBatchDims) {
  // indices [2,2,3] with the index vector along dim 1: batch dims [2,3];
  // the offset dim sits between them in the output.
  ExpectMatchesOracle(Gather("s16", "[6,9]", "s32", "[2,2,3]", "[2,4,3]",
                             "offset_dims={1}, collapsed_slice_dims={0}, "
                             "start_index_map={1,0}, index_vector_dim=1, "
                             "slice_sizes={1,4}"),
                      7, kExact);
  // A rank-3 operand, index vector mapping dims 2 and 0, one collapsed.
  ExpectMatchesOracle(Gather("f64", "[5,4,7]", "s64", "[3,2]", "[3,2,4]",
                             "offset_dims={1,2}, collapsed_slice_dims={2}, "
                             "start_index_map={2,0}, index_vector_dim=1, "
                             "slice_sizes={2,4,1}"),
                      8, kExact);
}

TEST(GatherTest, OperandBatchingDims) {
  ExpectMatchesOracle(
      Gather("u16", "[3,6,5]", "s32", "[3,4]", "[3,4,5]",
             "offset_dims={2}, collapsed_slice_dims={1}, "
             "start_index_map={1}, operand_batching_dims={0}, "
             "start_indices_batching_dims={0}, index_vector_dim=2, "
             "slice_sizes={1,1,5}"),
      9, kExact);
}

TEST(GatherTest, ManyTilesOfOutput) {
  ExpectMatchesOracle(Gather("f32", "[40,33]", "s32", "[70]", "[70,33]",
                             "offset_dims={1}, collapsed_slice_dims={0}, "
                             "start_index_map={0}, index_vector_dim=1, "
                             "slice_sizes={1,33}"),
                      10, kExact);
}

TEST(GatherTest, ZeroSized) {
  // No batch positions.
  ExpectMatchesOracle(Gather("f32", "[7,5]", "s32", "[0]", "[0,5]", kRows), 11,
                      kExact);
  // An empty index vector: every slice starts at the origin.
  ExpectMatchesOracle(Gather("s8", "[7,5]", "s32", "[4,0]", "[4,2,5]",
                             "offset_dims={1,2}, collapsed_slice_dims={}, "
                             "start_index_map={}, index_vector_dim=1, "
                             "slice_sizes={2,5}"),
                      12, kExact);
  // Zero-sized slice.
  ExpectMatchesOracle(Gather("pred", "[7,5]", "s32", "[3]", "[3,0]",
                             "offset_dims={1}, collapsed_slice_dims={0}, "
                             "start_index_map={0}, index_vector_dim=1, "
                             "slice_sizes={1,0}"),
                      13, kExact);
}

TEST(GatherTest, SortedAndUniqueAttributesAreAccepted) {
  ExpectMatchesOracle(Gather("f32", "[7,5]", "s32", "[4]", "[4,5]",
                             std::string(kRows) + ", indices_are_sorted=true, "
                                                  "unique_indices=true"),
                      14, kExact);
}

}  // namespace
}  // namespace trench::codegen
