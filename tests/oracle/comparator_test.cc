#include "oracle/comparator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace trench {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Literal F32(std::vector<float> v, std::vector<int64_t> dims = {}) {
  if (dims.empty()) dims = {static_cast<int64_t>(v.size())};
  Literal lit(Shape(PrimitiveType::F32, dims));
  for (size_t i = 0; i < v.size(); ++i) lit.mutable_data<float>()[i] = v[i];
  return lit;
}

Literal S32(std::vector<int32_t> v) {
  Literal lit(Shape(PrimitiveType::S32, {static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) lit.mutable_data<int32_t>()[i] = v[i];
  return lit;
}

TEST(ComparatorTest, EqualLiteralsMatch) {
  const Literal a = F32({1, 2, 3});
  ComparisonResult r = CompareLiterals(a, a);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].element_count, 3);
  EXPECT_EQ(r.outputs[0].max_abs_error, 0);
  EXPECT_EQ(r.outputs[0].max_ulp_error, 0u);
}

TEST(ComparatorTest, ErrorSpecIsAbsOrRel) {
  // 1000 vs 1000.001: abs 1e-3 > 1e-5 but rel 1e-6 <= 1e-5 -> fine.
  // 1e-7 vs 2e-7: rel 1 but abs 1e-7 <= 1e-5 -> fine.
  // 1 vs 1.001: both bounds exceeded -> mismatch.
  const Literal expected = F32({1000.0f, 1e-7f, 1.0f});
  const Literal actual = F32({1000.001f, 2e-7f, 1.001f});
  ComparisonResult r = CompareLiterals(actual, expected);
  EXPECT_FALSE(r.ok());
  const OutputComparison& o = r.outputs[0];
  EXPECT_EQ(o.mismatch_count, 1);
  ASSERT_TRUE(o.first_mismatch.has_value());
  EXPECT_EQ(o.first_mismatch->linear_index, 2);
  EXPECT_EQ(o.first_mismatch->expected.Dump(), "1.0");
  EXPECT_EQ(o.first_mismatch->actual.Dump(), "1.001");
  EXPECT_NEAR(o.max_rel_error, 1.0, 1e-6);  // From the 1e-7 element.
  // The stricter rule fails all three.
  ComparisonOptions both;
  both.rule = ToleranceRule::kAbsAndRel;
  EXPECT_EQ(CompareLiterals(actual, expected, both).outputs[0].mismatch_count,
            3);
}

TEST(ComparatorTest, UlpsAreCountedInTheOutputType) {
  Literal e(Shape(PrimitiveType::BF16, {2}));
  Literal a(Shape(PrimitiveType::BF16, {2}));
  e.mutable_data<bf16>()[0] = bf16::FromBits(0x3f80);  // 1.0
  a.mutable_data<bf16>()[0] = bf16::FromBits(0x3f83);  // 3 bf16 ulps up
  e.mutable_data<bf16>()[1] = bf16::FromBits(0x0001);  // +min subnormal
  a.mutable_data<bf16>()[1] = bf16::FromBits(0x8001);  // -min subnormal
  ComparisonResult r = CompareLiterals(a, e);
  EXPECT_EQ(r.outputs[0].max_ulp_error, 3u);
  // 3 ulps = 2.3% relative: beyond bf16's 1e-2.
  EXPECT_EQ(r.outputs[0].mismatch_count, 1);
  // Across zero, +x and -x are 2 ulps apart.
  const Literal pz = F32({0.0f}), nz = F32({-0.0f});
  EXPECT_EQ(CompareLiterals(pz, nz).outputs[0].max_ulp_error, 0u);
  EXPECT_EQ(CompareLiterals(F32({std::nextafter(0.0f, 1.0f)}),
                            F32({-std::nextafter(0.0f, 1.0f)}))
                .outputs[0]
                .max_ulp_error,
            2u);
}

TEST(ComparatorTest, NanAndInfPatternsAreReportedApart) {
  const Literal expected = F32({kNaN, kInf, 1.0f, -kInf, 5.0f});
  const Literal actual = F32({kNaN, 3.0f, kNaN, -kInf, 9.0f});
  ComparisonResult r = CompareLiterals(actual, expected);
  const OutputComparison& o = r.outputs[0];
  EXPECT_EQ(o.nonfinite_mismatch_count, 2);
  ASSERT_TRUE(o.first_nonfinite_mismatch.has_value());
  EXPECT_EQ(o.first_nonfinite_mismatch->linear_index, 1);
  EXPECT_EQ(o.first_nonfinite_mismatch->expected.Dump(), "\"inf\"");
  EXPECT_EQ(o.mismatch_count, 1);
  EXPECT_EQ(o.first_mismatch->linear_index, 4);
  EXPECT_EQ(o.max_abs_error, 4.0);  // Non-finite pairs do not count.
}

