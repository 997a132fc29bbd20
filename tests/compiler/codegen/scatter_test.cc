// scatter on the simulator against the oracle: every element type and
// index type, duplicate indices (random indices lie in [-8, 7] or
// [0, 15], so small operands get many duplicates and out-of-bounds
// windows, which are skipped), order-sensitive combiners (float sums,
// non-commutative functions) across several 1024-element tiles, general
// dimension numbers, variadic scatter, and zero-sized updates.
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::BinaryComputation;
using testing::ExpectMatchesOracle;
using testing::kAllTypes;
using testing::kExact;
using testing::kIndexTypes;

// scatter(a: t[op], i: it[idx], u: t[upd]) with `dn`, combiner `comb`.
std::string Scatter(const std::string& t, const std::string& op,
                    const std::string& it, const std::string& idx,
                    const std::string& upd, const std::string& dn,
                    const std::string& comb) {
  return testing::ScatterModule(t, op, "  i = " + it + idx + " parameter(1)\n",
                                upd, dn, comb);
}

constexpr const char* kRows = testing::kScatterRows;
constexpr const char* kWindows = testing::kScatterWindows;

TEST(ScatterTest, RowsEveryTypeAddAndAssign) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    const std::string add = t == "pred" ? "or" : "add";
    for (const std::string& op : {add, std::string("assign")}) {
      for (uint64_t seed : {1, 2}) {
        ExpectMatchesOracle(Scatter(t, "[6,5]", "s32", "[8]", "[8,5]", kRows,
                                    BinaryComputation("comb", t, op)),
                            seed, kExact);
      }
    }
  }
}

TEST(ScatterTest, WindowsEveryTypeMaxAndMin) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    for (std::string op : {"maximum", "minimum"}) {
      ExpectMatchesOracle(Scatter(t, "[5,6]", "s32", "[4,2]", "[4,2,3]",
                                  kWindows, BinaryComputation("comb", t, op)),
                          3, kExact);
    }
  }
}

TEST(ScatterTest, EveryIndexType) {
  for (const std::string& it : kIndexTypes) {
    SCOPED_TRACE(it);
    for (uint64_t seed : {4, 5, 6}) {
      ExpectMatchesOracle(
          Scatter("f32", "[12,9]", it, "[5,2]", "[5,2,3]", kWindows,
                  BinaryComputation("comb", "f32", "add")),
          seed, kExact);
    }
  }
}

TEST(ScatterTest, OutOfBoundsWindowsAreSkipped) {
  const std::vector<std::string> indices = {
      "s32[3,2] constant({{1000, 0}, {-1, 2}, {3, 3}})",
      "s64[3,2] constant({{-5000000000, 1}, {2, 4}, {2, 3}})",
      "u64[3,2] constant({{18446744073709551615, 0}, {0, 3}, {1, 4}})",
      "u32[3,2] constant({{4294967295, 1}, {3, 2147483648}, {0, 0}})"};
  for (const std::string& i : indices) {
    SCOPED_TRACE(i);
    ExpectMatchesOracle(
        "HloModule m\n" + BinaryComputation("comb", "s32", "add") +
            "ENTRY e {\n  a = s32[5,6] parameter(0)\n  i = " + i +
            "\n  u = s32[3,2,3] parameter(1)\n  ROOT s = s32[5,6] "
            "scatter(a, i, u), " +
            kWindows + ", to_apply=comb\n}\n",
        7, kExact);
  }
}

// Float sums and a non-commutative combiner over duplicate targets in
// several tiles: only the oracle's application order gives these bits.
TEST(ScatterTest, DuplicatesApplyInOrderAcrossTiles) {
  const std::string order_sensitive =
      "comb {\n  p0 = f32[] parameter(0)\n  p1 = f32[] parameter(1)\n"
      "  c = f32[] constant(0.5)\n  m = f32[] multiply(p0, c)\n"
      "  ROOT r = f32[] subtract(m, p1)\n}\n";
  for (uint64_t seed : {8, 9}) {
    ExpectMatchesOracle(Scatter("f32", "[10]", "s32", "[2500,1]", "[2500]",
                                "update_window_dims={}, "
                                "inserted_window_dims={0}, "
                                "scatter_dims_to_operand_dims={0}, "
                                "index_vector_dim=1",
                                order_sensitive),
                        seed, kExact);
    ExpectMatchesOracle(
        Scatter("bf16", "[7,3]", "u8", "[700]", "[700,3]", kRows,
                BinaryComputation("comb", "bf16", "add")),
        seed, kExact);
  }
}

TEST(ScatterTest, InputBatchingDims) {
  ExpectMatchesOracle(
      Scatter("s64", "[3,6,5]", "s32", "[3,4]", "[3,4,5]",
              "update_window_dims={2}, inserted_window_dims={1}, "
              "input_batching_dims={0}, scatter_indices_batching_dims={0}, "
              "scatter_dims_to_operand_dims={1}, index_vector_dim=2",
              BinaryComputation("comb", "s64", "add")),
      10, kExact);
}

TEST(ScatterTest, IndexVectorDimFirst) {
  // indices [2,3,2] with the index vector along dim 0.
  ExpectMatchesOracle(
      Scatter("u16", "[6,7]", "s32", "[2,3,2]", "[3,2,2]",
              "update_window_dims={2}, inserted_window_dims={0}, "
              "scatter_dims_to_operand_dims={0,1}, index_vector_dim=0",
              BinaryComputation("comb", "u16", "multiply")),
      11, kExact);
}

TEST(ScatterTest, Variadic) {
  ExpectMatchesOracle(
      "HloModule m\ncomb {\n  a = s32[] parameter(0)\n  b = f64[] "
      "parameter(1)\n  c = s32[] parameter(2)\n  d = f64[] parameter(3)\n"
      "  s = s32[] add(a, c)\n  m = f64[] maximum(b, d)\n"
      "  ROOT t = (s32[], f64[]) tuple(s, m)\n}\n"
      "ENTRY e {\n  x = s32[9] parameter(0)\n  y = f64[9] parameter(1)\n"
      "  i = s32[12] parameter(2)\n  u = s32[12] parameter(3)\n"
      "  v = f64[12] parameter(4)\n  ROOT r = (s32[9], f64[9]) scatter(x, "
      "y, i, u, v), update_window_dims={}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
      "to_apply=comb\n}\n",
      12, kExact);
}

TEST(ScatterTest, ZeroSizedUpdatesAndAttributes) {
  ExpectMatchesOracle(Scatter("f32", "[6,5]", "s32", "[0]", "[0,5]", kRows,
                              BinaryComputation("comb", "f32", "add")),
                      13, kExact);
  ExpectMatchesOracle(
      Scatter(
          "s8", "[6,5]", "s32", "[8]", "[8,5]",
          std::string(kRows) + ", indices_are_sorted=true, unique_indices=true",
          BinaryComputation("comb", "s8", "add")),
      14, kExact);
}

}  // namespace
}  // namespace trench::codegen
