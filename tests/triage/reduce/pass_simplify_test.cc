// simplify-constants and simplify-inputs.
#include <cmath>

#include "tests/triage/reduce/pass_test_util.h"

namespace trench::hlo_reduce {
namespace {

using testing::ApplyValid;
using testing::CaseOf;
using testing::PassNamed;

constexpr char kConstants[] = R"(
HloModule k
ENTRY main {
  p = f32[3] parameter(0)
  c = f32[3] constant({0.25, -7.5, 3})
  z = f32[3] constant({0, 0, 0})
  one = s32[] constant(1)
  a = f32[3] add(p, c)
  b = f32[3] multiply(a, z)
  ROOT t = (f32[3], s32[]) tuple(b, one)
}
)";

TEST(SimplifyConstantsTest, OffersOnlyChanges) {
  auto pass = PassNamed("simplify-constants");
  // c: zero, one, splat; z (all zeros): nothing; one: zero.
  EXPECT_EQ(pass->Count(CaseOf(kConstants)), 4);
}

TEST(SimplifyConstantsTest, ZeroOneSplatAndFirstWins) {
  auto pass = PassNamed("simplify-constants");
  hlo_diff::Case c = CaseOf(kConstants);
  EXPECT_NE(ApplyValid(*pass, c, {0}).module_text.find("constant({0, 0, 0})"),
            std::string::npos);
  EXPECT_NE(ApplyValid(*pass, c, {1}).module_text.find("constant({1, 1, 1})"),
            std::string::npos);
  EXPECT_NE(ApplyValid(*pass, c, {2})
                .module_text.find("constant({0.25, 0.25, 0.25})"),
            std::string::npos);
  EXPECT_EQ(ApplyValid(*pass, c, {1, 2}).module_text,
            ApplyValid(*pass, c, {1}).module_text);
  hlo_diff::Case all = ApplyValid(*pass, c, testing::Iota(pass->Count(c)));
  EXPECT_LT(MeasureCase(all).text_bytes, MeasureCase(c).text_bytes);
  // Everything went to zeros (the first wins): nothing is left, in
  // particular no "ones" for what became zeros.
  EXPECT_EQ(pass->Count(all), 0);
}

TEST(SimplifyConstantsTest, NoStepUndoesAnother) {
  auto pass = PassNamed("simplify-constants");
  // Every case reachable by single steps, none twice on a path; c has 4
  // states (itself, zeros, ones, splat), z 1, one 2, w 3, b 3.
  const int64_t states = testing::ExpectAcyclic(*pass, CaseOf(R"(
HloModule k
ENTRY main {
  p = f32[3] parameter(0)
  c = f32[3] constant({0.25, -7.5, 3})
  z = f32[3] constant({0, 0, 0})
  one = s32[] constant(1)
  w = s32[2] constant({5, 5})
  b = pred[2] constant({false, true})
  a = f32[3] add(p, c)
  m = f32[3] multiply(a, z)
  ROOT t = (f32[3], s32[], s32[2], pred[2]) tuple(m, one, w, b)
}
)"),
                                                1000);
  EXPECT_EQ(states, 4 * 1 * 2 * 3 * 3);
}

constexpr char kInputs[] = R"(
HloModule in
ENTRY main {
  x = f32[16] parameter(0)
  i = s32[2] parameter(1)
  e = f32[16] exponential(x)
  ROOT r = f32[16] subtract(e, e)
}
)";

hlo_diff::Case InputsCase() {
  hlo_diff::Case c = CaseOf(kInputs);
  // x: 0.5, 1.5, ..., with an Inf-producing 100 at index 13.
  for (int64_t k = 0; k < 16; ++k) c.inputs[0].SetFromDouble(k, k + 0.5);
  c.inputs[0].SetFromDouble(13, 100);
  return c;
}

TEST(SimplifyInputsTest, Opportunities) {
  auto pass = PassNamed("simplify-inputs");
  // x: zeros, ones, round, 8 chunks; i (random ints in [-8, 7]): zeros,
  // ones, 2 chunks (nonzero); then x (<= 16 elements, used) to a constant.
  hlo_diff::Case c = InputsCase();
  c.inputs[1].SetFromInt64(0, 3);
  c.inputs[1].SetFromInt64(1, 4);
  EXPECT_EQ(pass->Count(c), 11 + 4 + 1);
}

