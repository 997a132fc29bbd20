// rename: short names, the same computation, and no step twice.
#include "tests/triage/reduce/pass_test_util.h"

namespace trench::hlo_reduce {
namespace {

using testing::ApplyValid;
using testing::CaseOf;
using testing::Iota;
using testing::PassNamed;

constexpr char kLongNames[] = R"(
HloModule jit_train_step_with_a_long_name

region_0.add_computation {
  lhs.1 = f32[] parameter(0)
  rhs.2 = f32[] parameter(1)
  ROOT add.3 = f32[] add(lhs.1, rhs.2)
}

ENTRY main.entry_computation {
  Arg_0.1 = f32[4,8] parameter(0)
  multiply.2 = f32[4,8] multiply(Arg_0.1, Arg_0.1)
  constant.3 = f32[] constant(0)
  ROOT reduce.4 = f32[4] reduce(multiply.2, constant.3), dimensions={1}, to_apply=region_0.add_computation
}
)";

TEST(RenameTest, ShortNamesSameValues) {
  auto pass = PassNamed("rename");
  const hlo_diff::Case c = CaseOf(kLongNames);
  ASSERT_EQ(pass->Count(c), 3);
  const hlo_diff::Case all = ApplyValid(*pass, c, Iota(3));
  EXPECT_NE(all.module_text.find("HloModule m"), std::string::npos)
      << all.module_text;
  EXPECT_NE(all.module_text.find("ENTRY %main"), std::string::npos);
  EXPECT_NE(all.module_text.find("to_apply=%c0"), std::string::npos);
  EXPECT_EQ(all.module_text.find("multiply.2"), std::string::npos);
  // c0's a, b, c; then the entry in post order: d, e, f, g.
  EXPECT_NE(all.module_text.find("%e = f32[4,8] multiply(f32[4,8] %d, "
                                 "f32[4,8] %d)"),
            std::string::npos)
      << all.module_text;
  EXPECT_NE(all.module_text.find("ROOT %g = f32[4] reduce("),
            std::string::npos);
  EXPECT_LT(all.module_text.size(), c.module_text.size());
  auto before = testing::Run(c), after = testing::Run(all);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_TRUE(*before == *after);
  EXPECT_EQ(pass->Count(all), 0);  // Nothing left to rename.
  // Each opportunity alone.
  const hlo_diff::Case module_only = ApplyValid(*pass, c, {0});
  EXPECT_EQ(pass->Count(module_only), 2);
  EXPECT_NE(module_only.module_text.find("multiply.2"), std::string::npos);
}

TEST(RenameTest, ManyInstructionsGetTwoLetterNames) {
  std::string text = "HloModule many\nENTRY e {\n  x0 = f32[2] parameter(0)\n";
  for (int i = 1; i < 30; ++i) {
    text += "  x" + std::to_string(i) + " = f32[2] negate(x" +
            std::to_string(i - 1) + ")\n";
  }
  text += "  ROOT r = f32[2] negate(x29)\n}\n";
  const hlo_diff::Case c = CaseOf(text);
  const hlo_diff::Case all =
      ApplyValid(*PassNamed("rename"), c, Iota(PassNamed("rename")->Count(c)));
  // 31 instructions: a..z, then aa..ae; ROOT is the last.
  EXPECT_NE(all.module_text.find("%z = f32[2] negate(f32[2] %y)"),
            std::string::npos)
      << all.module_text;
  EXPECT_NE(all.module_text.find("ROOT %ae = f32[2] negate(f32[2] %ad)"),
            std::string::npos)
      << all.module_text;
}

TEST(RenameTest, NoStepUndoesAnother) {
  auto pass = PassNamed("rename");
  EXPECT_LE(testing::ExpectAcyclic(*pass, CaseOf(kLongNames), 16), 16);
}

}  // namespace
}  // namespace trench::hlo_reduce