TEST(ComparatorTest, ExactModeIsBitwiseExceptNaN) {
  const float nan2 = std::bit_cast<float>(0x7fc00001u);
  const Literal expected = F32({kNaN, 0.0f, 1.0f});
  const Literal actual = F32({-nan2, -0.0f, std::nextafter(1.0f, 2.0f)});
  ComparisonResult r =
      CompareLiterals(actual, expected, ComparisonOptions::Exact());
  const OutputComparison& o = r.outputs[0];
  EXPECT_EQ(o.nonfinite_mismatch_count, 0);  // Any NaN equals any NaN.
  EXPECT_EQ(o.mismatch_count, 2);            // -0 != +0; one ulp off.
  EXPECT_EQ(o.first_mismatch->linear_index, 1);
  EXPECT_EQ(o.max_ulp_error, 1u);
  // The same pair is fine in near mode.
  EXPECT_TRUE(CompareLiterals(actual, expected).ok());
}

TEST(ComparatorTest, IntegersAreExact) {
  ComparisonResult r = CompareLiterals(S32({1, 2, -5}), S32({1, 3, 5}),
                                       ComparisonOptions::Near(100, 100));
  const OutputComparison& o = r.outputs[0];
  EXPECT_EQ(o.mismatch_count, 2);
  EXPECT_EQ(o.max_abs_error, 10);
  EXPECT_EQ(o.max_ulp_error, 10u);
  EXPECT_EQ(o.first_mismatch->actual.Dump(), "2");
  Literal big(Shape(PrimitiveType::S64, {1}));
  Literal small(Shape(PrimitiveType::S64, {1}));
  big.mutable_data<int64_t>()[0] = INT64_MAX;
  small.mutable_data<int64_t>()[0] = INT64_MIN;
  EXPECT_EQ(CompareLiterals(big, small).outputs[0].max_ulp_error, UINT64_MAX);
}

TEST(ComparatorTest, ComplexComparesEachPart) {
  Literal e(Shape(PrimitiveType::C64, {2}));
  Literal a(Shape(PrimitiveType::C64, {2}));
  e.mutable_data<c64>()[0] = c64(1, 100);
  a.mutable_data<c64>()[0] = c64(1, 100.0001f);  // rel 1e-6: fine.
  e.mutable_data<c64>()[1] = c64(1, 2);
  a.mutable_data<c64>()[1] = c64(1, kNaN);
  const OutputComparison o = CompareLiterals(a, e).outputs[0];
  EXPECT_EQ(o.mismatch_count, 0);
  EXPECT_EQ(o.nonfinite_mismatch_count, 1);
  EXPECT_EQ(o.first_nonfinite_mismatch->actual.Dump(), "[1.0,\"nan\"]");
}

TEST(ComparatorTest, TuplesCompareLeavesAndReportShapes) {
  const Literal expected =
      Literal::Tuple({F32({1, 2}), Literal::Tuple({S32({7})})});
  const Literal good = Literal::Tuple({F32({1, 2}), S32({7})});
  EXPECT_TRUE(CompareLiterals(good, expected).ok());  // Flattened order.
  const Literal bad_shape = Literal::Tuple({F32({1, 2, 3}), S32({7})});
  ComparisonResult r = CompareLiterals(bad_shape, expected);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.outputs[0].shape_error, "expected f32[2], got f32[3]");
  EXPECT_TRUE(r.outputs[1].ok());
  ComparisonResult fewer = CompareLiterals(F32({1, 2}), expected);
  EXPECT_EQ(fewer.structure_error,
            "expected 2 outputs ((f32[2], (s32[1]))), got 1 (f32[2])");
  EXPECT_FALSE(fewer.ok());
}

TEST(ComparatorTest, MultiIndexOfFirstMismatch) {
  const Literal e = F32({0, 0, 0, 0, 0, 0}, {2, 3});
  const Literal a = F32({0, 0, 0, 0, 1, 0}, {2, 3});
  const OutputComparison o = CompareLiterals(a, e).outputs[0];
  EXPECT_EQ(o.first_mismatch->index, (std::vector<int64_t>{1, 1}));
}

TEST(ComparatorTest, PrintsJsonAndText) {
  const Literal expected = F32({1.0f, 0.0f, kNaN});
  const Literal actual = F32({1.5f, 1.0f, 2.0f});
  ComparisonResult r = CompareLiterals(actual, expected);
  auto json = PrintJson(r.ToJson());
  ASSERT_TRUE(json.ok()) << json.status().ToString();  // inf rel as "inf".
  EXPECT_NE(json->find("\"max_rel_error\":\"inf\""), std::string::npos)
      << *json;
  EXPECT_NE(json->find("\"mismatches\":2"), std::string::npos) << *json;
  EXPECT_EQ(r.ToText(),
            "output 0 f32[3]: MISMATCH (2 value, 1 NaN/Inf of 3 elements); "
            "max abs 1, max rel inf, max ulp 1065353216\n"
            "    first mismatch at [0] (linear 0): expected 1.0, actual 1.5\n"
            "    first NaN/Inf mismatch at [2] (linear 2): expected \"nan\", "
            "actual 2.0\n");
}

}  // namespace
}  // namespace trench
