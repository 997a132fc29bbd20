// reduce, reduce-window and select-and-scatter.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/oracle/oracle_test_util.h"

namespace trench {
namespace {

using testing::ExpectFloats;
using testing::kNaN;
using testing::Lit;
using testing::R0;
using testing::R1;
using testing::Values;

constexpr PrimitiveType F32 = PrimitiveType::F32;
constexpr PrimitiveType S32 = PrimitiveType::S32;

Literal Eval(const std::string& hlo, std::vector<Literal> args) {
  return testing::Run(hlo, std::move(args));
}

// A module with reducer computations `add` (recognised: fast path),
// `add_slow` (negate(negate(a+b)): same value, general path), `max`, and an
// entry whose body is `body` on p0 (and p1 when given).
std::string Module(const std::string& type, const std::string& p0,
                   const std::string& body, const std::string& p1 = "") {
  std::string m = "HloModule m\n";
  m += "add {\n a = " + type + "[] parameter(0)\n b = " + type +
       "[] parameter(1)\n ROOT s = " + type + "[] add(a, b)\n}\n";
  m += "add_slow {\n a = " + type + "[] parameter(0)\n b = " + type +
       "[] parameter(1)\n t = " + type + "[] add(a, b)\n n = " + type +
       "[] negate(t)\n ROOT r = " + type + "[] negate(n)\n}\n";
  m += "max {\n a = " + type + "[] parameter(0)\n b = " + type +
       "[] parameter(1)\n ROOT s = " + type + "[] maximum(a, b)\n}\n";
  m += "ENTRY e {\n p0 = " + p0 + " parameter(0)\n";
  if (!p1.empty()) m += " p1 = " + p1 + " parameter(1)\n";
  m += " z = " + type + "[] constant(0)\n" + body + "\n}\n";
  return m;
}

TEST(ReduceTest, HandCheckedSums) {
  const Literal x = Lit(F32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  auto run = [&](const std::string& out, const std::string& dims,
                 const char* fn) {
    return Eval((Module("f32", "f32[2,3]",
                        " ROOT r = " + out + " reduce(p0, z), dimensions=" +
                            dims + ", to_apply=" + fn)),
                {x});
  };
  for (const char* fn : {"add", "add_slow"}) {
    ExpectFloats<float>(run("f32[2]", "{1}", fn), {6, 15});
    ExpectFloats<float>(run("f32[3]", "{0}", fn), {5, 7, 9});
    ExpectFloats<float>(run("f32[]", "{0,1}", fn), {21});
    ExpectFloats<float>(run("f32[2,3]", "{}", fn), {1, 2, 3, 4, 5, 6});
  }
}

TEST(ReduceTest, FloatAddAccumulatesInF64AndRoundsOnce) {
  // In f32 step by step, 1e8 + 1 rounds back to 1e8 and the sum is 0; the
  // oracle's f64 accumulation keeps the 1 (a deliberate choice).
  const Literal x = R1(F32, std::vector<float>{1e8f, 1.0f, -1e8f});
  ExpectFloats<float>(
      Eval((Module("f32", "f32[3]",
                   " ROOT r = f32[] reduce(p0, z), dimensions={0}, "
                   "to_apply=add")),
           {x}),
      {1.0f});
}

TEST(ReduceTest, MaxPropagatesNaNAndIntegersWrap) {
  ExpectFloats<float>(
      Eval((Module("f32", "f32[3]",
                   " ROOT r = f32[] reduce(p0, z), dimensions={0}, "
                   "to_apply=max")),
           {R1(F32, std::vector<float>{1.0f, kNaN, 3.0f})}),
      {kNaN});
  const Literal s8 = R1(PrimitiveType::S8, std::vector<int8_t>{100, 100, 1});
  for (const char* fn : {"add", "add_slow"}) {
    EXPECT_EQ(
        Values<int8_t>(Eval((Module("s8", "s8[3]",
                                    std::string(" ROOT r = s8[] reduce(p0, z), "
                                                "dimensions={0}, to_apply=") +
                                        fn)),
                            {s8})),
        (std::vector<int8_t>{-55}));
  }
}

TEST(ReduceTest, VariadicArgmax) {
  const std::string hlo = R"(
HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(bv, av), direction=GT
  eq = pred[] compare(bv, av), direction=EQ
  lt = pred[] compare(bi, ai), direction=LT
  tie = pred[] and(eq, lt)
  take = pred[] or(gt, tie)
  v = f32[] select(take, bv, av)
  i = s32[] select(take, bi, ai)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[2,4] parameter(0)
  idx = s32[2,4] parameter(1)
  lo = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(x, idx, lo, zero), dimensions={1},
      to_apply=argmax
}
)";
  const Literal r = Eval(
      hlo, {Lit(F32, {2, 4}, std::vector<float>{3, 7, 7, 1, -1, -5, 2, 2}),
            Lit(S32, {2, 4}, std::vector<int32_t>{0, 1, 2, 3, 0, 1, 2, 3})});
  ASSERT_TRUE(r.shape().IsTuple());
  ExpectFloats<float>(r.tuple_element(0), {7, 2});
  EXPECT_EQ(Values<int32_t>(r.tuple_element(1)), (std::vector<int32_t>{1, 2}));
}

// Naive reference: row-major over all input dims, f64 accumulators.
std::vector<float> NaiveSum(const std::vector<float>& x,
                            const std::vector<int64_t>& dims,
                            const std::vector<bool>& reduced) {
  std::vector<int64_t> out_dims;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!reduced[d]) out_dims.push_back(dims[d]);
  }
  int64_t out_n = 1;
  for (int64_t d : out_dims) out_n *= d;
  std::vector<double> acc(out_n, 0.0);
  std::vector<int64_t> idx(dims.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!reduced[d]) o = o * dims[d] + idx[d];
    }
    acc[o] += x[i];
    for (int64_t d = dims.size() - 1; d >= 0; --d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return std::vector<float>(acc.begin(), acc.end());
}

