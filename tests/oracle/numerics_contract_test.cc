// The numerics contract: legitimate compiler freedoms (f32 intermediates,
// reassociated sums, one-pass bf16 matmuls, approximate transcendentals)
// stay within the per-element bounds; real errors do not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/oracle/numerics_test_util.h"

namespace trench {
namespace {

using testing::Allowed;
using testing::Bf16s;
using testing::Bounds;
using testing::Lit;
using testing::MoveUlps;
using testing::R0;
using testing::R1;
using testing::Ulp;
using testing::Uniform;

constexpr PrimitiveType BF16 = PrimitiveType::BF16;
constexpr PrimitiveType F32 = PrimitiveType::F32;

// a, b, c -> ten alternating multiplies and adds, in type `t`; with
// `convert_to` the root converts the result.
std::string Chain(const std::string& t, const std::string& convert_to = "") {
  const std::string s = t + "[256]";
  std::string text = "HloModule chain\n\nENTRY e {\n";
  for (int i = 0; i < 3; ++i) {
    text += "  p" + std::to_string(i) + " = " + s + " parameter(" +
            std::to_string(i) + ")\n";
  }
  std::string prev = "p0";
  for (int i = 1; i <= 10; ++i) {
    const std::string other = "p" + std::to_string(i % 3);
    const bool last = i == 10 && convert_to.empty();
    text += std::string("  ") + (last ? "ROOT " : "") + "t" +
            std::to_string(i) + " = " + s + (i % 2 ? " multiply(" : " add(") +
            prev + ", " + other + ")\n";
    prev = "t" + std::to_string(i);
  }
  if (!convert_to.empty()) {
    text += "  ROOT r = " + convert_to + "[256] convert(t10)\n";
  }
  return text + "}\n";
}

TEST(NumericsContractTest, Bf16ChainAllowsF32IntermediatesOnly) {
  std::vector<Literal> bf, f32;
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const Literal b = Bf16s({256}, Uniform(256, 0.5f, 1.5f, seed));
    Literal f(Shape(F32, {256}));
    for (int64_t i = 0; i < 256; ++i) f.SetFromDouble(i, b.GetAsDouble(i));
    bf.push_back(b);
    f32.push_back(std::move(f));
  }
  const BoundedResult r = Bounds(Chain("bf16"), bf);
  ASSERT_EQ(r.outputs.size(), 1u);
  // The same computation keeping f32 intermediates, rounded once at the end.
  const Literal fused = testing::Run(Chain("f32", "bf16"), std::move(f32));
  const ComparisonResult ok = CompareWithBounds(fused, r);
  EXPECT_TRUE(ok.ok()) << ok.ToText();
  int differing = 0;
  double worst_ulps = 0;
  for (int64_t i = 0; i < 256; ++i) {
    const double y = r.nominal.GetAsDouble(i);
    differing += fused.GetAsDouble(i) != y;
    const double ulps = Allowed(r, i) / Ulp(y, BF16);
    worst_ulps = std::max(worst_ulps, ulps);
    // Off by the allowance plus 4 ulps: rejected.
    const Literal off = MoveUlps(r.nominal, i, std::ceil(ulps) + 4);
    EXPECT_FALSE(CompareWithBounds(off, r).ok()) << i;
  }
  EXPECT_GT(differing, 0);  // The two evaluations really differ.
  // Ten rounding ops, each worth at most ~2 ulps, times the safety factor.
  EXPECT_LT(worst_ulps, 48);
  // One bf16 op: 4 ulps off is rejected.
  const Literal a = Bf16s({64}, Uniform(64, 0.5f, 1.5f, 7));
  const Literal b = Bf16s({64}, Uniform(64, 0.5f, 1.5f, 8));
  const BoundedResult one = Bounds(
      testing::OneOp("bf16[64]", "multiply", {"bf16[64]", "bf16[64]"}), {a, b});
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_FALSE(CompareWithBounds(MoveUlps(one.nominal, i, 4), one).ok());
    // A product that is not exact in bf16 may round either way.
    if (Allowed(one, i) > 1e-30) {
      EXPECT_TRUE(CompareWithBounds(MoveUlps(one.nominal, i, 1), one).ok());
    }
  }
}

