// convolution: window attributes, dim_labels, groups, integer clamping, and
// a naive loop on random data.
#include <gtest/gtest.h>

#include <random>

#include "tests/oracle/oracle_test_util.h"

namespace trench {
namespace {

using testing::ExpectFloats;
using testing::Lit;
using testing::OneOp;
using testing::Values;

constexpr PrimitiveType F32 = PrimitiveType::F32;

Literal Eval(const std::string& hlo, std::vector<Literal> args,
             int threads = 0) {
  EvaluatorOptions o;
  o.threads = threads;
  return testing::Run(hlo, std::move(args), o);
}

// 1-D: input {1,2,3,4,5} as [b=1, 0=5, f=1], kernel {1,10} as [0=2,i=1,o=1].
std::vector<float> Conv1D(int out, const std::string& window) {
  return Values<float>(
      Eval(OneOp("f32[1," + std::to_string(out) + ",1]", "convolution",
                 {"f32[1,5,1]", "f32[2,1,1]"},
                 "window={" + window + "}, dim_labels=b0f_0io->b0f"),
           {Lit(F32, {1, 5, 1}, std::vector<float>{1, 2, 3, 4, 5}),
            Lit(F32, {2, 1, 1}, std::vector<float>{1, 10})}));
}

TEST(ConvolutionTest, OneDimensionalWindowAttributes) {
  EXPECT_EQ(Conv1D(4, "size=2"), (std::vector<float>{21, 32, 43, 54}));
  EXPECT_EQ(Conv1D(6, "size=2 pad=1_1"),
            (std::vector<float>{10, 21, 32, 43, 54, 5}));
  EXPECT_EQ(Conv1D(2, "size=2 stride=2"), (std::vector<float>{21, 43}));
  // lhs dilation: 1 _ 2 _ 3 _ 4 _ 5.
  EXPECT_EQ(Conv1D(8, "size=2 lhs_dilate=2"),
            (std::vector<float>{1, 20, 2, 30, 3, 40, 4, 50}));
  // rhs dilation: taps two apart.
  EXPECT_EQ(Conv1D(3, "size=2 rhs_dilate=2"), (std::vector<float>{31, 42, 53}));
  // Reversal reads the kernel backwards: x[i]*10 + x[i+1].
  EXPECT_EQ(Conv1D(4, "size=2 rhs_reversal=1"),
            (std::vector<float>{12, 23, 34, 45}));
  // Negative padding crops the input.
  EXPECT_EQ(Conv1D(2, "size=2 pad=-1_-1"), (std::vector<float>{32, 43}));
}

TEST(ConvolutionTest, FeatureAndBatchGroups) {
  // Two feature groups: input features {f0, f1}, kernel [i=1, o=2];
  // output 0 uses f0 only, output 1 uses f1 only.
  ExpectFloats<float>(
      Eval(OneOp("f32[1,1,2]", "convolution", {"f32[1,1,2]", "f32[1,1,2]"},
                 "window={size=1}, dim_labels=b0f_0io->b0f, "
                 "feature_group_count=2"),
           {Lit(F32, {1, 1, 2}, std::vector<float>{3, 5}),
            Lit(F32, {1, 1, 2}, std::vector<float>{2, 7})}),
      {6, 35});
  // Two batch groups: batch {b0, b1}, output batch 1; output feature 0
  // reads b0, output feature 1 reads b1.
  ExpectFloats<float>(
      Eval(OneOp("f32[1,1,2]", "convolution", {"f32[2,1,1]", "f32[1,1,2]"},
                 "window={size=1}, dim_labels=b0f_0io->b0f, "
                 "batch_group_count=2"),
           {Lit(F32, {2, 1, 1}, std::vector<float>{3, 5}),
            Lit(F32, {1, 1, 2}, std::vector<float>{2, 7})}),
      {6, 35});
}

TEST(ConvolutionTest, IntegerResultsClampAndInvalidInputFails) {
  // 100*1 + 100*1 = 200 clamps to 127 in s8 (XLA's evaluator clamps
  // integral convolution results).
  EXPECT_EQ(
      Values<int8_t>(Eval(
          OneOp("s8[1,1,1]", "convolution", {"s8[1,2,1]", "s8[2,1,1]"},
                "window={size=2}, dim_labels=b0f_0io->b0f"),
          {Lit(PrimitiveType::S8, {1, 2, 1}, std::vector<int8_t>{100, 100}),
           Lit(PrimitiveType::S8, {2, 1, 1}, std::vector<int8_t>{1, 1})})),
      (std::vector<int8_t>{127}));
  // Window size disagreeing with the kernel is an error.
  EXPECT_FALSE(
      testing::RunStatus(
          OneOp("f32[1,4,1]", "convolution", {"f32[1,5,1]", "f32[2,1,1]"},
                "window={size=3}, dim_labels=b0f_0io->b0f"),
          {Lit(F32, {1, 5, 1}, std::vector<float>(5)),
           Lit(F32, {2, 1, 1}, std::vector<float>(2))})
          .ok());
}

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

// Naive 2-D convolution, NHWC input, HWIO kernel, NHWC output, written from
// the semantics: window positions row-major, then input features.
struct Conv2D {
  int64_t n, h, w, c, kh, kw, o;
  int64_t sh = 1, sw = 1, plh = 0, phh = 0, plw = 0, phw = 0;
  int64_t lh = 1, lw = 1, rh = 1, rw = 1, groups = 1;
  int64_t OutH() const {
    const int64_t d = (h - 1) * lh + 1 + plh + phh, e = (kh - 1) * rh + 1;
    return d < e ? 0 : (d - e) / sh + 1;
  }
  int64_t OutW() const {
    const int64_t d = (w - 1) * lw + 1 + plw + phw, e = (kw - 1) * rw + 1;
    return d < e ? 0 : (d - e) / sw + 1;
  }
  std::vector<float> Run(const std::vector<float>& x,
                         const std::vector<float>& k) const {
    const int64_t oh = OutH(), ow = OutW(), ci = c / groups, og = o / groups;
    std::vector<float> out(n * oh * ow * o);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t z = 0; z < ow; ++z)
          for (int64_t f = 0; f < o; ++f) {
            double s = 0;
            const int64_t g = f / og;
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t uy = y * sh - plh + ky * rh;
                const int64_t ux = z * sw - plw + kx * rw;
                if (uy < 0 || ux < 0 || uy % lh || ux % lw) continue;
                if (uy / lh >= h || ux / lw >= w) continue;
                for (int64_t i = 0; i < ci; ++i) {
                  s += static_cast<double>(
                           x[((b * h + uy / lh) * w + ux / lw) * c + g * ci +
                             i]) *
                       k[((ky * kw + kx) * ci + i) * o + f];
                }
              }
            out[((b * oh + y) * ow + z) * o + f] = static_cast<float>(s);
          }
    return out;
  }
};

