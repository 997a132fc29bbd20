// The fusion pass and bitcasts between layouts: a bitcast reinterprets the
// operand's physical bytes (XLA semantics; the oracle's EvalBitcast), while
// fused kernels keep every value in row-major logical order. So only a
// bitcast between default layouts is a fusible reshape; one with a
// non-default layout on either side stays outside fusions (its own copy
// kernel permutes the bytes).
#include <gtest/gtest.h>

#include "compiler/passes/fusion.h"
#include "compiler/passes/fusion_support.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

using testing::Find;
using testing::Parse;
using testing::RunPass;

constexpr char kModule[] = R"(
HloModule m
add {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT s = f32[] add(p0, p1)
}
ENTRY e {
  a = f32[64,128] parameter(0)
  zero = f32[] constant(0)
  neg = f32[64,128]{0,1} negate(a)
  bc = f32[8,8,128] bitcast(neg)
  plain = f32[64,128] negate(a)
  bd = f32[8,8,128] bitcast(plain)
  r1 = f32[128] reduce(bc, zero), dimensions={0,1}, to_apply=add
  r2 = f32[128] reduce(bd, zero), dimensions={0,1}, to_apply=add
  ROOT t = (f32[128], f32[128]) tuple(r1, r2)
}
)";

TEST(FusionBitcastLayoutTest, ClassifiesOnlyDefaultLayoutBitcastsAsReshape) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ClassifyFusedOp(*Find(*m, "bc")), FusedOpClass::kUnsupported);
  EXPECT_EQ(ClassifyFusedOp(*Find(*m, "bd")), FusedOpClass::kReshape);
}

TEST(FusionBitcastLayoutTest, LayoutBitcastStaysOutsideFusions) {
  auto m = Parse(kModule);
  ASSERT_NE(m, nullptr);
  FusionPass pass;
  RunPass(pass, m.get());
  // The layout-changing bitcast is still an entry instruction; the default
  // one may be fused.
  bool found = false;
  for (const HloInstruction* i : m->entry_computation()->instructions()) {
    if (i->opcode() == HloOpcode::kBitcast &&
        i->operand(0)->shape().has_layout() &&
        i->operand(0)->shape().minor_to_major() == std::vector<int64_t>{0, 1}) {
      found = true;
    }
    if (i->opcode() != HloOpcode::kFusion) continue;
    for (const HloInstruction* f : i->fused_computation()->instructions()) {
      if (f->opcode() != HloOpcode::kBitcast) continue;
      EXPECT_EQ(f->operand(0)->shape().minor_to_major(),
                (std::vector<int64_t>{1, 0}))
          << f->ShortString();
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace trench