float SumInOrder(std::vector<float> v) {
  float s = 0;
  for (float x : v) s += x;
  return s;
}

float PairwiseSum(const std::vector<float>& v, size_t lo, size_t hi) {
  if (hi - lo == 1) return v[lo];
  const size_t mid = lo + (hi - lo) / 2;
  return PairwiseSum(v, lo, mid) + PairwiseSum(v, mid, hi);
}

TEST(NumericsContractTest, LongSumAllowsEveryOrderButNotADroppedTerm) {
  const int n = 1024;
  std::vector<float> x = Uniform(n, -1, 1, 42);
  for (int i = 0; i < n; i += 7) x[i] *= 1000;  // Mixed magnitudes.
  const std::string hlo =
      "HloModule s\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] "
      "parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n\nENTRY e {\n  p = "
      "f32[1024] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] "
      "reduce(p, z), dimensions={0}, to_apply=add\n}\n";
  const BoundedResult r = Bounds(hlo, {R1(F32, x)});
  std::vector<float> asc = x, desc = x, by_mag = x;
  std::sort(asc.begin(), asc.end());
  std::sort(desc.rbegin(), desc.rend());
  std::sort(by_mag.begin(), by_mag.end(),
            [](float a, float b) { return std::fabs(a) > std::fabs(b); });
  std::vector<float> shuffled = x;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(3));
  const std::vector<float> sums = {
      SumInOrder(x),          SumInOrder(asc),          SumInOrder(desc),
      SumInOrder(by_mag),     SumInOrder(shuffled),     PairwiseSum(x, 0, n),
      PairwiseSum(asc, 0, n), PairwiseSum(by_mag, 0, n)};
  for (float s : sums) {
    const ComparisonResult c = CompareWithBounds(R0(F32, s), r);
    EXPECT_TRUE(c.ok()) << c.ToText();
  }
  // The allowance is far below the scale of the data, and dropping any
  // term larger than it is caught.
  double mag = 0;
  for (float v : x) mag += std::fabs(v);
  const double allowed = Allowed(r, 0);
  EXPECT_LT(allowed, 2e-4 * mag);
  int caught = 0;
  for (int drop = 0; drop < n; ++drop) {
    if (std::fabs(x[drop]) <= allowed * 1.01) continue;
    std::vector<float> y = x;
    y.erase(y.begin() + drop);
    EXPECT_FALSE(CompareWithBounds(R0(F32, SumInOrder(y)), r).ok()) << drop;
    ++caught;
  }
  EXPECT_GT(caught, 100);
}

// C = A . B for row-major A [m,k] and B [k,n], each product formed from
// `passes` bf16 splits as the matrix unit does (0 = exact f64 products).
std::vector<float> SimulatedMatmul(const std::vector<float>& a,
                                   const std::vector<float>& b, int m, int k,
                                   int n, int passes) {
  auto split = [](float x) {
    const float hi = static_cast<float>(bf16(x));
    const float mid = static_cast<float>(bf16(x - hi));
    const float lo = static_cast<float>(bf16(x - hi - mid));
    return std::array<float, 3>{hi, mid, lo};
  };
  // Pass list (i, j): part i of a times part j of b, smallest first.
  std::vector<std::pair<int, int>> order = {{0, 0}};
  if (passes >= 3) order = {{1, 0}, {0, 1}, {0, 0}};
  if (passes >= 6) order = {{2, 0}, {1, 1}, {0, 2}, {1, 0}, {0, 1}, {0, 0}};
  std::vector<float> c(m * n, 0);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float acc = 0;
      for (auto [pa, pb] : order) {
        float pass = 0;
        for (int q = 0; q < k; ++q) {
          pass += split(a[i * k + q])[pa] * split(b[q * n + j])[pb];
        }
        acc += pass;
      }
      c[i * n + j] = acc;
    }
  }
  return c;
}

std::string DotModule(const char* precision) {
  return std::string(
             "HloModule d\n\nENTRY e {\n  a = f32[8,64] parameter(0)\n  b = "
             "f32[64,8] parameter(1)\n  ROOT d = f32[8,8] dot(a, b), "
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
             "operand_precision={") +
         precision + "," + precision + "}\n}\n";
}

