#include "compiler/passes/dot_decomposer.h"

#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

using testing::Parse;
using testing::Root;
using testing::RunPass;

// The canonical dot feeding the root reshape.
const HloInstruction* CanonicalDot(const HloModule& m) {
  const HloInstruction* r = Root(m);
  EXPECT_EQ(r->opcode(), HloOpcode::kReshape);
  const HloInstruction* d = r->operand(0);
  EXPECT_EQ(d->opcode(), HloOpcode::kDot);
  return d;
}

void ExpectCanonicalizes(std::string_view text, std::vector<int64_t> lhs_dims,
                         std::vector<int64_t> rhs_dims) {
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  auto before = m->Clone();
  DotDecomposer dd;
  PassContext ctx;
  EXPECT_TRUE(RunPass(dd, m.get(), &ctx));
  const HloInstruction* d = CanonicalDot(*m);
  EXPECT_EQ(d->operand(0)->shape().dims(), lhs_dims);
  EXPECT_EQ(d->operand(1)->shape().dims(), rhs_dims);
  ASSERT_EQ(ctx.decisions().size(), 1u);
  EXPECT_EQ(ctx.decisions()[0].site, "canonicalize-dot");
  testing::ExpectEquivalent(*before, *m);
  // The canonical form is a fixpoint.
  EXPECT_FALSE(RunPass(dd, m.get()));
}

TEST(DotDecomposerTest, MergesContractingAndFreeDims) {
  ExpectCanonicalizes(R"(
HloModule m
ENTRY e {
  a = f32[3,2,4,5] parameter(0)
  b = f32[4,6,5] parameter(1)
  ROOT d = f32[3,2,6] dot(a, b), lhs_contracting_dims={2,3}, rhs_contracting_dims={0,2}
})",
                      {6, 20}, {20, 6});
}

TEST(DotDecomposerTest, MovesBatchDimsFirst) {
  ExpectCanonicalizes(R"(
HloModule m
ENTRY e {
  a = f32[3,7,2,4] parameter(0)
  b = f32[4,7,2,5] parameter(1)
  ROOT d = f32[7,2,3,5] dot(a, b), lhs_batch_dims={1,2}, lhs_contracting_dims={3}, rhs_batch_dims={1,2}, rhs_contracting_dims={0}
})",
                      {14, 3, 4}, {14, 4, 5});
}

TEST(DotDecomposerTest, VectorAndOuterProducts) {
  ExpectCanonicalizes(R"(
HloModule m
ENTRY e {
  a = s32[6] parameter(0)
  b = s32[6] parameter(1)
  ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})",
                      {1, 6}, {6, 1});
  ExpectCanonicalizes(R"(
HloModule m
ENTRY e {
  a = bf16[3] parameter(0)
  b = bf16[4] parameter(1)
  ROOT d = bf16[3,4] dot(a, b), lhs_contracting_dims={}, rhs_contracting_dims={}
})",
                      {3, 1}, {1, 4});
}

TEST(DotDecomposerTest, CanonicalDotsStay) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  c = f32[3,4] parameter(2)
  d = f32[4,5] parameter(3)
  x = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  y = f32[3,5] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[2,3,5], f32[3,5]) tuple(x, y)
})");
  DotDecomposer dd;
  EXPECT_FALSE(RunPass(dd, m.get()));
}

TEST(DotDecomposerTest, KeepsResultLayoutAndPrecision) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[4,3]{0,1} parameter(0)
  b = f32[4,5]{1,0} parameter(1)
  ROOT d = f32[3,5]{0,1} dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}, operand_precision={highest,highest}
})");
  auto before = m->Clone();
  DotDecomposer dd;
  EXPECT_TRUE(RunPass(dd, m.get()));
  EXPECT_EQ(Root(*m)->shape(),
            before->entry_computation()->root_instruction()->shape());
  const HloInstruction* d = CanonicalDot(*m);
  EXPECT_EQ(d->attrs().operand_precision.size(), 2u);
  EXPECT_EQ(d->operand(0)->opcode(), HloOpcode::kTranspose);
  testing::ExpectEquivalent(*before, *m);
}

}  // namespace
}  // namespace trench
