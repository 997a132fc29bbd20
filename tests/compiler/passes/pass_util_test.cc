// NameUniquer: names unique among the module's and each other, the
// smallest free suffix per base, across the growth of its table.
#include "compiler/passes/pass_util.h"

#include <set>
#include <string>

#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

using testing::Parse;

TEST(NameUniquerTest, SkipsTheModulesNamesAndGivesTheSmallestFreeSuffix) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  add = f32[2] parameter(0)
  add.1 = f32[2] negate(add)
  add.3 = f32[2] negate(add.1)
  ROOT fusion = f32[2] negate(add.3)
})");
  NameUniquer names(*m);
  EXPECT_EQ(names.Get("add"), "add.2");
  EXPECT_EQ(names.Get("add"), "add.4");
  EXPECT_EQ(names.Get("add"), "add.5");
  EXPECT_EQ(names.Get("mul"), "mul");
  EXPECT_EQ(names.Get("mul"), "mul.1");
  EXPECT_EQ(names.Get("fusion"), "fusion.1");
  EXPECT_EQ(names.Get("add.3"), "add.3.1");
}

TEST(NameUniquerTest, ThousandsOfNamesStayDistinct) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  ROOT p = f32[2] parameter(0)
})");
  NameUniquer names(*m);
  std::set<std::string> seen = {"p"};
  for (int i = 0; i < 5000; ++i) {
    const std::string base = i % 3 == 0 ? "p" : "v" + std::to_string(i % 97);
    ASSERT_TRUE(seen.insert(names.Get(base)).second) << i;
  }
  EXPECT_EQ(seen.size(), 5001u);
}

}  // namespace
}  // namespace trench