TEST(NumericsContractTest, DotPrecisionModes) {
  const std::vector<float> a = Uniform(8 * 64, -1, 1, 5);
  const std::vector<float> b = Uniform(64 * 8, -1, 1, 6);
  const std::vector<Literal> args = {Lit(F32, {8, 64}, a),
                                     Lit(F32, {64, 8}, b)};
  const BoundedResult def = Bounds(DotModule("default"), args);
  const BoundedResult high = Bounds(DotModule("high"), args);
  const BoundedResult highest = Bounds(DotModule("highest"), args);
  const Literal one_pass = Lit(F32, {8, 8}, SimulatedMatmul(a, b, 8, 64, 8, 1));
  const Literal three = Lit(F32, {8, 8}, SimulatedMatmul(a, b, 8, 64, 8, 3));
  const Literal six = Lit(F32, {8, 8}, SimulatedMatmul(a, b, 8, 64, 8, 6));
  EXPECT_TRUE(CompareWithBounds(one_pass, def).ok());
  EXPECT_TRUE(CompareWithBounds(three, high).ok());
  EXPECT_TRUE(CompareWithBounds(six, highest).ok());
  EXPECT_TRUE(CompareWithBounds(six, def).ok());
  // Too few passes for the requested precision.
  EXPECT_FALSE(CompareWithBounds(one_pass, highest).ok());
  EXPECT_FALSE(CompareWithBounds(one_pass, high).ok());
  // (HIGH against HIGHEST is not separable at k = 64: the worst-case f32
  // accumulation term dominates both.)
  // One wrong term (the largest product's sign flipped) in element (0, 0).
  int worst = 0;
  for (int q = 1; q < 64; ++q) {
    if (std::fabs(a[q] * b[q * 8]) > std::fabs(a[worst] * b[worst * 8])) {
      worst = q;
    }
  }
  Literal wrong = one_pass;
  wrong.mutable_data<float>()[0] -= 2 * a[worst] * b[worst * 8];
  const ComparisonResult c = CompareWithBounds(wrong, def);
  EXPECT_FALSE(c.ok());
  ASSERT_TRUE(c.outputs[0].first_mismatch.has_value());
  EXPECT_EQ(c.outputs[0].first_mismatch->linear_index, 0);
  EXPECT_TRUE(c.outputs[0].first_mismatch->allowed.has_value());
}

TEST(NumericsContractTest, CompareNearATieMakesSelectUndetermined) {
  // s = a + b carries a rounding bound; s is compared with t. Element 0:
  // t == s (a tie); element 1: t far below s.
  const std::string hlo =
      "HloModule c\n\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] "
      "parameter(1)\n  t = f32[2] parameter(2)\n  x = f32[2] parameter(3)\n "
      " y = f32[2] parameter(4)\n  s = f32[2] add(a, b)\n  c = pred[2] "
      "compare(s, t), direction=LT\n  ROOT r = f32[2] select(c, x, y)\n}\n";
  const float s0 = 0.1f + 0.2f;
  const BoundedResult r = Bounds(hlo, {R1(F32, std::vector<float>{0.1f, 5.0f}),
                                       R1(F32, std::vector<float>{0.2f, 1.0f}),
                                       R1(F32, std::vector<float>{s0, 1.0f}),
                                       R1(F32, std::vector<float>{10, 10}),
                                       R1(F32, std::vector<float>{20, 20})});
  // Near the tie either branch is fine: the allowance spans |x - y|.
  EXPECT_GE(Allowed(r, 0), 10);
  EXPECT_LT(Allowed(r, 1), 1e-30);
  EXPECT_TRUE(CompareWithBounds(R1(F32, std::vector<float>{10, 20}), r).ok());
  EXPECT_TRUE(CompareWithBounds(R1(F32, std::vector<float>{20, 20}), r).ok());
  EXPECT_FALSE(CompareWithBounds(R1(F32, std::vector<float>{10, 10}), r).ok());
  // The predicate itself, as an output, is undetermined at the tie only.
  const std::string pred_hlo =
      "HloModule c\n\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] "
      "parameter(1)\n  t = f32[2] parameter(2)\n  s = f32[2] add(a, b)\n  "
      "ROOT c = pred[2] compare(s, t), direction=LT\n}\n";
  const BoundedResult p =
      Bounds(pred_hlo, {R1(F32, std::vector<float>{0.1f, 5.0f}),
                        R1(F32, std::vector<float>{0.2f, 1.0f}),
                        R1(F32, std::vector<float>{s0, 1.0f})});
  EXPECT_TRUE(std::isinf(Allowed(p, 0)));
  EXPECT_EQ(Allowed(p, 1), 0);
  EXPECT_EQ(p.outputs[0].undetermined, 1);
  const ComparisonResult flipped = CompareWithBounds(
      Lit(PrimitiveType::PRED, {2}, std::vector<uint8_t>{1, 1}), p);
  EXPECT_FALSE(flipped.ok());
  EXPECT_EQ(flipped.outputs[0].undetermined_count, 1);
}

