// scatter whose operand does not fit in VMEM (compiler/codegen/
// stream_scatter.h): with 64 KiB of VMEM (compiler and simulator alike)
// the results stay in HBM and each update window is read, combined and
// written back in the oracle's order. Duplicate targets with
// order-sensitive combiners, windows out of bounds on both sides (skipped;
// indices spread past both ends), ragged narrow windows, one-element
// windows, operand batching dims, variadic scatter, every element and
// index type, against the oracle exactly.
#include <string>
#include <vector>

#include "tests/compiler/codegen/streaming_test_util.h"

namespace trench::codegen {
namespace {

using testing::BinaryComputation;
using testing::ExpectMatchesOracleWithVmem;
using testing::kAllTypes;
using testing::kExact;
using testing::kIndexTypes;
using testing::SpreadIndices;

constexpr int64_t kVmem = 64 << 10;

// scatter(a: t[op], i: it[idx] * k, u: t[upd]) with `dn`, combiner `comb`.
std::string Scatter(const std::string& t, const std::string& op,
                    const std::string& it, const std::string& idx,
                    const std::string& upd, const std::string& dn,
                    const std::string& comb, int k) {
  return testing::ScatterModule(t, op, SpreadIndices("i", it, idx, 1, k), upd,
                                dn, comb);
}

constexpr const char* kRows = testing::kScatterRows;
constexpr const char* kWindows = testing::kScatterWindows;

TEST(StreamScatterTest, RowsAndWindowsEveryType) {
  uint64_t seed = 1;
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    const std::string add = t == "pred" ? "or" : "add";
    // Rows 0..299 of 200; starts -344..301: duplicates, both ends skipped.
    for (const std::string& op : {add, std::string("assign")}) {
      ExpectMatchesOracleWithVmem(
          Scatter(t, "[300,200]", "s32", "[30]", "[30,200]", kRows,
                  BinaryComputation("comb", t, op), 43),
          seed++, kExact, kVmem);
    }
    ExpectMatchesOracleWithVmem(
        Scatter(t, "[300,200]", "s32", "[12,2]", "[12,5,7]", kWindows,
                BinaryComputation("comb", t, "maximum"), 23),
        seed++, kExact, kVmem);
  }
}

TEST(StreamScatterTest, EveryIndexType) {
  for (const std::string& it : kIndexTypes) {
    SCOPED_TRACE(it);
    ExpectMatchesOracleWithVmem(
        Scatter("f32", "[300,200]", it, "[9,2]", "[9,5,7]", kWindows,
                BinaryComputation("comb", "f32", "add"), 13),
        3, kExact, kVmem);
  }
}

TEST(StreamScatterTest, OutOfBoundsWindowsAreSkipped) {
  ExpectMatchesOracleWithVmem(
      "HloModule m\n" + BinaryComputation("comb", "s32", "add") +
          "ENTRY e {\n  a = s32[300,200] parameter(0)\n"
          "  i = u64[4,2] constant({{18446744073709551615, 0}, {0, 193}, "
          "{295, 193}, {296, 194}})\n  u = s32[4,5,7] parameter(1)\n"
          "  ROOT s = s32[300,200] scatter(a, i, u), " +
          kWindows + ", to_apply=comb\n}\n",
      4, kExact, kVmem);
}

// One-element windows on many duplicate targets, a non-commutative
// combiner: only the oracle's order gives these bits.
TEST(StreamScatterTest, DuplicatesApplyInOrder) {
  const std::string order_sensitive =
      "comb {\n  p0 = f32[] parameter(0)\n  p1 = f32[] parameter(1)\n"
      "  c = f32[] constant(0.5)\n  m = f32[] multiply(p0, c)\n"
      "  ROOT r = f32[] subtract(m, p1)\n}\n";
  ExpectMatchesOracleWithVmem(
      Scatter("f32", "[20000]", "s32", "[1500,1]", "[1500]",
              "update_window_dims={}, inserted_window_dims={0}, "
              "scatter_dims_to_operand_dims={0}, index_vector_dim=1",
              order_sensitive, 3),
      5, kExact, kVmem);
}

TEST(StreamScatterTest, InputBatchingDimsAndVariadic) {
  ExpectMatchesOracleWithVmem(
      Scatter("s64", "[3,300,50]", "s32", "[3,4]", "[3,4,50]",
              "update_window_dims={2}, inserted_window_dims={1}, "
              "input_batching_dims={0}, scatter_indices_batching_dims={0}, "
              "scatter_dims_to_operand_dims={1}, index_vector_dim=2",
              BinaryComputation("comb", "s64", "add"), 37),
      6, kExact, kVmem);
  ExpectMatchesOracleWithVmem(
      "HloModule m\ncomb {\n  a = s32[] parameter(0)\n  b = f64[] "
      "parameter(1)\n  c = s32[] parameter(2)\n  d = f64[] parameter(3)\n"
      "  s = s32[] add(a, c)\n  m = f64[] maximum(b, d)\n"
      "  ROOT t = (s32[], f64[]) tuple(s, m)\n}\n"
      "ENTRY e {\n  x = s32[9000] parameter(0)\n  y = f64[9000] "
      "parameter(1)\n" +
          SpreadIndices("i", "s32", "[400]", 2, 600) +
          "  u = s32[400] parameter(3)\n  v = f64[400] parameter(4)\n"
          "  ROOT r = (s32[9000], f64[9000]) scatter(x, y, i, u, v), "
          "update_window_dims={}, inserted_window_dims={0}, "
          "scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
          "to_apply=comb\n}\n",
      7, kExact, kVmem);
}

}  // namespace
}  // namespace trench::codegen
