// dynamic-slice and dynamic-update-slice on the simulator against the
// oracle: every element type, every index type, start indices out of
// range on both sides (clamped as XLA does), the row-DMA and the
// span-gather/scatter paths, zero-sized windows, and the in-place update
// when the buffer planner gives the result operand 0's buffer.
#include <string>
#include <vector>

#include "compiler/codegen/buffer_plan.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::EntryModule;
using testing::ExpectMatchesOracle;
using testing::kAllTypes;
using testing::kExact;
using testing::kIndexTypes;

// dynamic-slice of a: t[in] with random start parameters of type `it`.
std::string Ds(const std::string& t, const std::string& in,
               const std::string& sizes, const std::string& out,
               const std::string& it = "s32") {
  return EntryModule(
      "  a = " + t + in + " parameter(0)\n  i = " + it +
      "[] parameter(1)\n  j = " + it + "[] parameter(2)\n  ROOT r = " + t +
      out + " dynamic-slice(a, i, j), dynamic_slice_sizes=" + sizes + "\n");
}

std::string Dus(const std::string& t, const std::string& in,
                const std::string& upd, const std::string& it = "s32") {
  return EntryModule("  a = " + t + in + " parameter(0)\n  u = " + t + upd +
                     " parameter(1)\n  i = " + it + "[] parameter(2)\n  j = " +
                     it + "[] parameter(3)\n  ROOT r = " + t + in +
                     " dynamic-update-slice(a, u, i, j)\n");
}

TEST(DynamicSliceTest, EveryType) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    for (uint64_t seed : {1, 2, 3}) {
      // Rows of 66 elements: DMA at a run-time address.
      ExpectMatchesOracle(Ds(t, "[5,70]", "{2,66}", "[2,66]"), seed, kExact);
      // Short rows: the covered span is staged and gathered.
      ExpectMatchesOracle(Ds(t, "[6,9]", "{3,4}", "[3,4]"), seed, kExact);
    }
  }
}

TEST(DynamicSliceTest, EveryIndexType) {
  for (const std::string& it : kIndexTypes) {
    SCOPED_TRACE(it);
    for (uint64_t seed : {4, 5, 6, 7}) {
      ExpectMatchesOracle(Ds("f32", "[12,13]", "{3,4}", "[3,4]", it), seed,
                          kExact);
    }
  }
}

TEST(DynamicSliceTest, OutOfRangeStartsClamp) {
  const std::vector<std::pair<std::string, std::string>> starts = {
      {"s32[] constant(1000)", "s32[] constant(-1000)"},
      {"s64[] constant(-5000000000)", "s64[] constant(5000000000)"},
      {"u64[] constant(18446744073709551615)", "u64[] constant(2)"},
      {"u8[] constant(200)", "u8[] constant(3)"},
      {"s8[] constant(-128)", "s8[] constant(127)"}};
  for (const auto& [i, j] : starts) {
    SCOPED_TRACE(i + " " + j);
    ExpectMatchesOracle(
        EntryModule("  a = s16[6,9] parameter(0)\n  i = " + i + "\n  j = " + j +
                    "\n  ROOT r = s16[3,4] dynamic-slice(a, i, j), "
                    "dynamic_slice_sizes={3,4}\n"),
        8, kExact);
    ExpectMatchesOracle(
        EntryModule("  a = f64[6,9] parameter(0)\n  u = f64[3,4] parameter(1)\n"
                    "  i = " +
                    i + "\n  j = " + j +
                    "\n  ROOT r = f64[6,9] dynamic-update-slice(a, u, i, j)\n"),
        9, kExact);
  }
}

TEST(DynamicSliceTest, VectorStartIndicesRankOneAndThree) {
  ExpectMatchesOracle(
      EntryModule("  a = u8[4,5,6] parameter(0)\n  v = s32[3] constant({1, 9, "
                  "-2})\n  ROOT r = u8[2,2,3] dynamic-slice(a, v), "
                  "dynamic_slice_sizes={2,2,3}\n"),
      10, kExact);
  ExpectMatchesOracle(
      EntryModule("  a = bf16[40] parameter(0)\n  i = s32[] parameter(1)\n"
                  "  ROOT r = bf16[33] dynamic-slice(a, i), "
                  "dynamic_slice_sizes={33}\n"),
      11, kExact);
  ExpectMatchesOracle(
      EntryModule(
          "  a = s64[3,4,5] parameter(0)\n  u = s64[1,2,5] parameter(1)\n"
          "  i = s16[] parameter(2)\n  j = s16[] parameter(3)\n"
          "  k = s16[] parameter(4)\n  ROOT r = s64[3,4,5] "
          "dynamic-update-slice(a, u, i, j, k)\n"),
      12, kExact);
}

TEST(DynamicSliceTest, ZeroSizedWindows) {
  ExpectMatchesOracle(Ds("f32", "[5,7]", "{0,3}", "[0,3]"), 13, kExact);
  ExpectMatchesOracle(Dus("s32", "[5,7]", "[5,0]"), 14, kExact);
  ExpectMatchesOracle(Dus("pred", "[0,7]", "[0,2]"), 15, kExact);
}

TEST(DynamicUpdateSliceTest, EveryType) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    for (uint64_t seed : {16, 17, 18}) {
      ExpectMatchesOracle(Dus(t, "[5,70]", "[2,66]"), seed, kExact);
      ExpectMatchesOracle(Dus(t, "[6,9]", "[3,4]"), seed, kExact);
    }
  }
}

TEST(DynamicUpdateSliceTest, EveryIndexType) {
  for (const std::string& it : kIndexTypes) {
    SCOPED_TRACE(it);
    for (uint64_t seed : {19, 20, 21}) {
      ExpectMatchesOracle(Dus("u16", "[11,10]", "[4,3]", it), seed, kExact);
    }
  }
}

// Operand 0 is a temp that dies at the update: the planner writes the
// result over it, and the kernel must then write only the window.
TEST(DynamicUpdateSliceTest, InPlaceOverOperandZero) {
  for (std::string t : {"f32", "s8", "f64", "bf16"}) {
    for (std::string upd : {"[3,4]", "[2,66]"}) {
      const std::string text = EntryModule(
          "  p = " + std::string(t) + "[6,70] parameter(0)\n  a = " + t +
          "[6,70] copy(p)\n  u = " + t + upd +
          " parameter(1)\n  i = s32[] parameter(2)\n  j = s32[] "
          "parameter(3)\n  ROOT r = " +
          t + "[6,70] dynamic-update-slice(a, u, i, j)\n");
      std::unique_ptr<HloModule> m = testing::Parse(text);
      ASSERT_NE(m, nullptr);
      const HloComputation& entry = *m->entry_computation();
      auto plan = PlanBuffers(entry, entry.MakeInstructionPostOrder(), {});
      ASSERT_TRUE(plan.ok()) << plan.status().ToString();
      EXPECT_EQ(plan->Array(entry.root_instruction()).name,
                plan->Array(entry.root_instruction()->operand(0)).name)
          << "the planner no longer updates in place; this test then "
             "misses the in-place path";
      for (uint64_t seed : {22, 23}) ExpectMatchesOracle(text, seed, kExact);
    }
  }
}

}  // namespace
}  // namespace trench::codegen