TEST(ReduceTest, RandomSumsMatchNaiveLoop) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-10, 10);
  const std::vector<int64_t> dims = {37, 53, 19};
  std::vector<float> x(37 * 53 * 19);
  for (float& v : x) v = u(gen);
  const Literal in = Lit(F32, dims, x);
  struct Case {
    std::string out, attr;
    std::vector<bool> reduced;
  };
  for (const Case& c : {Case{"f32[53]", "{0,2}", {true, false, true}},
                        Case{"f32[37,19]", "{1}", {false, true, false}},
                        Case{"f32[37,53]", "{2}", {false, false, true}},
                        Case{"f32[19]", "{0,1}", {true, true, false}}}) {
    const std::vector<float> ref = NaiveSum(x, dims, c.reduced);
    for (const char* fn : {"add", "add_slow"}) {
      const std::vector<float> got = Values<float>(
          Eval((Module("f32", "f32[37,53,19]",
                       " ROOT r = " + c.out + " reduce(p0, z), dimensions=" +
                           c.attr + ", to_apply=" + fn)),
               {in}));
      ASSERT_EQ(got.size(), ref.size());
      for (size_t i = 0; i < got.size(); ++i) {
        // The fast path sums in f64 (one rounding); the general path rounds
        // each step in f32, so it only gets a loose bound.
        const float tol =
            std::string(fn) == "add" ? 1e-6f * std::abs(ref[i]) : 1e-3f;
        ASSERT_NEAR(got[i], ref[i], tol + 1e-30f) << c.attr << " " << i;
      }
    }
  }
}

TEST(ReduceWindowTest, PaddingAndDilations) {
  auto rw = [&](const std::string& out, const std::string& window,
                std::vector<float> in) {
    const std::string shape = "f32[" + std::to_string(in.size()) + "]";
    return Values<float>(
        Eval((Module("f32", shape,
                     " ROOT r = " + out + " reduce-window(p0, z), window={" +
                         window + "}, to_apply=add")),
             {R1(F32, in)}));
  };
  const std::vector<float> x = {1, 2, 3, 4, 5};
  EXPECT_EQ(rw("f32[4]", "size=2", x), (std::vector<float>{3, 5, 7, 9}));
  EXPECT_EQ(rw("f32[6]", "size=2 pad=1_1", x),
            (std::vector<float>{1, 3, 5, 7, 9, 5}));
  EXPECT_EQ(rw("f32[2]", "size=2 stride=2", x), (std::vector<float>{3, 7}));
  // Base dilation 2 on {1,2,3}: 1 _ 2 _ 3, each window of 2 sees one value.
  EXPECT_EQ(rw("f32[4]", "size=2 lhs_dilate=2", {1, 2, 3}),
            (std::vector<float>{1, 2, 2, 3}));
  // Window dilation 2: pairs two apart.
  EXPECT_EQ(rw("f32[3]", "size=2 rhs_dilate=2", x),
            (std::vector<float>{4, 6, 8}));
  // Negative padding crops.
  EXPECT_EQ(rw("f32[2]", "size=2 pad=-1_-1", x), (std::vector<float>{5, 7}));
  // A window disagreeing with the result shape (here an absurd padding) is
  // an error before anything is allocated.
  EXPECT_FALSE(testing::RunStatus(
                   Module("f32", "f32[5]",
                          " ROOT r = f32[4] reduce-window(p0, z), "
                          "window={size=2 pad=0_1000000000000}, to_apply=add"),
                   {R1(F32, x)})
                   .ok());
}

