#include "compiler/ir/random_inputs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace trench {
namespace {

TEST(RandomInputsTest, SplitMix64MatchesTheReferenceSequence) {
  // Reference values of SplitMix64 seeded with 1234567 (from the
  // published C implementation).
  uint64_t state = 1234567;
  EXPECT_EQ(SplitMix64Next(state), 6457827717110365317ull);
  EXPECT_EQ(SplitMix64Next(state), 3203168211198807973ull);
  EXPECT_EQ(SplitMix64Next(state), 9817491932198370423ull);
}

TEST(RandomInputsTest, SameSeedSameBitsDifferentSeedDifferentBits) {
  const Shape shape = Shape::Tuple(
      {Shape(PrimitiveType::F32, {4, 5}), Shape(PrimitiveType::BF16, {7}),
       Shape(PrimitiveType::S32, {9}), Shape::Token()});
  const Literal a = RandomLiteral(shape, 42);
  EXPECT_EQ(a, RandomLiteral(shape, 42));
  EXPECT_FALSE(a == RandomLiteral(shape, 43));
}

TEST(RandomInputsTest, FollowsTheDocumentedRule) {
  // The first element of each type is computed from the first draw.
  uint64_t state = 99;
  const uint64_t r = SplitMix64Next(state);
  const double x = -4.0 + std::ldexp(static_cast<double>(r >> 11), -50);
  EXPECT_EQ(RandomLiteral(Shape(PrimitiveType::F64, {}), 99).data<double>()[0],
            x);
  EXPECT_EQ(RandomLiteral(Shape(PrimitiveType::F32, {}), 99).data<float>()[0],
            static_cast<float>(x));
  EXPECT_EQ(
      RandomLiteral(Shape(PrimitiveType::BF16, {}), 99).data<bf16>()[0].bits,
      F64ToBf16Bits(x));
  EXPECT_EQ(RandomLiteral(Shape(PrimitiveType::S8, {}), 99).data<int8_t>()[0],
            static_cast<int>(r >> 60) - 8);
  EXPECT_EQ(
      RandomLiteral(Shape(PrimitiveType::U32, {}), 99).data<uint32_t>()[0],
      r >> 60);
  EXPECT_EQ(RandomLiteral(Shape(PrimitiveType::PRED, {}), 99).data<bool>()[0],
            (r >> 63) != 0);
  EXPECT_EQ(ArgumentSeed(5, 3), [] {
    uint64_t s = 5 ^ (3 * 0xD1B54A32D192ED03ull);
    return SplitMix64Next(s);
  }());
}

TEST(RandomInputsTest, ValuesStayInTheirRanges) {
  const Literal f = RandomLiteral(Shape(PrimitiveType::F32, {4096}), 1);
  std::set<float> distinct;
  for (float v : f.data<float>()) {
    EXPECT_GE(v, -4.0f);
    EXPECT_LE(v, 4.0f);
    distinct.insert(v);
  }
  EXPECT_GT(distinct.size(), 4000u);
  const Literal s = RandomLiteral(Shape(PrimitiveType::S64, {4096}), 1);
  std::set<int64_t> ints(s.data<int64_t>().begin(), s.data<int64_t>().end());
  EXPECT_EQ(ints.size(), 16u);
  EXPECT_EQ(*ints.begin(), -8);
  EXPECT_EQ(*ints.rbegin(), 7);
  const Literal c = RandomLiteral(Shape(PrimitiveType::C64, {64}), 1);
  for (c64 v : c.data<c64>()) {
    EXPECT_LE(std::abs(v.real()), 4.0f);
    EXPECT_LE(std::abs(v.imag()), 4.0f);
  }
}

TEST(RandomInputsTest, ArgumentsFollowParameterShapes) {
  HloComputation comp("entry");
  Shape p0(PrimitiveType::F16, {2, 3});
  p0.set_layout(Layout{{0, 1}, ""});
  comp.AddInstruction(HloInstruction::CreateParameter(0, p0, "p0"));
  comp.AddInstruction(HloInstruction::CreateParameter(
      1, Shape::Tuple({Shape(PrimitiveType::U8, {4})}), "p1"));
  const std::vector<Literal> args = RandomArguments(comp, 7);
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[0].shape(), p0);  // Layout kept.
  EXPECT_EQ(args[0], RandomLiteral(p0, ArgumentSeed(7, 0)));
  EXPECT_EQ(args[1], RandomLiteral(comp.parameter_instruction(1)->shape(),
                                   ArgumentSeed(7, 1)));
  EXPECT_FALSE(RandomArguments(comp, 8)[0] == args[0]);
}

}  // namespace
}  // namespace trench
