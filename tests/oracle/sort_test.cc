// sort: fast and general comparators, multiple operands, stability,
// TOTALORDER with NaN and signed zero, sorting along an inner dimension.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/oracle/oracle_test_util.h"

namespace trench {
namespace {

using testing::ExpectFloats;
using testing::kInf;
using testing::kNaN;
using testing::Lit;
using testing::R1;
using testing::Values;

constexpr PrimitiveType F32 = PrimitiveType::F32;
constexpr PrimitiveType S32 = PrimitiveType::S32;

Literal Eval(const std::string& hlo, std::vector<Literal> args) {
  return testing::Run(hlo, std::move(args));
}

// Sorts a f32[n] (and an s32[n] payload) with comparator body `cmp` over
// parameters a, b (keys) and c, d (payload).
std::string SortModule(int n, const std::string& cmp, const char* stable) {
  const std::string s = std::to_string(n);
  return "HloModule m\nless {\n a = f32[] parameter(0)\n b = f32[] "
         "parameter(1)\n c = s32[] parameter(2)\n d = s32[] parameter(3)\n" +
         cmp + "\n}\nENTRY e {\n k = f32[" + s + "] parameter(0)\n v = s32[" +
         s + "] parameter(1)\n ROOT r = (f32[" + s + "], s32[" + s +
         "]) sort(k, v), dimensions={0}, is_stable=" + stable +
         ", to_apply=less\n}\n";
}

TEST(SortTest, KeysWithPayloadAreStable) {
  const Literal k = R1(F32, std::vector<float>{3, 1, 2, 1, 3});
  const Literal v = R1(S32, std::vector<int32_t>{0, 1, 2, 3, 4});
  for (const char* stable : {"true", "false"}) {
    // Fast (one compare) and general (compare through a negation) paths.
    for (const char* cmp :
         {" ROOT lt = pred[] compare(a, b), direction=LT",
          " na = f32[] negate(a)\n nb = f32[] negate(b)\n ROOT gt = pred[] "
          "compare(na, nb), direction=GT"}) {
      const Literal r = Eval(SortModule(5, cmp, stable), {k, v});
      ExpectFloats<float>(r.tuple_element(0), {1, 1, 2, 3, 3});
      EXPECT_EQ(Values<int32_t>(r.tuple_element(1)),
                (std::vector<int32_t>{1, 3, 2, 0, 4}));
    }
  }
  // Descending with swapped parameters: compare(b, a, LT).
  const Literal r = Eval(
      SortModule(5, " ROOT lt = pred[] compare(b, a), direction=LT", "true"),
      {k, v});
  ExpectFloats<float>(r.tuple_element(0), {3, 3, 2, 1, 1});
  EXPECT_EQ(Values<int32_t>(r.tuple_element(1)),
            (std::vector<int32_t>{0, 4, 2, 1, 3}));
}

TEST(SortTest, ComparatorMayUseThePayload) {
  // Order by payload descending; keys follow.
  const Literal r = Eval(
      SortModule(3, " ROOT gt = pred[] compare(c, d), direction=GT", "true"),
      {R1(F32, std::vector<float>{1, 2, 3}),
       R1(S32, std::vector<int32_t>{5, 9, 7})});
  ExpectFloats<float>(r.tuple_element(0), {2, 3, 1});
}

TEST(SortTest, TotalOrderPlacesNaNAndSignedZeros) {
  const float neg_nan = -std::numeric_limits<float>::quiet_NaN();
  const Literal r = Eval(
      SortModule(6,
                 " ROOT lt = pred[] compare(a, b), direction=LT, "
                 "type=TOTALORDER",
                 "true"),
      {R1(F32, std::vector<float>{kNaN, 0.0f, -0.0f, neg_nan, -kInf, 1.0f}),
       R1(S32, std::vector<int32_t>{0, 1, 2, 3, 4, 5})});
  EXPECT_EQ(Values<int32_t>(r.tuple_element(1)),
            (std::vector<int32_t>{3, 4, 2, 1, 5, 0}));
  const std::vector<float> keys = Values<float>(r.tuple_element(0));
  EXPECT_TRUE(std::isnan(keys[0]) && std::signbit(keys[0]));
  EXPECT_TRUE(std::signbit(keys[2]) && keys[2] == 0.0f);
}

TEST(SortTest, InconsistentComparatorStillPermutes) {
  // IEEE LT with NaNs is not a strict weak order; the result must still be
  // a permutation of the input (no crash, no lost elements).
  const Literal r = Eval(
      SortModule(6, " ROOT lt = pred[] compare(a, b), direction=LT", "false"),
      {R1(F32, std::vector<float>{3, kNaN, 1, kNaN, 2, 0}),
       R1(S32, std::vector<int32_t>{0, 1, 2, 3, 4, 5})});
  std::vector<int32_t> perm = Values<int32_t>(r.tuple_element(1));
  std::sort(perm.begin(), perm.end());
  EXPECT_EQ(perm, (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
}

TEST(SortTest, SortsAlongTheGivenDimension) {
  const std::string hlo = R"(
HloModule m
less {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = s32[2,3] parameter(0)
  ROOT r = s32[2,3] sort(x), dimensions={0}, to_apply=less
}
)";
  EXPECT_EQ(
      Values<int32_t>(Eval(
          hlo, {Lit(S32, {2, 3}, std::vector<int32_t>{5, 1, 4, 2, 3, 0})})),
      (std::vector<int32_t>{2, 1, 0, 5, 3, 4}));
  // Zero-sized arrays sort to themselves.
  const std::string empty = R"(
HloModule m
less {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = s32[0,3] parameter(0)
  ROOT r = s32[0,3] sort(x), dimensions={1}, to_apply=less
}
)";
  EXPECT_TRUE(
      Values<int32_t>(Eval(empty, {Lit(S32, {0, 3}, std::vector<int32_t>{})}))
          .empty());
}

}  // namespace
}  // namespace trench