TEST(SimplifyInputsTest, NoStepUndoesAnother) {
  auto pass = PassNamed("simplify-inputs");
  hlo_diff::Case c = CaseOf(R"(
HloModule in
ENTRY main {
  x = f32[3] parameter(0)
  i = s32[2] parameter(1)
  y = f32[20] parameter(2)
  e = f32[3] exponential(x)
  ROOT t = (f32[3], s32[2], f32[20]) tuple(e, i, y)
}
)");
  c.inputs[0].SetFromDouble(0, 0.5);
  c.inputs[0].SetFromDouble(1, 0);
  c.inputs[0].SetFromDouble(2, -2.25);
  c.inputs[1].SetFromInt64(0, 0);
  c.inputs[1].SetFromInt64(1, 1);
  for (int64_t k = 0; k < 20; ++k) c.inputs[2].SetFromDouble(k, 1);
  // Terminates without a cycle; y (all ones) only ever goes to zeros.
  EXPECT_GT(testing::ExpectAcyclic(*pass, c, 20000), 10);
  hlo_diff::Case ones = c;
  for (int64_t k = 0; k < 3; ++k) ones.inputs[0].SetFromDouble(k, 1);
  hlo_diff::Case zeros = ApplyValid(*pass, ones, {0});
  for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(zeros.inputs[0].GetAsDouble(k), 0);
  // x, i: all zeros now or ones/zeros; no "ones" offered for zeros.
  for (int64_t k = 0; k < pass->Count(zeros); ++k) {
    hlo_diff::Case next = ApplyValid(*pass, zeros, {k});
    EXPECT_FALSE(next.inputs[0] == ones.inputs[0]) << k;
  }
}

TEST(SimplifyInputsTest, KeepsWhatTheFailureNeeds) {
  auto pass = PassNamed("simplify-inputs");
  hlo_diff::Case c = InputsCase();
  // The "bug": the result has a NaN (Inf - Inf), i.e. some exp overflows.
  auto fails = [](const hlo_diff::Case& k) {
    auto r = testing::Run(k);
    if (!r.ok()) return false;
    for (int64_t j = 0; j < r->element_count(); ++j) {
      if (std::isnan(r->GetAsDouble(j))) return true;
    }
    return false;
  };
  ASSERT_TRUE(fails(c));
  hlo_diff::Case zeros = ApplyValid(*pass, c, {0});
  for (int64_t j = 0; j < 16; ++j) EXPECT_EQ(zeros.inputs[0].GetAsDouble(j), 0);
  EXPECT_FALSE(fails(zeros));
  hlo_diff::Case rounded = ApplyValid(*pass, c, {2});
  EXPECT_EQ(rounded.inputs[0].GetAsDouble(1), 2);  // 1.5 -> 2 (even).
  EXPECT_TRUE(fails(rounded));
  // Greedy over inputs only (sizes do not change, so simplify by hand):
  // every chunk but the one holding index 13 can go.
  std::vector<int64_t> chunks;
  for (int64_t r = 0; r < 8; ++r) {
    if (r != 6) chunks.push_back(3 + r);
  }
  hlo_diff::Case most = ApplyValid(*pass, c, chunks);
  EXPECT_TRUE(fails(most));
  EXPECT_EQ(most.inputs[0].GetAsDouble(13), 100);
  EXPECT_EQ(most.inputs[0].GetAsDouble(12), 12.5);
  EXPECT_EQ(most.inputs[0].GetAsDouble(11), 0);
}

TEST(SimplifyInputsTest, SmallInputBecomesConstant) {
  auto pass = PassNamed("simplify-inputs");
  hlo_diff::Case c = CaseOf(R"(
HloModule s
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[64] parameter(1)
  ROOT n = f32[4] negate(x)
}
)");
  const int64_t n = pass->Count(c);
  hlo_diff::Case out = ApplyValid(*pass, c, {n - 1});
  EXPECT_TRUE(out.inputs.size() == 1 &&
              out.inputs[0].shape().dims() == std::vector<int64_t>{64});
  EXPECT_NE(out.module_text.find("x.constant"), std::string::npos);
  auto before = testing::Run(c);
  auto after = testing::Run(out);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(*before, *after);
  EXPECT_EQ(testing::Apply(*pass, c, {0, 5})->inputs,
            testing::Apply(*pass, c, {0, 5})->inputs);
}

}  // namespace
}  // namespace trench::hlo_reduce
