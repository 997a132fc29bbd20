#include "compiler/passes/layout_assignment.h"

#include "compiler/ir/hlo_equal.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

using testing::Find;
using testing::Parse;
using testing::Root;
using testing::RunPass;

std::vector<int64_t> M2M(const HloInstruction* i) {
  return i->shape().layout()->minor_to_major;
}

// The printed module parses back to an equal one.
void ExpectRoundTrips(const HloModule& m) {
  auto again = ParseHloModule(PrintHloModule(m));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  std::string diff;
  EXPECT_TRUE(ModulesEqual(m, **again, &diff)) << diff;
}

TEST(LayoutAssignmentTest, AssignsDefaultsAndKeepsExisting) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[2,3,4] parameter(0)
  t = f32[4,3,2]{0,1,2} transpose(p), dimensions={2,1,0}
  s = f32[] constant(1)
  ROOT r = (f32[4,3,2], f32[]) tuple(t, s)
})");
  LayoutAssignment la;
  EXPECT_TRUE(RunPass(la, m.get()));
  EXPECT_EQ(M2M(Find(*m, "p")), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(M2M(Find(*m, "t")), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(Find(*m, "s")->shape().has_layout());
  EXPECT_TRUE(Root(*m)->shape().tuple_shape(0).has_layout());
  ExpectRoundTrips(*m);
  EXPECT_FALSE(RunPass(la, m.get()));
}

TEST(LayoutAssignmentTest, TakesEntryLayoutsFromTheHeader) {
  auto m = Parse(R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1}, f32[3]{0})->f32[2,3]{0,1}}
ENTRY e {
  p = f32[2,3] parameter(0)
  q = f32[3] parameter(1)
  b = f32[2,3] broadcast(q), dimensions={1}
  ROOT a = f32[2,3] add(p, b)
})");
  LayoutAssignment la;
  EXPECT_TRUE(RunPass(la, m.get()));
  EXPECT_EQ(M2M(Find(*m, "p")), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(M2M(Root(*m)), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(M2M(Find(*m, "b")), (std::vector<int64_t>{1, 0}));
  ExpectRoundTrips(*m);
}

TEST(LayoutAssignmentTest, InsertsCopiesWhereLayoutsDisagree) {
  auto m = Parse(R"(
HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{0,1}}
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT n = f32[2,3]{1,0} negate(p)
})");
  auto before = m->Clone();
  LayoutAssignment la;
  PassContext ctx;
  EXPECT_TRUE(RunPass(la, m.get(), &ctx));
  HloInstruction* p = Find(*m, "p");
  EXPECT_EQ(M2M(p), (std::vector<int64_t>{0, 1}));
  HloInstruction* root = Root(*m);
  EXPECT_EQ(root->opcode(), HloOpcode::kCopy);
  EXPECT_EQ(M2M(root), (std::vector<int64_t>{0, 1}));
  HloInstruction* n = Find(*m, "n");
  EXPECT_EQ(n->operand(0)->opcode(), HloOpcode::kCopy);
  EXPECT_EQ(n->operand(0)->operand(0), p);
  EXPECT_EQ(M2M(n->operand(0)), (std::vector<int64_t>{1, 0}));
  std::vector<std::string> sites;
  for (const auto& d : ctx.decisions()) sites.push_back(d.site);
  EXPECT_EQ(sites, (std::vector<std::string>{"parameter-layout-copy",
                                             "result-layout-copy"}));
  testing::ExpectEquivalent(*before, *m);
  ExpectRoundTrips(*m);
}

TEST(LayoutAssignmentTest, IgnoresAMismatchedHeader) {
  auto m = Parse(R"(
HloModule m, entry_computation_layout={(f32[5]{0})->f32[5]{0}}
ENTRY e {
  p = f32[2,3] parameter(0)
  ROOT n = f32[2,3] negate(p)
})");
  LayoutAssignment la;
  PassContext ctx;
  EXPECT_TRUE(RunPass(la, m.get(), &ctx));
  EXPECT_EQ(M2M(Find(*m, "p")), (std::vector<int64_t>{1, 0}));
  ASSERT_EQ(ctx.log().size(), 1u);
  EXPECT_NE(ctx.log()[0].find("ignoring"), std::string::npos);
}

TEST(LayoutAssignmentTest, RewriteLimitLeavesTheRest) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT n = f32[2] negate(p)
})");
  LayoutAssignment la;
  PassContext ctx(1);
  EXPECT_TRUE(RunPass(la, m.get(), &ctx));
  EXPECT_TRUE(Find(*m, "p")->shape().has_layout());
  EXPECT_FALSE(Root(*m)->shape().has_layout());
  EXPECT_EQ(ctx.decisions()[1].site, "assign-default-layout");
  EXPECT_FALSE(ctx.decisions()[1].allowed);
}

}  // namespace
}  // namespace trench
