// gather and scatter: dimension numbers, batching dims, clamping (gather),
// skipped out-of-bounds windows and ordered repeated updates (scatter).
#include <gtest/gtest.h>

#include <numeric>

#include "tests/oracle/oracle_test_util.h"

namespace trench {
namespace {

using testing::Lit;
using testing::OneOp;
using testing::R1;
using testing::Values;

constexpr PrimitiveType S32 = PrimitiveType::S32;

Literal Eval(const std::string& hlo, std::vector<Literal> args) {
  return testing::Run(hlo, std::move(args));
}

std::vector<int32_t> Iota(int n, int from = 0) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

TEST(GatherTest, RowsAsInOperationSemantics) {
  // operand [[1,2,3],[4,5,6],[7,8,9]], indices {0,2}: rows 0 and 2.
  EXPECT_EQ(
      Values<int32_t>(Eval(
          OneOp("s32[2,3]", "gather", {"s32[3,3]", "s32[2]"},
                "offset_dims={1}, collapsed_slice_dims={0}, "
                "start_index_map={0}, index_vector_dim=1, "
                "slice_sizes={1,3}"),
          {Lit(S32, {3, 3}, Iota(9, 1)), R1(S32, std::vector<int32_t>{0, 2})})),
      (std::vector<int32_t>{1, 2, 3, 7, 8, 9}));
}

TEST(GatherTest, StartsAreClampedToKeepTheSliceInBounds) {
  // 2x2 windows of a 3x4 operand at (5, -3) and (1, 1): the first clamps
  // to (1, 0).
  EXPECT_EQ(Values<int32_t>(
                Eval(OneOp("s32[2,2,2]", "gather", {"s32[3,4]", "s64[2,2]"},
                           "offset_dims={1,2}, collapsed_slice_dims={}, "
                           "start_index_map={0,1}, index_vector_dim=1, "
                           "slice_sizes={2,2}"),
                     {Lit(S32, {3, 4}, Iota(12)),
                      Lit(PrimitiveType::S64, {2, 2},
                          std::vector<int64_t>{5, -3, 1, 1})})),
            (std::vector<int32_t>{4, 5, 8, 9, 5, 6, 9, 10}));
  // index_vector_dim first (indices [2 coords, 1 batch]) and unsigned
  // indices: u32 0xffffffff clamps high.
  EXPECT_EQ(
      Values<int32_t>(Eval(OneOp("s32[1]", "gather", {"s32[3,4]", "u32[2,1]"},
                                 "offset_dims={}, collapsed_slice_dims={0,1}, "
                                 "start_index_map={0,1}, index_vector_dim=0, "
                                 "slice_sizes={1,1}"),
                           {Lit(S32, {3, 4}, Iota(12)),
                            Lit(PrimitiveType::U32, {2, 1},
                                std::vector<uint32_t>{0xffffffffu, 1})})),
      (std::vector<int32_t>{9}));
}

TEST(GatherTest, BatchingDims) {
  // Per batch row b, pick operand[b, idx[b]].
  EXPECT_EQ(Values<int32_t>(Eval(
                OneOp("s32[2]", "gather", {"s32[2,3]", "s32[2,1]"},
                      "offset_dims={}, collapsed_slice_dims={1}, "
                      "start_index_map={1}, operand_batching_dims={0}, "
                      "start_indices_batching_dims={0}, index_vector_dim=1, "
                      "slice_sizes={1,1}"),
                {Lit(S32, {2, 3}, Iota(6)),
                 Lit(S32, {2, 1}, std::vector<int32_t>{2, 0})})),
            (std::vector<int32_t>{2, 3}));
  // Invalid: a collapsed dim with slice size 2.
  EXPECT_FALSE(
      testing::RunStatus(
          OneOp("s32[2,3]", "gather", {"s32[3,3]", "s32[2]"},
                "offset_dims={1}, collapsed_slice_dims={0}, "
                "start_index_map={0}, index_vector_dim=1, "
                "slice_sizes={2,3}"),
          {Lit(S32, {3, 3}, Iota(9)), R1(S32, std::vector<int32_t>{0, 2})})
          .ok());
}

const char kScatterModule[] = R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
shift {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ten = s32[] constant(10)
  m = s32[] multiply(a, ten)
  ROOT s = s32[] add(m, b)
}
assign {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}
ENTRY e {
  op = s32[%s] parameter(0)
  idx = s32[%s] parameter(1)
  upd = s32[%s] parameter(2)
  ROOT r = s32[%s] scatter(op, idx, upd), %s, to_apply=%s
}
)";

std::string Scatter(const char* op, const char* idx, const char* upd,
                    const char* dnums, const char* fn) {
  char buf[2048];
  std::snprintf(buf, sizeof buf, kScatterModule, op, idx, upd, op, dnums, fn);
  return buf;
}

constexpr char kScalarDnums[] =
    "update_window_dims={}, inserted_window_dims={0}, "
    "scatter_dims_to_operand_dims={0}, index_vector_dim=1";

TEST(ScatterTest, RepeatedIndicesApplyInOrderAndOutOfBoundsIsSkipped) {
  const Literal op = R1(S32, std::vector<int32_t>{0, 0, 0, 0});
  // add, fast path: index 1 twice; -1 and 4 are skipped.
  EXPECT_EQ(
      Values<int32_t>(Eval(Scatter("4", "5", "5", kScalarDnums, "add"),
                           {op, R1(S32, std::vector<int32_t>{1, 1, 3, -1, 4}),
                            R1(S32, std::vector<int32_t>{1, 2, 3, 100, 200})})),
      (std::vector<int32_t>{0, 3, 0, 3}));
  // A non-commutative computation shows the order: ((0*10+1)*10+2)*10+3.
  EXPECT_EQ(Values<int32_t>(Eval(Scatter("4", "3", "3", kScalarDnums, "shift"),
                                 {op, R1(S32, std::vector<int32_t>{2, 2, 2}),
                                  R1(S32, std::vector<int32_t>{1, 2, 3})})),
            (std::vector<int32_t>{0, 0, 123, 0}));
  // Overwrite: the last update wins.
  EXPECT_EQ(Values<int32_t>(Eval(Scatter("4", "3", "3", kScalarDnums, "assign"),
                                 {op, R1(S32, std::vector<int32_t>{0, 0, 3}),
                                  R1(S32, std::vector<int32_t>{7, 8, 9})})),
            (std::vector<int32_t>{8, 0, 0, 9}));
}

TEST(ScatterTest, PartiallyOutOfBoundsWindowIsSkippedWhole) {
  // Windows of 2 into s32[5]: start 3 fits, start 4 would overhang.
  EXPECT_EQ(Values<int32_t>(Eval(
                Scatter("5", "2", "2,2",
                        "update_window_dims={1}, inserted_window_dims={}, "
                        "scatter_dims_to_operand_dims={0}, index_vector_dim=1",
                        "add"),
                {R1(S32, std::vector<int32_t>{0, 0, 0, 0, 0}),
                 R1(S32, std::vector<int32_t>{3, 4}),
                 Lit(S32, {2, 2}, std::vector<int32_t>{1, 2, 5, 6})})),
            (std::vector<int32_t>{0, 0, 0, 1, 2}));
}

TEST(ScatterTest, BatchingDims) {
  // Per batch row b, add upd[b] at operand[b, idx[b]].
  EXPECT_EQ(Values<int32_t>(Eval(
                Scatter("2,3", "2,1", "2",
                        "update_window_dims={}, inserted_window_dims={1}, "
                        "input_batching_dims={0}, "
                        "scatter_indices_batching_dims={0}, "
                        "scatter_dims_to_operand_dims={1}, index_vector_dim=1",
                        "add"),
                {Lit(S32, {2, 3}, std::vector<int32_t>(6, 0)),
                 Lit(S32, {2, 1}, std::vector<int32_t>{2, 0}),
                 R1(S32, std::vector<int32_t>{5, 7})})),
            (std::vector<int32_t>{0, 0, 5, 7, 0, 0}));
}

TEST(ScatterTest, VariadicScatter) {
  const std::string hlo = R"(
HloModule m
both {
  a = s32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = f32[] parameter(3)
  s = s32[] add(a, c)
  m = f32[] maximum(b, d)
  ROOT t = (s32[], f32[]) tuple(s, m)
}
ENTRY e {
  x = s32[3] parameter(0)
  y = f32[3] parameter(1)
  i = s32[2] parameter(2)
  u = s32[2] parameter(3)
  v = f32[2] parameter(4)
  ROOT r = (s32[3], f32[3]) scatter(x, y, i, u, v),
      update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=both
}
)";
  const Literal r =
      Eval(hlo, {R1(S32, std::vector<int32_t>{1, 1, 1}),
                 R1(PrimitiveType::F32, std::vector<float>{0, 0, 0}),
                 R1(S32, std::vector<int32_t>{2, 2}),
                 R1(S32, std::vector<int32_t>{10, 20}),
                 R1(PrimitiveType::F32, std::vector<float>{-1, 4})});
  ASSERT_TRUE(r.shape().IsTuple());
  EXPECT_EQ(Values<int32_t>(r.tuple_element(0)),
            (std::vector<int32_t>{1, 1, 31}));
  EXPECT_EQ(Values<float>(r.tuple_element(1)), (std::vector<float>{0, 0, 4}));
}

}  // namespace
}  // namespace trench