TEST(ReduceWindowTest, MaxPool2DFastAndGeneral) {
  const std::vector<float> x = {1, 2,  3,  4,  5,  6,  7,  8,
                                9, 10, 11, 12, 13, 14, 15, 16};
  const std::string max_pool =
      (Module("f32", "f32[4,4]",
              " lo = f32[] constant(-inf)\n ROOT r = f32[2,2] "
              "reduce-window(p0, lo), window={size=2x2 stride=2x2}, "
              "to_apply=max"));
  ExpectFloats<float>(Eval(max_pool, {Lit(F32, {4, 4}, x)}), {6, 8, 14, 16});
  // Integer sums, fast vs general path: identical.
  std::vector<int32_t> xi(16);
  for (int i = 0; i < 16; ++i) xi[i] = i * 7 - 30;
  std::vector<std::vector<int32_t>> results;
  for (const char* fn : {"add", "add_slow"}) {
    results.push_back(Values<int32_t>(
        Eval((Module("s32", "s32[4,4]",
                     std::string(" ROOT r = s32[3,2] reduce-window(p0, z), "
                                 "window={size=3x2 stride=1x2 pad=1_0x0_0 "
                                 "rhs_dilate=1x1}, to_apply=") +
                         fn)),
             {Lit(S32, {4, 4}, xi)})));
  }
  EXPECT_EQ(results[0], results[1]);
  // Top-left window covers rows -1..1 (row -1 is padding), cols 0..1.
  EXPECT_EQ(results[0][0], xi[0] + xi[1] + xi[4] + xi[5]);
}

TEST(ReduceWindowTest, VariadicUsesTupleComputation) {
  const std::string hlo = R"(
HloModule m
pair {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] add(a, c)
  m = s32[] maximum(b, d)
  ROOT t = (f32[], s32[]) tuple(s, m)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = s32[4] parameter(1)
  z = f32[] constant(0)
  lo = s32[] constant(-100)
  ROOT r = (f32[3], s32[3]) reduce-window(x, y, z, lo), window={size=2},
      to_apply=pair
}
)";
  const Literal r = Eval(hlo, {R1(F32, std::vector<float>{1, 2, 3, 4}),
                               R1(S32, std::vector<int32_t>{5, -1, 9, 0})});
  ExpectFloats<float>(r.tuple_element(0), {3, 5, 7});
  EXPECT_EQ(Values<int32_t>(r.tuple_element(1)),
            (std::vector<int32_t>{5, 9, 9}));
}

const char kSelectAndScatter[] = R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[%d] parameter(0)
  src = f32[%d] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[%d] select-and-scatter(x, src, z), window={%s},
      select=ge, scatter=add
}
)";

std::string SelectAndScatter(int n, int m, const char* window) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, kSelectAndScatter, n, m, n, window);
  return buf;
}

TEST(SelectAndScatterTest, MaxPoolGradient) {
  // Non-overlapping windows: each source value goes to its window's max.
  ExpectFloats<float>(Eval(SelectAndScatter(6, 3, "size=2 stride=2"),
                           {R1(F32, std::vector<float>{1, 5, 3, 2, 8, 7}),
                            R1(F32, std::vector<float>{10, 20, 30})}),
                      {0, 10, 20, 0, 30, 0});
  // Overlapping windows accumulate; ties keep the first element (GE).
  ExpectFloats<float>(Eval(SelectAndScatter(4, 3, "size=2"),
                           {R1(F32, std::vector<float>{1, 3, 3, 4}),
                            R1(F32, std::vector<float>{1, 2, 4})}),
                      {0, 3, 0, 4});
  // Padding is never selected, even when it would win.
  ExpectFloats<float>(Eval(SelectAndScatter(2, 2, "size=2 pad=1_0"),
                           {R1(F32, std::vector<float>{-5, -6}),
                            R1(F32, std::vector<float>{1, 2})}),
                      {3, 0});
}

}  // namespace
}  // namespace trench