TEST(ConvolutionTest, Random2DMatchesNaiveLoop) {
  Conv2D p{.n = 2, .h = 9, .w = 7, .c = 6, .kh = 3, .kw = 2, .o = 4};
  p.sh = 2;
  p.plh = 1;
  p.phh = 2;
  p.plw = -1;
  p.phw = 1;
  p.lw = 2;
  p.rh = 2;
  p.groups = 2;
  const std::vector<float> x = Random(p.n * p.h * p.w * p.c, 5);
  const std::vector<float> k = Random(p.kh * p.kw * (p.c / p.groups) * p.o, 6);
  const std::string out = "f32[2," + std::to_string(p.OutH()) + "," +
                          std::to_string(p.OutW()) + ",4]";
  const std::string hlo = OneOp(
      out, "convolution", {"f32[2,9,7,6]", "f32[3,2,3,4]"},
      "window={size=3x2 stride=2x1 pad=1_2x-1_1 lhs_dilate=1x2 "
      "rhs_dilate=2x1}, dim_labels=b01f_01io->b01f, feature_group_count=2");
  const std::vector<float> ref = p.Run(x, k);
  for (int threads : {1, 2}) {
    ExpectFloats<float>(
        Eval(hlo, {Lit(F32, {2, 9, 7, 6}, x), Lit(F32, {3, 2, 3, 4}, k)},
             threads),
        ref);
  }
  // The same convolution with NCHW / OIHW / NCHW labels on transposed data.
  const std::string nchw =
      R"(
HloModule m
ENTRY e {
  x = f32[2,9,7,6] parameter(0)
  k = f32[3,2,3,4] parameter(1)
  xt = f32[2,6,9,7] transpose(x), dimensions={0,3,1,2}
  kt = f32[4,3,3,2] transpose(k), dimensions={3,2,0,1}
  c = f32[2,4,)" +
      std::to_string(p.OutH()) + "," + std::to_string(p.OutW()) +
      R"(] convolution(xt, kt), window={size=3x2 stride=2x1 pad=1_2x-1_1 lhs_dilate=1x2 rhs_dilate=2x1}, dim_labels=bf01_oi01->bf01, feature_group_count=2
  ROOT r = )" +
      out + R"( transpose(c), dimensions={0,2,3,1}
}
)";
  ExpectFloats<float>(
      Eval(nchw, {Lit(F32, {2, 9, 7, 6}, x), Lit(F32, {3, 2, 3, 4}, k)}), ref);
}

TEST(ConvolutionTest, ThreeDimensionalMatchesTwoDimensionalSlice) {
  // A 3-D convolution whose third spatial dim has size 1 equals the 2-D one.
  Conv2D p{.n = 1, .h = 5, .w = 4, .c = 3, .kh = 2, .kw = 3, .o = 2};
  p.plw = 1;
  p.phw = 1;
  const std::vector<float> x = Random(1 * 5 * 4 * 3, 8);
  const std::vector<float> k = Random(2 * 3 * 3 * 2, 9);
  ExpectFloats<float>(
      Eval(OneOp("f32[1,4,4,1,2]", "convolution",
                 {"f32[1,5,4,1,3]", "f32[2,3,1,3,2]"},
                 "window={size=2x3x1 pad=0_0x1_1x0_0}, "
                 "dim_labels=b012f_012io->b012f"),
           {Lit(F32, {1, 5, 4, 1, 3}, x), Lit(F32, {2, 3, 1, 3, 2}, k)}),
      p.Run(x, k));
}

}  // namespace
}  // namespace trench