TEST(NumericsContractTest, TranscendentalsWithinTheUlpAllowance) {
  const std::vector<float> x = Uniform(512, -4, 4, 11);
  for (const char* op : {"exponential", "tanh"}) {
    const BoundedResult r =
        Bounds(testing::OneOp("f32[512]", op, {"f32[512]"}), {R1(F32, x)});
    Literal approx(Shape(F32, {512}));
    for (int64_t i = 0; i < 512; ++i) {
      const double exact =
          op[0] == 'e' ? std::exp(double{x[i]}) : std::tanh(double{x[i]});
      approx.mutable_data<float>()[i] = static_cast<float>(exact);
    }
    // 4 ulps away from the correctly rounded value in either direction
    // (tpu/ISA.md's largest bound for these two is 3).
    for (int64_t i = 0; i < 512; ++i) {
      const int sign = i % 2 ? 1 : -1;
      const Literal moved = MoveUlps(approx, i, sign * 4);
      EXPECT_TRUE(CompareWithBounds(moved, r).ok()) << op << " " << i;
      EXPECT_FALSE(CompareWithBounds(MoveUlps(approx, i, 64), r).ok());
    }
  }
}

TEST(NumericsContractTest, NanAndInfinityRules) {
  const float inf = testing::kInf, nan = testing::kNaN;
  const BoundedResult r =
      Bounds(testing::OneOp("f32[4]", "add", {"f32[4]", "f32[4]"}),
             {R1(F32, std::vector<float>{nan, inf, -inf, 1}),
              R1(F32, std::vector<float>{1, 1, 1, 2})});
  auto check = [&](std::vector<float> v) {
    return CompareWithBounds(R1(F32, v), r);
  };
  EXPECT_TRUE(check({-nan, inf, -inf, 3}).ok());
  const ComparisonResult bad = check({1, -inf, -inf, 3});
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.outputs[0].nonfinite_mismatch_count, 2);
  EXPECT_FALSE(check({nan, inf, -inf, nan}).ok());
  EXPECT_FALSE(check({nan, inf, -inf, inf}).ok());
  // Overflow of exact inputs is fixed; a pole inside the interval is not.
  const BoundedResult e =
      Bounds(testing::OneOp("f32[2]", "exponential", {"f32[2]"}),
             {R1(F32, std::vector<float>{100, 1})});
  EXPECT_EQ(Allowed(e, 0), 0);
  // 1 / (a*b - c) with c the rounded product: a rounding-sized interval
  // around 0.
  const std::string pole =
      "HloModule p\n\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] "
      "parameter(1)\n  c = f32[2] parameter(2)\n  one = f32[] constant(1)\n"
      "  o = f32[2] broadcast(one), dimensions={}\n  t = f32[2] "
      "multiply(a, b)\n  s = f32[2] subtract(t, c)\n  ROOT d = f32[2] "
      "divide(o, s)\n}\n";
  const float a0 = 0.1f, b0 = 3;
  const BoundedResult d =
      Bounds(pole, {R1(F32, std::vector<float>{a0, 2}),
                    R1(F32, std::vector<float>{b0, 1}),
                    R1(F32, std::vector<float>{a0 * b0, 1})});
  EXPECT_TRUE(std::isinf(Allowed(d, 0)));
  EXPECT_TRUE(std::isfinite(Allowed(d, 1)));
}

}  // namespace
}  // namespace trench
