// The interesting-values tables and the size-boundary registry: exact bit
// patterns per type, HLO text that parses back to the same bits, the
// classification back to kinds, and boundaries equal to the target's
// constants.
#include "triage/fuzz/interesting_values.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/codegen/streaming.h"
#include "compiler/ir/hlo_parser.h"
#include "tpu/isa.h"
#include "triage/fuzz/generator.h"
#include "triage/fuzz/size_boundaries.h"

namespace trench::fuzz {
namespace {

using K = InterestingKind;
using P = PrimitiveType;

bool HasBits(P t, uint64_t bits, K kind) {
  for (const InterestingValue& v : InterestingValues(t)) {
    if (v.bits == bits && v.kind == kind) return true;
  }
  return false;
}

bool HasValue(P t, double value, K kind) {
  for (const InterestingValue& v : InterestingValues(t)) {
    if (v.value == value && v.kind == kind) return true;
  }
  return false;
}

TEST(InterestingValuesTest, IntegerBoundariesPerWidthAndSign) {
  EXPECT_TRUE(HasValue(P::S8, -128, K::kMin));
  EXPECT_TRUE(HasValue(P::S8, -127, K::kMinPlusOne));
  EXPECT_TRUE(HasValue(P::S8, 127, K::kMax));
  EXPECT_TRUE(HasValue(P::S8, 126, K::kMaxMinusOne));
  EXPECT_TRUE(HasBits(P::S8, 0xff, K::kMinusOne));
  EXPECT_TRUE(HasValue(P::S8, 9, K::kShiftCount));  // Width + 1.
  EXPECT_TRUE(HasValue(P::U8, 255, K::kMax));
  EXPECT_TRUE(HasValue(P::U8, 254, K::kMaxMinusOne));
  EXPECT_TRUE(HasValue(P::U8, 129, K::kPow2Edge));
  EXPECT_TRUE(HasValue(P::S32, 65536, K::kPow2Edge));
  EXPECT_TRUE(HasValue(P::S32, -32769, K::kPow2Edge));
  EXPECT_TRUE(HasValue(P::S32, 33, K::kShiftCount));
  EXPECT_TRUE(HasBits(P::S64, uint64_t{1} << 63, K::kMin));
  EXPECT_TRUE(HasBits(P::U64, ~uint64_t{0}, K::kMax));
  EXPECT_TRUE(HasValue(P::U64, 4294967297.0, K::kPow2Edge));
  for (P t : {P::U8, P::U16, P::U32, P::U64}) {
    for (const InterestingValue& v : InterestingValues(t)) {
      EXPECT_GE(v.value, 0) << PrimitiveTypeName(t);
    }
  }
  // Every value fits its type's width.
  for (P t : {P::S8, P::S16, P::U8, P::U16, P::S32, P::U32}) {
    for (const InterestingValue& v : InterestingValues(t)) {
      EXPECT_EQ(v.bits >> BitWidth(t), 0u) << PrimitiveTypeName(t);
    }
  }
}

TEST(InterestingValuesTest, FloatEdgesAreExactBitPatterns) {
  EXPECT_TRUE(HasBits(P::F32, 0x80000000, K::kNegZero));
  EXPECT_TRUE(HasBits(P::F32, 0xff800000, K::kInf));
  EXPECT_TRUE(HasBits(P::F32, 0x7fc00000, K::kQuietNaN));
  EXPECT_TRUE(HasBits(P::F32, 0xffc00000, K::kQuietNaN));
  EXPECT_TRUE(HasBits(P::F32, 0x7fc00001, K::kQuietNaN));
  EXPECT_TRUE(HasBits(P::F32, 0x7f800001, K::kSignalingNaN));
  EXPECT_TRUE(HasBits(P::F32, 0xff800001, K::kSignalingNaN));
  EXPECT_TRUE(HasBits(P::F32, 0x7fbfffff, K::kSignalingNaN));
  EXPECT_TRUE(HasBits(P::F32, 0x00000001, K::kMinSubnormal));
  EXPECT_TRUE(HasBits(P::F32, 0x807fffff, K::kMaxSubnormal));
  EXPECT_TRUE(HasBits(P::F32, 0x00800000, K::kMinNormal));
  EXPECT_TRUE(HasBits(P::F32, 0x7f7fffff, K::kMaxFinite));
  EXPECT_TRUE(HasBits(P::F32, 0x34000000, K::kEpsilon));      // 2^-23.
  EXPECT_TRUE(HasBits(P::F32, 0x3f800001, K::kEpsilon));      // 1 + eps.
  EXPECT_TRUE(HasBits(P::F32, 0x3f7fffff, K::kEpsilon));      // 1 - eps/2.
  EXPECT_TRUE(HasBits(P::F32, 0x4f000000, K::kIntBoundary));  // 2^31.
  EXPECT_TRUE(HasValue(P::F32, 16777216, K::kIntBoundary));   // 2^24.
  EXPECT_TRUE(HasValue(P::F32, -2.5, K::kRoundingTie));
  EXPECT_TRUE(HasBits(P::BF16, 0x7f7f, K::kMaxFinite));
  EXPECT_TRUE(HasBits(P::BF16, 0x7f81, K::kSignalingNaN));
  EXPECT_TRUE(HasBits(P::F16, 0x7bff, K::kMaxFinite));  // 65504.
  EXPECT_TRUE(HasBits(P::F16, 0x0001, K::kMinSubnormal));
  EXPECT_TRUE(HasBits(P::F16, 0x0400, K::kMinNormal));
  EXPECT_TRUE(HasBits(P::F64, 0x7ff0000000000001, K::kSignalingNaN));
  EXPECT_TRUE(HasBits(P::F64, 0x0010000000000000, K::kMinNormal));
  // f16 cannot hold 2^16: that boundary is left out, not rounded to inf.
  EXPECT_FALSE(HasValue(P::F16, 65536, K::kIntBoundary));
  for (const InterestingValue& v : InterestingValues(P::F16)) {
    EXPECT_EQ(v.finite, std::isfinite(v.value));
  }
  EXPECT_EQ(InterestingValuesOf(P::F32, true).size() + 8,
            InterestingValues(P::F32).size());  // 2 inf, 6 NaN.
  // Complex: (v, 0) and (0, v).
  bool re = false, im = false;
  for (const InterestingValue& v : InterestingValues(P::C64)) {
    re |= v.bits == 0x7f800001 && v.imag_bits == 0;
    im |= v.bits == 0 && v.imag_bits == 0x7f800001;
  }
  EXPECT_TRUE(re && im);
}

// Every value of every type printed as a constant parses back to the same
// bits and classifies as its kind.
TEST(InterestingValuesTest, TextParsesBackBitForBitAndClassifies) {
  for (P t : AllDtypes()) {
    const auto& values = InterestingValues(t);
    ASSERT_FALSE(values.empty()) << PrimitiveTypeName(t);
    for (const InterestingValue& v : values) {
      const std::string text = InterestingText(t, v);
      const std::string hlo = "HloModule m\nENTRY e {\n  ROOT c = " +
                              std::string(PrimitiveTypeName(t)) +
                              "[] constant(" + text + ")\n}\n";
      auto m = ParseHloModule(hlo);
      ASSERT_TRUE(m.ok()) << text << ": " << m.status().ToString();
      const Literal& l =
          (*m)->entry_computation()->root_instruction()->literal();
      Literal want{Shape(t, {})};
      StoreInteresting(want, 0, v);
      EXPECT_TRUE(l == want) << PrimitiveTypeName(t) << " " << text;
      auto kind = ClassifyInteresting(l, 0);
      ASSERT_TRUE(kind.has_value()) << text;
      EXPECT_EQ(*kind, v.kind) << PrimitiveTypeName(t) << " " << text;
    }
  }
  Literal l{Shape(P::F32, {})};
  l.SetFromDouble(0, 3.25);
  EXPECT_FALSE(ClassifyInteresting(l, 0).has_value());
}

TEST(SizeBoundariesTest, EqualTheTargetsConstants) {
  std::map<std::string, int64_t> reg;
  for (const SizeBoundary& b : SizeBoundaries())
    reg[std::string(b.name)] = b.value;
  EXPECT_EQ(reg["sublanes"], tpu::kSublanes);
  EXPECT_EQ(reg["lanes"], tpu::kLanes);
  EXPECT_EQ(reg["lanes"], tpu::kMxuDim);
  EXPECT_EQ(reg["vreg"], tpu::kVregElems);
  EXPECT_EQ(reg["dma_run"], codegen::dm::kMinDmaRunBytes);
  EXPECT_EQ(reg["vmem_align"], codegen::VmemAligned(1));
  EXPECT_EQ(reg["stream_chunk"], codegen::kDefaultStreamChunk);
}

TEST(SizeBoundariesTest, ExtentsAroundEachBoundaryAndTheirLabels) {
  EXPECT_EQ(BoundaryDims({8}, 100),
            (std::vector<int64_t>{7, 8, 9, 15, 16, 17, 23, 24, 25}));
  EXPECT_EQ(BoundaryDims({128}, 200), (std::vector<int64_t>{127, 128, 129}));
  std::vector<int64_t> elems;
  for (const ElementBoundary& b : DefaultBoundaries())
    elems.push_back(b.elements);
  for (int64_t want : {8, 16, 32, 64, 128, 256, 512, 1024, 32768}) {
    EXPECT_NE(std::find(elems.begin(), elems.end(), want), elems.end()) << want;
  }
  const auto& bs = DefaultBoundaries();
  EXPECT_EQ(NearBoundary(127, bs), (std::vector<std::string>{"lanes-1"}));
  EXPECT_EQ(NearBoundary(1025, bs), (std::vector<std::string>{"vreg+1"}));
  EXPECT_EQ(NearBoundary(23, bs), (std::vector<std::string>{"3*sublanes-1"}));
  EXPECT_TRUE(NearBoundary(5, bs).empty());
}

}  // namespace
}  // namespace trench::fuzz
