// conv-expander: every convolution becomes slices/concatenates/one dot,
// and the oracle gives the same values before and after the pass.
#include "compiler/passes/convolution_expander.h"

#include "compiler/ir/shape_inference.h"
#include "compiler/passes/pass_registry.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

// A module computing one convolution of parameters typed `lt` `ldims` and
// `rt` `rdims` into element type `out`; `attrs` follow the operands
// (window=..., dim_labels=..., group counts). The result dims are inferred.
std::unique_ptr<HloModule> ConvModule(const std::string& lt,
                                      const std::string& ldims,
                                      const std::string& rt,
                                      const std::string& rdims,
                                      const std::string& out,
                                      const std::string& attrs) {
  const std::string text = "HloModule m\nENTRY e {\n  a = " + lt + ldims +
                           " parameter(0)\n  k = " + rt + rdims +
                           " parameter(1)\n  ROOT c = " + out +
                           "[] convolution(a, k), " + attrs + "\n}\n";
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().ToString() << "\n" << text;
  if (!m.ok()) return nullptr;
  HloInstruction* root = (*m)->entry_computation()->root_instruction();
  auto shape = InferShape(*root);
  EXPECT_TRUE(shape.ok()) << shape.status().ToString() << "\n" << text;
  if (!shape.ok()) return nullptr;
  root->set_shape(*shape);
  Status v = VerifyModule(**m);
  EXPECT_TRUE(v.ok()) << v.ToString() << "\n" << text;
  return std::move(*m);
}

int CountOpcode(const HloModule& m, HloOpcode op) {
  int n = 0;
  for (HloComputation* c : m.computations()) {
    for (HloInstruction* i : c->instructions()) n += i->opcode() == op;
  }
  return n;
}

// Expands and compares with the oracle on `seeds` argument sets: integers
// and pred exactly; floats within the default tolerances (the oracle sums in
// f64 in a different order before its single rounding, so results may
// differ by one ulp of the result type at most).
void ExpectExpands(const std::string& lt, const std::string& ldims,
                   const std::string& rt, const std::string& rdims,
                   const std::string& out, const std::string& attrs,
                   int seeds = 3) {
  SCOPED_TRACE(lt + ldims + " x " + rt + rdims + " -> " + out + " " + attrs);
  auto m = ConvModule(lt, ldims, rt, rdims, out, attrs);
  ASSERT_NE(m, nullptr);
  auto before = m->Clone();
  ConvolutionExpander pass;
  PassContext ctx;
  EXPECT_TRUE(testing::RunPass(pass, m.get(), &ctx));
  EXPECT_EQ(CountOpcode(*m, HloOpcode::kConvolution), 0);
  EXPECT_EQ(ctx.decisions().size(), 1u);
  for (int s = 0; s < seeds; ++s) {
    std::vector<Literal> args =
        RandomArguments(*before->entry_computation(), 77 + s);
    auto a = Evaluate(*before, args);
    auto b = Evaluate(*m, args);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    ComparisonResult cmp = CompareLiterals(*b, *a, ComparisonOptions());
    EXPECT_TRUE(cmp.ok()) << cmp.ToText() << "\n" << PrintHloModule(*m);
  }
  // Nothing left to expand.
  EXPECT_FALSE(testing::RunPass(pass, m.get()));
}

TEST(ConvolutionExpanderTest, PlainSameAndStrided) {
  ExpectExpands("f32", "[1,6,6,3]", "f32", "[3,3,3,4]", "f32",
                "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f");
  ExpectExpands("f32", "[2,7,5,3]", "f32", "[3,2,3,4]", "f32",
                "window={size=3x2 stride=2x3}, dim_labels=b01f_01io->b01f");
  ExpectExpands("f32", "[2,3,9]", "f32", "[4,3,2]", "f32",
                "window={size=2 stride=2 pad=0_1}, dim_labels=bf0_oi0->bf0");
}

TEST(ConvolutionExpanderTest, DilationPaddingReversalAnyLabels) {
  ExpectExpands("f32", "[2,4,5,6]", "f32", "[2,4,3,2]", "f32",
                "window={size=3x2 stride=2x1 pad=1_2x-1_1 lhs_dilate=1x2 "
                "rhs_dilate=2x1}, dim_labels=bf01_oi01->bf01");
  ExpectExpands("f32", "[5,2,3,4]", "f32", "[2,2,4,5]", "f32",
                "window={size=2x2 pad=2_-1x0_3 lhs_dilate=3x1 rhs_dilate=1x2 "
                "rhs_reversal=1x0}, dim_labels=01bf_01io->f01b");
  ExpectExpands("f32", "[7,3,2]", "f32", "[3,3,4]", "f32",
                "window={size=3 stride=3 pad=-2_-1 rhs_reversal=1}, "
                "dim_labels=0fb_0io->b0f");
  // Three spatial dims, and none (a matrix product).
  ExpectExpands("f32", "[1,4,3,5,2]", "f32", "[2,2,1,2,3]", "f32",
                "window={size=2x2x1 stride=1x2x1 pad=0_1x1_0x0_0}, "
                "dim_labels=b012f_012io->b012f");
  ExpectExpands("f32", "[3,5]", "f32", "[5,4]", "f32",
                "window={}, dim_labels=bf_io->bf");
}

TEST(ConvolutionExpanderTest, FeatureAndBatchGroups) {
  ExpectExpands("f32", "[2,5,5,6]", "f32", "[3,3,2,9]", "f32",
                "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
                "feature_group_count=3");
  ExpectExpands("f32", "[1,6,6,3]", "f32", "[3,3,1,3]", "f32",
                "window={size=3x3}, dim_labels=b01f_01io->b01f, "
                "feature_group_count=3");
  ExpectExpands("f32", "[2,4,5,4]", "f32", "[2,3,3,4]", "f32",
                "window={size=3x3}, dim_labels=f01b_i01o->01bf, "
                "batch_group_count=2");
  ExpectExpands(
      "f32", "[6,2,5]", "f32", "[6,2,2]", "f32",
      "window={size=2 stride=2 lhs_dilate=2}, dim_labels=bf0_oi0->fb0, "
      "batch_group_count=3");
}

