// short-text: the short parsable form, offered once and only when it reads
// back as the same module.
#include "compiler/ir/hlo_equal.h"
#include "compiler/ir/hlo_parser.h"
#include "tests/triage/reduce/pass_test_util.h"

namespace trench::hlo_reduce {
namespace {

using testing::ApplyValid;
using testing::CaseOf;
using testing::PassNamed;

constexpr char kModule[] = R"(
HloModule m

c0 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY main {
  d = f32[4,8] parameter(0)
  e = f32[4,8] multiply(d, d)
  f = f32[] constant(0)
  ROOT g = f32[4] reduce(e, f), dimensions={1}, to_apply=c0
}
)";

TEST(ShortTextTest, ShortFormOnceWithTheSameModuleAndInputs) {
  auto pass = PassNamed("short-text");
  const hlo_diff::Case c = CaseOf(kModule);
  ASSERT_EQ(pass->Count(c), 1);
  const hlo_diff::Case out = ApplyValid(*pass, c, {0});
  EXPECT_NE(out.module_text.find("ROOT g = f32[4] reduce(e, f), "
                                 "dimensions={1}, to_apply=c0"),
            std::string::npos)
      << out.module_text;
  EXPECT_NE(out.module_text.find("ENTRY main {"), std::string::npos);
  EXPECT_LT(out.module_text.size(), c.module_text.size());
  auto before = ParseHloModule(c.module_text);
  auto after = ParseHloModule(out.module_text);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_TRUE(ModulesEqual(**before, **after));
  ASSERT_EQ(out.inputs.size(), c.inputs.size());
  EXPECT_TRUE(out.inputs[0] == c.inputs[0]);
  EXPECT_EQ(pass->Count(out), 0);  // Already short.
  EXPECT_TRUE(pass->Apply(out, {}).ok());
}

TEST(ShortTextTest, NotOfferedWhenANameWouldNotReadBack) {
  // "%1" without its "%" is a number, "inf" a float: the full form stays.
  const hlo_diff::Case c = CaseOf(R"(
HloModule m
ENTRY main {
  %1 = f32[2] parameter(0)
  ROOT inf = f32[2] negate(%1)
}
)");
  EXPECT_EQ(PassNamed("short-text")->Count(c), 0);
}

}  // namespace
}  // namespace trench::hlo_reduce
