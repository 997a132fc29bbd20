// The pass registry, MeasureCase and ValidateCandidate.
#include <set>

#include "tests/triage/reduce/pass_test_util.h"

namespace trench::hlo_reduce {
namespace {

using testing::CaseOf;

constexpr char kSmall[] = R"(
HloModule small
ENTRY main {
  p = f32[2,3] parameter(0)
  n = f32[2,3] negate(p)
  ROOT t = (f32[2,3], f32[2,3]) tuple(n, p)
}
)";

TEST(PassRegistryTest, NamesAreUniqueAndSelectable) {
  std::set<std::string> names;
  for (const auto& p : AllReductionPasses()) {
    EXPECT_TRUE(names.insert(std::string(p->name())).second) << p->name();
    EXPECT_FALSE(p->description().empty());
  }
  for (const char* n :
       {"remove-instructions", "remove-outputs", "replace-subgraphs",
        "shrink-shapes", "simplify-constants", "simplify-inputs",
        "inline-calls", "unfuse", "sort-operands", "rewire-uses",
        "drop-attributes", "rename"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
  auto two = ReductionPassesNamed("unfuse,remove-outputs");
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0]->name(), "unfuse");
  EXPECT_EQ((*two)[1]->name(), "remove-outputs");
  EXPECT_EQ(ReductionPassesNamed("all")->size(), names.size());
  EXPECT_EQ(ReductionPassesNamed("")->size(), names.size());
  auto bad = ReductionPassesNamed("unfuse,nope");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'nope'"), std::string::npos);
}

TEST(PassRegistryTest, MeasureCountsInstructionsElementsAndBytes) {
  hlo_diff::Case c = CaseOf(kSmall);
  CaseSize s = MeasureCase(c);
  EXPECT_EQ(s.instructions, 3);
  EXPECT_EQ(s.elements, 6 + 6 + 12);  // The tuple counts its leaves.
  EXPECT_EQ(s.text_bytes, static_cast<int64_t>(c.module_text.size()));
}

TEST(PassRegistryTest, ValidateCandidateChecksModuleAndInputs) {
  hlo_diff::Case c = CaseOf(kSmall);
  EXPECT_TRUE(ValidateCandidate(c).ok());
  hlo_diff::Case no_inputs = c;
  no_inputs.inputs.clear();
  EXPECT_FALSE(ValidateCandidate(no_inputs).ok());
  hlo_diff::Case bad = c;
  bad.module_text += "garbage";
  EXPECT_FALSE(ValidateCandidate(bad).ok());
  hlo_diff::Case unverified = c;
  unverified.module_text =
      "ENTRY m {\n p = f32[2,3] parameter(0)\n ROOT n = f32[3] negate(p)\n}\n";
  EXPECT_FALSE(ValidateCandidate(unverified).ok());
}

TEST(PassRegistryTest, EveryPassRejectsBadChoices) {
  hlo_diff::Case c = CaseOf(kSmall);
  for (const auto& p : AllReductionPasses()) {
    const int64_t n = p->Count(c);
    std::vector<int64_t> out_of_range = {n};
    EXPECT_FALSE(p->Apply(c, out_of_range).ok()) << p->name();
    if (n >= 1) {
      std::vector<int64_t> twice = {0, 0};
      EXPECT_FALSE(p->Apply(c, twice).ok()) << p->name();
    }
    // Nothing chosen: the same module back, valid.
    auto same = p->Apply(c, {});
    ASSERT_TRUE(same.ok()) << p->name();
    EXPECT_TRUE(ValidateCandidate(*same).ok()) << p->name();
    EXPECT_EQ(MeasureCase(*same).instructions, 3) << p->name();
  }
}

}  // namespace
}  // namespace trench::hlo_reduce