TEST(ConvolutionExpanderTest, EveryDtype) {
  const std::string attrs =
      "window={size=2x3 stride=1x2 pad=1_0x1_1 rhs_dilate=2x1}, "
      "dim_labels=b01f_01io->b01f, feature_group_count=2";
  for (const char* t : {"f32", "bf16", "f16", "f64", "s8", "s16", "s32", "s64",
                        "u8", "u16", "u32", "u64"}) {
    ExpectExpands(t, "[2,4,5,4]", t, "[2,3,2,4]", t, attrs);
  }
  ExpectExpands("pred", "[1,3,4,2]", "pred", "[2,2,2,3]", "pred",
                "window={size=2x2}, dim_labels=b01f_01io->b01f");
  // Preferred result types: widening, int -> float, and integer results
  // whose sums saturate (the oracle clamps).
  ExpectExpands("s8", "[1,5,5,8]", "s8", "[3,3,8,2]", "s32",
                "window={size=3x3}, dim_labels=b01f_01io->b01f");
  ExpectExpands("bf16", "[1,5,5,8]", "bf16", "[3,3,8,2]", "f32",
                "window={size=3x3}, dim_labels=b01f_01io->b01f");
  ExpectExpands("u8", "[1,5,5,8]", "s8", "[3,3,8,2]", "f32",
                "window={size=3x3}, dim_labels=b01f_01io->b01f");
  ExpectExpands("s8", "[1,5,5,8]", "s8", "[3,3,8,2]", "s8",
                "window={size=3x3}, dim_labels=b01f_01io->b01f");
  ExpectExpands("u8", "[1,5,5,8]", "u8", "[3,3,8,2]", "u16",
                "window={size=3x3}, dim_labels=b01f_01io->b01f");
}

TEST(ConvolutionExpanderTest, SaturatingIntegerSumsAreClamped) {
  // Inputs whose sums overflow s8: the oracle clamps them to 127.
  auto m = ConvModule("s8", "[1,4,4,8]", "s8", "[2,2,8,1]", "s8",
                      "window={size=2x2}, dim_labels=b01f_01io->b01f");
  ASSERT_NE(m, nullptr);
  auto before = m->Clone();
  ConvolutionExpander pass;
  EXPECT_TRUE(testing::RunPass(pass, m.get()));
  Literal a(Shape(PrimitiveType::S8, {1, 4, 4, 8}));
  Literal k(Shape(PrimitiveType::S8, {2, 2, 8, 1}));
  for (int64_t i = 0; i < a.element_count(); ++i) a.SetFromInt64(i, 100);
  for (int64_t i = 0; i < k.element_count(); ++i) {
    k.SetFromInt64(i, i % 2 ? -100 : 100);
  }
  std::vector<Literal> args;
  args.push_back(a);
  args.push_back(k);
  auto want = Evaluate(*before, args);
  auto got = Evaluate(*m, args);
  ASSERT_TRUE(want.ok() && got.ok());
  // Sum is 0 (pairs cancel); with all-positive kernels it saturates.
  EXPECT_TRUE(CompareLiterals(*got, *want, ComparisonOptions::Exact()).ok());
  for (int64_t i = 0; i < k.element_count(); ++i) k.SetFromInt64(i, 100);
  args[1] = k;
  want = Evaluate(*before, args);
  got = Evaluate(*m, args);
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_EQ(want->GetAsInt64(0), 127);
  EXPECT_TRUE(CompareLiterals(*got, *want, ComparisonOptions::Exact()).ok());
}

TEST(ConvolutionExpanderTest, EmptyResultsAndEmptySums) {
  // No input features: every output is an empty sum, 0.
  ExpectExpands("f32", "[2,4,4,0]", "f32", "[2,2,0,3]", "f32",
                "window={size=2x2}, dim_labels=b01f_01io->b01f");
  // Window larger than the padded input: no output pixels.
  ExpectExpands("s32", "[1,2,2,1]", "s32", "[3,3,1,1]", "s32",
                "window={size=3x3}, dim_labels=b01f_01io->b01f");
}

// XLA's hlo_evaluator_test Simple4x4Conv2DWith2x2Kernel: a known answer.
TEST(ConvolutionExpanderTest, XlaKnownAnswer) {
  auto m = testing::Parse(R"(
HloModule m
ENTRY main {
  lhs = f32[1,1,4,4] constant({{{{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}, {13, 14, 15, 16}}}})
  rhs = f32[1,1,2,2] constant({{{{5, 6}, {7, 8}}}})
  ROOT conv = f32[1,1,4,4] convolution(lhs, rhs), window={size=2x2 pad=0_1x0_1}, dim_labels=bf01_oi01->bf01
})");
  ASSERT_NE(m, nullptr);
  ConvolutionExpander pass;
  EXPECT_TRUE(testing::RunPass(pass, m.get()));
  auto got = Evaluate(*m, {});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const double want[] = {100, 126, 152, 76,  204, 230, 256, 124,
                         308, 334, 360, 172, 149, 160, 171, 80};
  ASSERT_EQ(got->element_count(), 16);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(got->GetAsDouble(i), want[i]) << i;
}

TEST(ConvolutionExpanderTest, RunsAsARequiredPassInTheRegistry) {
  const PassInfo* info = FindPass("conv-expander");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->stage, PassStage::kRequired);
}

}  // namespace
}  // namespace trench
