// sort-operands: operands of a variadic sort that its comparator does not
// read go, with their comparator parameters.
#include "tests/triage/reduce/pass_test_util.h"

namespace trench::hlo_reduce {
namespace {

using testing::ApplyValid;
using testing::CaseOf;
using testing::PassNamed;

// The comparator reads the keys only (x, y, u, w are unused).
constexpr char kThree[] = R"(
HloModule three
greater {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  x = f32[] parameter(2)
  y = f32[] parameter(3)
  u = f32[] parameter(4)
  w = f32[] parameter(5)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY main {
  k = s32[2,5] parameter(0)
  v = f32[2,5] parameter(1)
  n = f32[2,5] parameter(2)
  s = (s32[2,5], f32[2,5], f32[2,5]) sort(k, v, n), dimensions={1}, to_apply=greater
  keys = s32[2,5] get-tuple-element(s), index=0
  vals = f32[2,5] get-tuple-element(s), index=1
  more = f32[2,5] get-tuple-element(s), index=2
  ROOT out = (s32[2,5], f32[2,5], f32[2,5]) tuple(keys, vals, more)
}
)";

// Every comparator parameter is read (a tie-break on the values).
constexpr char kTieBreak[] = R"(
HloModule tie
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  x = f32[] parameter(2)
  y = f32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(x, y), direction=LT
  tie = pred[] and(eq, lt)
  ROOT r = pred[] or(gt, tie)
}
ENTRY main {
  k = s32[8] parameter(0)
  v = f32[8] parameter(1)
  s = (s32[8], f32[8]) sort(k, v), dimensions={0}, to_apply=cmp
  ROOT keys = s32[8] get-tuple-element(s), index=0
}
)";

TEST(SortOperandsTest, CountsOperandsTheComparatorDoesNotRead) {
  auto pass = PassNamed("sort-operands");
  EXPECT_EQ(pass->Count(CaseOf(kThree)), 2);
  EXPECT_EQ(pass->Count(CaseOf(kTieBreak)), 0);
}

TEST(SortOperandsTest, DroppedOperandsLeaveTheKeysSorted) {
  hlo_diff::Case c = CaseOf(kThree, 5);
  auto before = testing::Run(c);
  ASSERT_TRUE(before.ok());
  auto pass = PassNamed("sort-operands");
  // One operand: the sort keeps two, the comparator four parameters.
  hlo_diff::Case one = ApplyValid(*pass, c, {1});
  EXPECT_NE(one.module_text.find("sort(s32[2,5] %k, f32[2,5] %v)"),
            std::string::npos)
      << one.module_text;
  EXPECT_EQ(one.module_text.find("parameter(4)"), std::string::npos)
      << one.module_text;
  auto after = testing::Run(one);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->tuple_element(0), before->tuple_element(0));
  EXPECT_EQ(after->tuple_element(1), before->tuple_element(1));
  // Both: a sort of the keys alone, whose result is an array.
  hlo_diff::Case both = ApplyValid(*pass, c, {0, 1});
  EXPECT_NE(both.module_text.find("s32[2,5] sort(s32[2,5] %k)"),
            std::string::npos)
      << both.module_text;
  EXPECT_NE(both.module_text.find("%greater (a: s32[], b: s32[]) -> pred[]"),
            std::string::npos)
      << both.module_text;
  after = testing::Run(both);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->tuple_element(0), before->tuple_element(0));
  EXPECT_LT(MeasureCase(both).instructions, MeasureCase(c).instructions);
  EXPECT_EQ(pass->Count(both), 0);
}

TEST(SortOperandsTest, WithRemoveInstructionsAComparatorShrinksToOneCompare) {
  // Interesting while the sorted keys stay those of the full comparator.
  hlo_diff::Case c = CaseOf(kTieBreak, 2);
  auto want = testing::Run(c);
  ASSERT_TRUE(want.ok());
  std::vector<std::unique_ptr<ReductionPass>> passes;
  for (const char* n : {"remove-instructions", "sort-operands"}) {
    passes.push_back(PassNamed(n));
  }
  hlo_diff::Case out =
      testing::GreedyReduce(passes, c, [&](const hlo_diff::Case& x) {
        auto v = testing::Run(x);
        return v.ok() && *v == *want &&
               x.module_text.find("sort(") != std::string::npos;
      });
  EXPECT_NE(out.module_text.find("s32[8] sort(s32[8] %k)"), std::string::npos)
      << out.module_text;
  EXPECT_EQ(out.module_text.find("%eq"), std::string::npos) << out.module_text;
}

}  // namespace
}  // namespace trench::hlo_reduce
