// The fusion VMEM budget (compiler/passes/fusion_support.h) counts what a
// fused kernel must hold whole, not what it streams: elementwise chains
// and reductions over arrays far larger than VMEM fuse (their operands and
// results stream), while a fusion that would stage a large operand whole
// (read through a transpose or broadcast, or feeding a dot) is refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/passes/fusion.h"
#include "compiler/passes/fusion_support.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

using testing::Find;
using testing::Parse;
using testing::Root;
using testing::RunPass;

// The members of `names` in the entry of `m`.
std::vector<const HloInstruction*> Members(
    const HloModule& m, const std::vector<std::string>& names) {
  std::vector<const HloInstruction*> out;
  for (const std::string& n : names) out.push_back(Find(m, n));
  return out;
}

constexpr char kChain[] = R"(
HloModule m
ENTRY e {
  a = f32[4096,1024] parameter(0)
  b = bf16[4096,1024] parameter(1)
  cb = f32[4096,1024] convert(b)
  x = f32[4096,1024] multiply(a, cb)
  y = f32[4096,1024] exponential(x)
  ROOT z = f32[4096,1024] add(y, a)
}
)";

TEST(FusionBudgetTest, StreamedChainCountsTwoChunksPerArray) {
  auto m = Parse(kChain);
  ASSERT_NE(m, nullptr);
  const auto members = Members(*m, {"cb", "x", "y", "z"});
  // a (f32), b (bf16) and z (f32) stream: two 1024-element chunks each.
  EXPECT_EQ(FusionVmemBytes(members, {Find(*m, "z")}),
            2 * kMinStreamChunk * (4 + 2 + 4));
  EXPECT_TRUE(AnalyzeFusion(members, {Find(*m, "z")}).ok());
  FusionPass pass;
  EXPECT_TRUE(RunPass(pass, m.get()));
  ASSERT_EQ(Root(*m)->opcode(), HloOpcode::kFusion);
  EXPECT_EQ(Root(*m)->operand_count(), 2);
}

TEST(FusionBudgetTest, LargeReduceFusionStreams) {
  auto m = Parse(R"(
HloModule m
sum {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  a = f32[4096,4096] parameter(0)
  x = f32[4096,4096] exponential(a)
  zero = f32[] constant(0)
  ROOT r = f32[4096] reduce(x, zero), dimensions={1}, to_apply=sum
}
)");
  ASSERT_NE(m, nullptr);
  const auto members = Members(*m, {"x", "zero", "r"});
  EXPECT_LT(FusionVmemBytes(members, {Find(*m, "r")}), kFusionVmemBudget);
  ASSERT_TRUE(AnalyzeFusion(members, {Find(*m, "r")}).ok());
  FusionPass pass;
  EXPECT_TRUE(RunPass(pass, m.get()));
  ASSERT_EQ(Root(*m)->opcode(), HloOpcode::kFusion);
  EXPECT_EQ(Root(*m)->attrs().fusion_kind, FusionKind::kInput);
}

TEST(FusionBudgetTest, OperandsStagedWholeCountWhole) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[2048,2048] parameter(0)
  b = f32[2048,2048] parameter(1)
  t = f32[2048,2048] transpose(a), dimensions={1,0}
  n = f32[2048,2048] negate(t)
  ROOT s = f32[2048,2048] add(n, b)
}
)");
  ASSERT_NE(m, nullptr);
  const auto members = Members(*m, {"t", "n", "s"});
  // a (16 MiB) is read through the transpose: staged whole.
  EXPECT_EQ(FusionVmemBytes(members, {Find(*m, "s")}),
            (int64_t{16} << 20) + 2 * kMinStreamChunk * (4 + 4));
  auto spec = AnalyzeFusion(members, {Find(*m, "s")});
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().ToString().find("VMEM budget"), std::string::npos);
  // Without the transpose the rest fuses; the transpose stays outside.
  EXPECT_TRUE(AnalyzeFusion(Members(*m, {"n", "s"}), {Find(*m, "s")}).ok());
  FusionPass pass;
  EXPECT_TRUE(RunPass(pass, m.get()));
  EXPECT_EQ(Find(*m, "t")->opcode(), HloOpcode::kTranspose);
  EXPECT_EQ(Find(*m, "t")->parent(), m->entry_computation());
}

TEST(FusionBudgetTest, DotFusionsStreamNothing) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[1024,512] parameter(0)
  w = f32[512,2048] parameter(1)
  b = f32[1024,2048] parameter(2)
  d = f32[1024,2048] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[1024,2048] add(d, b)
}
)");
  ASSERT_NE(m, nullptr);
  auto spec = AnalyzeFusion(Members(*m, {"d", "s"}), {Find(*m, "s")});
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().ToString().find("VMEM budget"), std::string::npos);
}

// Twenty elementwise members: more than the fusion pass fuses (every value
// counted live, kFusionRegisterBudget), fine for codegen, which spills
// values (only accumulators and positions are pinned).
TEST(FusionBudgetTest, CodegenBoundsOnlyThePinnedRegisters) {
  std::string text = "HloModule m\nENTRY e {\n  p = f32[64] parameter(0)\n";
  std::vector<std::string> names;
  std::string last = "p";
  for (int i = 0; i < 20; ++i) {
    names.push_back("x" + std::to_string(i));
    text += "  " + names.back() + " = f32[64] add(" + last + ", p)\n";
    last = names.back();
  }
  text += "  ROOT r = f32[64] negate(" + last + ")\n}\n";
  names.push_back("r");
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  const auto members = Members(*m, names);
  auto all = AnalyzeFusion(members, {Find(*m, "r")});
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.status().message().find("live vector registers"),
            std::string::npos);
  EXPECT_TRUE(
      AnalyzeFusion(members, {Find(*m, "r")}, RegisterBound::kPinnedOnly).ok());
}

}  // namespace
}  // namespace trench
