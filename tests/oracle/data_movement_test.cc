// Data movement kernels: broadcast, reshape, bitcast, transpose, slice,
// reverse, dynamic-slice, dynamic-update-slice, concatenate, pad.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "tests/oracle/oracle_test_util.h"

namespace trench {
namespace {

using testing::ExpectFloats;
using testing::Lit;
using testing::OneOp;
using testing::R0;
using testing::R1;
using testing::RunStatus;
using testing::Values;

constexpr PrimitiveType F32 = PrimitiveType::F32;
constexpr PrimitiveType S32 = PrimitiveType::S32;

// testing::Run under a name that TEST bodies do not shadow.
Literal Eval(const std::string& hlo, std::vector<Literal> args) {
  return testing::Run(hlo, std::move(args));
}

std::vector<int32_t> Iota(int n) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(DataMovementTest, BroadcastMapsOperandDims) {
  const Literal x = R1(S32, std::vector<int32_t>{1, 2});
  EXPECT_EQ(
      Values<int32_t>(Eval(
          OneOp("s32[3,2]", "broadcast", {"s32[2]"}, "dimensions={1}"), {x})),
      (std::vector<int32_t>{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(
      Values<int32_t>(Eval(
          OneOp("s32[2,3]", "broadcast", {"s32[2]"}, "dimensions={0}"), {x})),
      (std::vector<int32_t>{1, 1, 1, 2, 2, 2}));
  // Rank 0 operand fills everything.
  EXPECT_EQ(Values<int32_t>(
                Eval(OneOp("s32[2,2]", "broadcast", {"s32[]"}, "dimensions={}"),
                     {R0(S32, int32_t{7})})),
            (std::vector<int32_t>{7, 7, 7, 7}));
  // Mismatched sizes are an error, not a crash.
  EXPECT_FALSE(
      RunStatus(OneOp("s32[3,3]", "broadcast", {"s32[2]"}, "dimensions={1}"),
                {x})
          .ok());
}

TEST(DataMovementTest, ReshapeKeepsRowMajorOrder) {
  const Literal x = Lit(S32, {2, 3}, Iota(6));
  EXPECT_EQ(
      Values<int32_t>(Eval(OneOp("s32[3,1,2]", "reshape", {"s32[2,3]"}), {x})),
      Iota(6));
}

TEST(DataMovementTest, BitcastReinterpretsPhysicalLayout) {
  const Literal x = Lit(F32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  // Same default layouts: a reshape.
  ExpectFloats<float>(
      Eval(OneOp("f32[3,2]{1,0}", "bitcast", {"f32[2,3]{1,0}"}), {x}),
      {1, 2, 3, 4, 5, 6});
  // Result column-major: physical [2][3] buffer read as result dims
  // (dim1=2 major, dim0=3 minor), i.e. a transpose.
  ExpectFloats<float>(
      Eval(OneOp("f32[3,2]{0,1}", "bitcast", {"f32[2,3]{1,0}"}), {x}),
      {1, 4, 2, 5, 3, 6});
  // Operand column-major: its physical order is 1 4 2 5 3 6.
  ExpectFloats<float>(
      Eval(OneOp("f32[6]{0}", "bitcast", {"f32[2,3]{0,1}"}), {x}),
      {1, 4, 2, 5, 3, 6});
  // An argument's own layout means nothing: the operand names none, so
  // its layout is the default and the bitcast is a reshape.
  Literal column_major = x;
  column_major.set_layout(Layout({0, 1}));
  ExpectFloats<float>(
      Eval(OneOp("f32[3,2]{1,0}", "bitcast", {"f32[2,3]"}), {column_major}),
      {1, 2, 3, 4, 5, 6});
  // Element type may change: bits carry over.
  EXPECT_EQ(
      Values<int32_t>(Eval(OneOp("s32[2]", "bitcast", {"f32[2]"}),
                           {R1(F32, std::vector<float>{1.0f, -2.0f})})),
      (std::vector<int32_t>{0x3f800000, static_cast<int32_t>(0xc0000000)}));
}

TEST(DataMovementTest, TransposeSmallAndLarge) {
  EXPECT_EQ(Values<int32_t>(Eval(OneOp("s32[3,2]", "transpose", {"s32[2,3]"},
                                       "dimensions={1,0}"),
                                 {Lit(S32, {2, 3}, Iota(6))})),
            (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  // A 3-D permutation on odd sizes (exercises tiling edges) vs a naive loop.
  const int64_t a = 37, b = 45, c = 3;
  const std::vector<int32_t> in = Iota(a * b * c);
  const Literal r = Eval(OneOp("s32[45,3,37]", "transpose", {"s32[37,45,3]"},
                               "dimensions={1,2,0}"),
                         {Lit(S32, {a, b, c}, in)});
  const std::vector<int32_t> got = Values<int32_t>(r);
  ASSERT_EQ(got.size(), in.size());
  for (int64_t j = 0; j < b; ++j) {
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t i = 0; i < a; ++i) {
        ASSERT_EQ(got[(j * c + k) * a + i], in[(i * b + j) * c + k]);
      }
    }
  }
  // Complex values move as bytes.
  const Literal z = Lit(PrimitiveType::C64, {2, 1},
                        std::vector<uint64_t>{0x1111222233334444ull, 5});
  EXPECT_EQ(Values<uint64_t>(Eval(OneOp("c64[1,2]", "transpose", {"c64[2,1]"},
                                        "dimensions={1,0}"),
                                  {z})),
            (std::vector<uint64_t>{0x1111222233334444ull, 5}));
}

TEST(DataMovementTest, SliceWithStrides) {
  EXPECT_EQ(Values<int32_t>(
                Eval(OneOp("s32[3]", "slice", {"s32[10]"}, "slice={[2:9:3]}"),
                     {R1(S32, Iota(10))})),
            (std::vector<int32_t>{2, 5, 8}));
  // [3,4] rows 1..3, cols 0..4 step 2 -> {4, 6, 8, 10}.
  EXPECT_EQ(Values<int32_t>(Eval(OneOp("s32[2,2]", "slice", {"s32[3,4]"},
                                       "slice={[1:3], [0:4:2]}"),
                                 {Lit(S32, {3, 4}, Iota(12))})),
            (std::vector<int32_t>{4, 6, 8, 10}));
  // Empty slice and an out-of-range limit.
  EXPECT_TRUE(Values<int32_t>(
                  Eval(OneOp("s32[0]", "slice", {"s32[4]"}, "slice={[2:2]}"),
                       {R1(S32, Iota(4))}))
                  .empty());
  EXPECT_FALSE(RunStatus(OneOp("s32[2]", "slice", {"s32[4]"}, "slice={[3:5]}"),
                         {R1(S32, Iota(4))})
                   .ok());
}

TEST(DataMovementTest, ReverseSelectedDims) {
  EXPECT_EQ(Values<int32_t>(Eval(
                OneOp("s32[2,3]", "reverse", {"s32[2,3]"}, "dimensions={1}"),
                {Lit(S32, {2, 3}, Iota(6))})),
            (std::vector<int32_t>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(Values<uint16_t>(Eval(OneOp("bf16[2,2]", "reverse", {"bf16[2,2]"},
                                        "dimensions={0,1}"),
                                  {Lit(PrimitiveType::BF16, {2, 2},
                                       std::vector<uint16_t>{1, 2, 3, 4})})),
            (std::vector<uint16_t>{4, 3, 2, 1}));
}

TEST(DataMovementTest, DynamicSliceClampsStarts) {
  const std::string hlo = OneOp("s32[3]", "dynamic-slice", {"s32[5]", "s32[]"},
                                "dynamic_slice_sizes={3}");
  auto run = [&](int32_t start) {
    return Values<int32_t>(Eval(hlo, {R1(S32, Iota(5)), R0(S32, start)}));
  };
  EXPECT_EQ(run(1), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(run(3), (std::vector<int32_t>{2, 3, 4}));   // Clamped to 5-3.
  EXPECT_EQ(run(-7), (std::vector<int32_t>{0, 1, 2}));  // Clamped to 0.
  // Unsigned indices: 255 and 2^64-1 clamp high, never wrap negative.
  EXPECT_EQ(Values<int32_t>(
                Eval(OneOp("s32[3]", "dynamic-slice", {"s32[5]", "u8[]"},
                           "dynamic_slice_sizes={3}"),
                     {R1(S32, Iota(5)), R0(PrimitiveType::U8, uint8_t{255})})),
            (std::vector<int32_t>{2, 3, 4}));
  EXPECT_EQ(Values<int32_t>(
                Eval(OneOp("s32[3]", "dynamic-slice", {"s32[5]", "u64[]"},
                           "dynamic_slice_sizes={3}"),
                     {R1(S32, Iota(5)), R0(PrimitiveType::U64, ~uint64_t{0})})),
            (std::vector<int32_t>{2, 3, 4}));
  // 2-D with mixed index types.
  EXPECT_EQ(
      Values<int32_t>(
          Eval(OneOp("s32[2,2]", "dynamic-slice", {"s32[3,4]", "s64[]", "s8[]"},
                     "dynamic_slice_sizes={2,2}"),
               {Lit(S32, {3, 4}, Iota(12)), R0(PrimitiveType::S64, int64_t{1}),
                R0(PrimitiveType::S8, int8_t{9})})),
      (std::vector<int32_t>{6, 7, 10, 11}));
}

TEST(DataMovementTest, DynamicUpdateSliceClampsStarts) {
  const std::string hlo = OneOp("s32[3,3]", "dynamic-update-slice",
                                {"s32[3,3]", "s32[2,2]", "s32[]", "s32[]"});
  const Literal base = Lit(S32, {3, 3}, std::vector<int32_t>(9, 0));
  const Literal upd = Lit(S32, {2, 2}, std::vector<int32_t>{1, 2, 3, 4});
  // (5, -1) clamps to (1, 0).
  EXPECT_EQ(Values<int32_t>(Eval(
                hlo, {base, upd, R0(S32, int32_t{5}), R0(S32, int32_t{-1})})),
            (std::vector<int32_t>{0, 0, 0, 1, 2, 0, 3, 4, 0}));
  EXPECT_EQ(Values<int32_t>(Eval(
                hlo, {base, upd, R0(S32, int32_t{0}), R0(S32, int32_t{1})})),
            (std::vector<int32_t>{0, 1, 2, 0, 3, 4, 0, 0, 0}));
}

TEST(DataMovementTest, ConcatenateIncludingEmptyOperands) {
  EXPECT_EQ(Values<int32_t>(Eval(
                OneOp("s32[2,3]", "concatenate",
                      {"s32[2,1]", "s32[2,0]", "s32[2,2]"}, "dimensions={1}"),
                {Lit(S32, {2, 1}, std::vector<int32_t>{1, 2}),
                 Lit(S32, {2, 0}, std::vector<int32_t>{}),
                 Lit(S32, {2, 2}, std::vector<int32_t>{3, 4, 5, 6})})),
            (std::vector<int32_t>{1, 3, 4, 2, 5, 6}));
}

TEST(DataMovementTest, PadInteriorAndNegativeEdges) {
  const std::string pad1 =
      OneOp("s32[5]", "pad", {"s32[3]", "s32[]"}, "padding=-1_1_1");
  // Interior first: 1 0 2 0 3; then crop one low and add one high.
  EXPECT_EQ(Values<int32_t>(Eval(pad1, {R1(S32, std::vector<int32_t>{1, 2, 3}),
                                        R0(S32, int32_t{0})})),
            (std::vector<int32_t>{0, 2, 0, 3, 0}));
  // Cropping on both ends into the interior padding.
  EXPECT_EQ(Values<int32_t>(Eval(
                OneOp("s32[4]", "pad", {"s32[3]", "s32[]"}, "padding=-3_0_2"),
                {R1(S32, std::vector<int32_t>{1, 2, 3}), R0(S32, int32_t{9})})),
            (std::vector<int32_t>{2, 9, 9, 3}));
  // 2-D: one row on top, interior 1 and one high column.
  ExpectFloats<float>(
      Eval(OneOp("f32[3,4]", "pad", {"f32[2,2]", "f32[]"},
                 "padding=1_0_0x0_1_1"),
           {Lit(F32, {2, 2}, std::vector<float>{1, 2, 3, 4}), R0(F32, -1.0f)}),
      {-1, -1, -1, -1, 1, -1, 2, -1, 3, -1, 4, -1});
  // Empty operand: all padding.
  EXPECT_EQ(Values<int32_t>(Eval(
                OneOp("s32[2]", "pad", {"s32[0]", "s32[]"}, "padding=1_1_3"),
                {R1(S32, std::vector<int32_t>{}), R0(S32, int32_t{4})})),
            (std::vector<int32_t>{4, 4}));
  // Negative result size is rejected.
  EXPECT_FALSE(
      RunStatus(OneOp("s32[0]", "pad", {"s32[1]", "s32[]"}, "padding=-2_0_0"),
                {R1(S32, std::vector<int32_t>{1}), R0(S32, int32_t{0})})
          .ok());
}

}  // namespace
}  // namespace trench
