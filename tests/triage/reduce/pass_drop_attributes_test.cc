// drop-attributes.
#include "tests/triage/reduce/pass_test_util.h"

namespace trench::hlo_reduce {
namespace {

using testing::ApplyValid;
using testing::CaseOf;
using testing::PassNamed;

constexpr char kAttrs[] = R"(
HloModule attrs, is_scheduled=true, entry_computation_layout={(f32[2,3]{1,0}, f32[3,4]{0,1})->f32[2,4]{1,0}}
ENTRY main {
  a = f32[2,3]{1,0} parameter(0), metadata={op_name="a" source_file="x.py"}
  b = f32[3,4]{0,1} parameter(1), sharding={replicated}
  d = f32[2,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,default}, backend_config="cfg", frontend_attributes={k="v"}
  ROOT n = f32[2,4]{1,0} negate(d), control-predecessors={a}
}
)";

TEST(DropAttributesTest, OneOpportunityPerAttribute) {
  auto pass = PassNamed("drop-attributes");
  // 2 header attributes, default layouts, a: metadata, b: sharding and
  // its {0,1} layout, d: backend_config, frontend_attributes, precision,
  // n: control predecessors.
  EXPECT_EQ(pass->Count(CaseOf(kAttrs)), 10);
}

TEST(DropAttributesTest, AllAtOnceIsValidSmallerAndPlain) {
  auto pass = PassNamed("drop-attributes");
  hlo_diff::Case c = CaseOf(kAttrs);
  hlo_diff::Case out = ApplyValid(*pass, c, testing::Iota(pass->Count(c)));
  for (const char* gone :
       {"metadata", "sharding", "backend_config", "frontend_attributes",
        "highest", "control", "is_scheduled", "entry_computation_layout",
        "{1,0}"}) {
    EXPECT_EQ(out.module_text.find(gone), std::string::npos) << gone << "\n"
                                                             << out.module_text;
  }
  EXPECT_LT(MeasureCase(out).text_bytes, MeasureCase(c).text_bytes);
  EXPECT_EQ(pass->Count(out), 0);
  // Values stay (the transposed layout of b is metadata for the oracle).
  auto before = testing::Run(c);
  auto after = testing::Run(out);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(*before, *after);
}

TEST(DropAttributesTest, EachAloneAndDeterministic) {
  auto pass = PassNamed("drop-attributes");
  hlo_diff::Case c = CaseOf(kAttrs);
  for (int64_t k = 0; k < pass->Count(c); ++k) {
    hlo_diff::Case out = ApplyValid(*pass, c, {k});
    EXPECT_LT(MeasureCase(out).text_bytes, MeasureCase(c).text_bytes) << k;
    EXPECT_EQ(out.module_text, ApplyValid(*pass, c, {k}).module_text);
    EXPECT_EQ(pass->Count(out), pass->Count(c) - 1) << k << out.module_text;
  }
}

TEST(DropAttributesTest, PrecisionKeptWhenThePredicateNeedsIt) {
  std::vector<std::unique_ptr<ReductionPass>> passes;
  passes.push_back(PassNamed("drop-attributes"));
  hlo_diff::Case out = testing::GreedyReduce(
      passes, CaseOf(kAttrs), [](const hlo_diff::Case& k) {
        return k.module_text.find("highest") != std::string::npos;
      });
  EXPECT_NE(out.module_text.find("highest"), std::string::npos);
  EXPECT_EQ(PassNamed("drop-attributes")->Count(out), 1) << out.module_text;
}

}  // namespace
}  // namespace trench::hlo_reduce
