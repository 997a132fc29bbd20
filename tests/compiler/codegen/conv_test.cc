// convolution end to end: conv-expander, then the code generator, on the
// simulator, against the oracle's value of the ORIGINAL convolution.
//
// Tolerances: the expansion is one dot contracting (kernel positions x
// input features), so float results carry the dot's matrix-unit error
// (dot_test.cc): HIGHEST f32 about 2e-6 * 16 K with K = positions * IFG;
// bf16 x bf16 products are exact (f32 accumulation only); f16 and the
// DEFAULT precision carry bf16 operand rounding. Integers, pred and f64
// are exact (64-bit accumulation, then the oracle's clamp).
#include <string>

#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/shape_inference.h"
#include "compiler/passes/convolution_expander.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

// Builds conv(a: lt ldims, k: rt rdims) -> out (dims inferred), checks the
// oracle before and the simulator after expansion agree within `o`.
// With `pipeline`, Compile() runs the whole pass pipeline (conv-expander is
// a required pass), even with a pass limit of 0.
void ExpectConvMatches(const std::string& lt, const std::string& ldims,
                       const std::string& rt, const std::string& rdims,
                       const std::string& out, const std::string& attrs,
                       const ComparisonOptions& o, bool pipeline = false) {
  const std::string text = "HloModule m\nENTRY e {\n  a = " + lt + ldims +
                           " parameter(0)\n  k = " + rt + rdims +
                           " parameter(1)\n  ROOT c = " + out +
                           "[] convolution(a, k), " + attrs + "\n}\n";
  SCOPED_TRACE(text);
  auto parsed = ParseHloModule(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  std::unique_ptr<HloModule> m = std::move(*parsed);
  HloInstruction* root = m->entry_computation()->root_instruction();
  auto shape = InferShape(*root);
  ASSERT_TRUE(shape.ok()) << shape.status().ToString();
  root->set_shape(*shape);
  ASSERT_TRUE(VerifyModule(*m).ok());
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), 21);
  auto expected = Evaluate(*m, args);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  tpu::Executable exe;
  if (pipeline) {
    CompileOptions co;
    co.pass_limit = 0;
    auto c = Compile(*m, co);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    exe = std::move(c->executable);
  } else {
    ConvolutionExpander pass;
    PassContext ctx;
    auto changed = pass.Run(m.get(), &ctx);
    ASSERT_TRUE(changed.ok() && *changed);
    auto e = CompileModule(*m, CompileOptions());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    exe = std::move(*e);
  }
  tpu::RunResult r = testing::Run(exe, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk)
      << r.report.message << " at " << r.report.kernel << ": "
      << r.report.instruction << "\n"
      << PrintHloModule(*m);
  ComparisonResult c =
      CompareLiterals(testing::ToLiteral(r.outputs.at(0)), *expected, o);
  EXPECT_TRUE(c.ok()) << c.ToText();
}

ComparisonOptions Tol(double rel, int64_t k) {
  ComparisonOptions o;
  const double abs = rel * 16 * static_cast<double>(k);
  o.f32 = {abs, 0};
  o.bf16 = {abs + 2e-2, 1e-2};
  o.f16 = {abs + 4e-3, 1e-3};
  return o;
}

TEST(ConvCodegenTest, SameStridedAndDilated) {
  // K = 9 positions x 3 features.
  ExpectConvMatches("f32", "[1,6,6,3]", "f32", "[3,3,3,4]", "f32",
                    "window={size=3x3 pad=1_1x1_1}, "
                    "dim_labels=b01f_01io->b01f, "
                    "operand_precision={HIGHEST,HIGHEST}",
                    Tol(2e-6, 27));
  ExpectConvMatches("f32", "[2,7,5,3]", "f32", "[3,2,3,4]", "f32",
                    "window={size=3x2 stride=2x3}, dim_labels=b01f_01io->b01f",
                    Tol(1e-2, 18));
  ExpectConvMatches("f32", "[2,4,5,6]", "f32", "[2,4,3,2]", "f32",
                    "window={size=3x2 stride=2x1 pad=1_2x-1_1 lhs_dilate=1x2 "
                    "rhs_dilate=2x1 rhs_reversal=0x1}, "
                    "dim_labels=bf01_oi01->bf01, "
                    "operand_precision={HIGH,HIGH}",
                    Tol(1e-4, 12));
}

TEST(ConvCodegenTest, CompileRunsTheExpanderEvenWithPassLimitZero) {
  ExpectConvMatches("f32", "[1,5,5,2]", "f32", "[2,2,2,3]", "f32",
                    "window={size=2x2 stride=2x1 pad=0_1x1_0}, "
                    "dim_labels=b01f_01io->b01f, "
                    "operand_precision={HIGHEST,HIGHEST}",
                    Tol(2e-6, 8), /*pipeline=*/true);
}

TEST(ConvCodegenTest, Groups) {
  ExpectConvMatches("f32", "[2,5,5,6]", "f32", "[3,3,2,9]", "f32",
                    "window={size=3x3 pad=1_1x1_1}, "
                    "dim_labels=b01f_01io->b01f, feature_group_count=3, "
                    "operand_precision={HIGHEST,HIGHEST}",
                    Tol(2e-6, 18));
  ExpectConvMatches("s32", "[2,4,5,4]", "s32", "[2,3,3,4]", "s32",
                    "window={size=3x3}, dim_labels=f01b_i01o->01bf, "
                    "batch_group_count=2",
                    ComparisonOptions::Exact());
}

TEST(ConvCodegenTest, EveryDtype) {
  const std::string attrs =
      "window={size=2x3 stride=1x2 pad=1_0x1_1 rhs_dilate=2x1}, "
      "dim_labels=b01f_01io->b01f, feature_group_count=2";
  for (const char* t :
       {"f64", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"}) {
    ExpectConvMatches(t, "[2,4,5,4]", t, "[2,3,2,4]", t, attrs,
                      ComparisonOptions::Exact());
  }
  ExpectConvMatches("bf16", "[2,4,5,4]", "bf16", "[2,3,2,4]", "bf16", attrs,
                    Tol(1e-6, 12));
  ExpectConvMatches("f16", "[2,4,5,4]", "f16", "[2,3,2,4]", "f16", attrs,
                    Tol(1e-2, 12));
  ExpectConvMatches("f32", "[2,4,5,4]", "f32", "[2,3,2,4]", "f32", attrs,
                    Tol(1e-2, 12));
  ExpectConvMatches("pred", "[1,3,4,2]", "pred", "[2,2,2,3]", "pred",
                    "window={size=2x2}, dim_labels=b01f_01io->b01f",
                    ComparisonOptions::Exact());
  ExpectConvMatches("s8", "[1,5,5,8]", "s8", "[3,3,8,2]", "s32",
                    "window={size=3x3}, dim_labels=b01f_01io->b01f",
                    ComparisonOptions::Exact());
}

}  // namespace
}  // namespace trench::codegen
