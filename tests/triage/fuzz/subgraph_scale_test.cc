// Shape scaling of subgraphs (ScaleShapes and SubgraphOptions::max_elements
// in triage/fuzz/subgraph.h): scaled modules verify and fit, attributes and
// constants follow, reshapes stay consistent or fall back.
#include <gtest/gtest.h>

#include <string>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/verifier.h"
#include "triage/fuzz/subgraph.h"

namespace trench {
namespace {

constexpr int64_t kLimit = int64_t{1} << 16;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return nullptr;
  EXPECT_TRUE(VerifyModule(**m).ok());
  return std::move(m).value();
}

const HloInstruction* Find(const HloModule& m, const std::string& name) {
  for (const HloComputation* c : m.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (i->name() == name) return i;
    }
  }
  return nullptr;
}

std::string ShapeOf(const HloModule& m, const std::string& name) {
  const HloInstruction* i = Find(m, name);
  return i == nullptr ? "<none>" : i->shape().ToString(false);
}

TEST(SubgraphScaleTest, SmallModuleIsKept) {
  auto m = Parse(R"(HloModule small
ENTRY e {
  a = f32[8,128] parameter(0)
  ROOT n = f32[8,128] negate(a)
})");
  auto s = ScaleShapes(*m, kLimit);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->factor, 1);
  EXPECT_EQ(ShapeOf(*s->module, "n"), "f32[8,128]");
}

TEST(SubgraphScaleTest, MildestFactorThatFitsAndVerifies) {
  auto m = Parse(R"(HloModule big
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[1024,2048] parameter(0)
  b = f32[2048] parameter(1)
  bb = f32[1024,2048] broadcast(b), dimensions={1}
  s = f32[1024,2048] add(a, bb)
  t = f32[2048,1024] transpose(s), dimensions={1,0}
  z = f32[] constant(0)
  r = f32[2048] reduce(t, z), dimensions={1}, to_apply=add
  sl = f32[2048,8] slice(t), slice={[0:2048], [512:520]}
  ROOT o = (f32[2048], f32[2048,8]) tuple(r, sl)
})");
  auto s = ScaleShapes(*m, kLimit);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  // 2^21 elements: (1024/f) * (2048/f) <= 2^16 first holds for f = 8.
  EXPECT_EQ(s->factor, 8);
  EXPECT_TRUE(VerifyModule(*s->module).ok());
  EXPECT_EQ(ShapeOf(*s->module, "a"), "f32[128,256]");
  EXPECT_EQ(ShapeOf(*s->module, "t"), "f32[256,128]");
  EXPECT_EQ(ShapeOf(*s->module, "r"), "f32[256]");
  EXPECT_EQ(ShapeOf(*s->module, "sl"), "f32[256,8]");
  const HloInstruction* sl = Find(*s->module, "sl");
  ASSERT_NE(sl, nullptr);
  // Same relative start (512 of 1024 -> 64 of 128), same 8 elements.
  EXPECT_EQ(sl->attrs().slice[1].start, 64);
  EXPECT_EQ(sl->attrs().slice[1].limit, 72);
  // The input module is unchanged.
  EXPECT_EQ(ShapeOf(*m, "a"), "f32[1024,2048]");
}

TEST(SubgraphScaleTest, SizeAttributesFollow) {
  auto m = Parse(R"(HloModule attrs
ENTRY e {
  a = f32[4096,64] parameter(0)
  i = s32[] parameter(1)
  z = f32[] constant(0)
  p = f32[4608,64] pad(a, z), padding=512_0x0_0
  d = f32[1024,64] dynamic-slice(p, i, i), dynamic_slice_sizes={1024,64}
  io = s32[1024,64] iota(), iota_dimension=0
  c = f32[1024,64] convert(io)
  ROOT o = f32[1024,64] add(d, c)
})");
  auto s = ScaleShapes(*m, kLimit);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->factor, 8);
  EXPECT_EQ(ShapeOf(*s->module, "p"), "f32[576,64]");
  EXPECT_EQ(Find(*s->module, "p")->attrs().padding[0].lo, 64);
  EXPECT_EQ(Find(*s->module, "d")->attrs().dynamic_slice_sizes[0], 128);
  EXPECT_EQ(ShapeOf(*s->module, "io"), "s32[128,64]");
}

TEST(SubgraphScaleTest, ConstantsBecomeTheirLeadingCorner) {
  auto m = Parse(R"(HloModule consts
ENTRY e {
  a = s32[512,512] parameter(0)
  io = s32[512,512] iota(), iota_dimension=1
  ROOT s = s32[512,512] add(a, io)
})");
  // Build a constant from the iota so that its values are known.
  std::unique_ptr<HloModule> c = m->Clone();
  HloComputation* e = c->entry_computation();
  HloInstruction* io = const_cast<HloInstruction*>(Find(*c, "io"));
  Literal lit(io->shape());
  auto v = lit.mutable_data<int32_t>();
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<int32_t>(k);
  HloInstruction* k =
      e->AddInstruction(HloInstruction::CreateConstant(std::move(lit), "k"));
  io->ReplaceAllUsesWith(k);
  ASSERT_TRUE(e->RemoveInstruction(io).ok());
  ASSERT_TRUE(VerifyModule(*c).ok());
  auto s = ScaleShapes(*c, kLimit);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->factor, 2);
  const HloInstruction* sk = Find(*s->module, "k");
  ASSERT_NE(sk, nullptr);
  ASSERT_EQ(sk->shape().ToString(false), "s32[256,256]");
  auto d = sk->literal().data<int32_t>();
  EXPECT_EQ(d[0], 0);
  EXPECT_EQ(d[255], 255);
  EXPECT_EQ(d[256], 512);  // Row 1 of the original.
  EXPECT_EQ(d[256 * 256 - 1], 255 * 512 + 255);
}

TEST(SubgraphScaleTest, ReshapeKeepingScaledDimsWholeStaysConsistent) {
  auto m = Parse(R"(HloModule reshape
ENTRY e {
  a = f32[2048,4,64] parameter(0)
  r = f32[2048,256] reshape(a)
  ROOT n = f32[2048,256] negate(r)
})");
  auto s = ScaleShapes(*m, kLimit);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(VerifyModule(*s->module).ok());
  // The reshape merges 4 and 64 into 256: with 256 scaled, 64 is scaled
  // too (one scaled size a side), although below kMinScaledDim.
  EXPECT_EQ(s->factor, 4);
  EXPECT_EQ(ShapeOf(*s->module, "a"), "f32[512,4,16]");
  EXPECT_EQ(ShapeOf(*s->module, "r"), "f32[512,64]");
}

// Attention heads: hidden 8192 = 64 heads x 128. The conservative scheme
// kept all three sizes, so the module could not shrink at all.
TEST(SubgraphScaleTest, SplitHiddenSizeScalesWithOneOfItsFactors) {
  auto m = Parse(R"(HloModule heads
ENTRY e {
  a = bf16[16,8192] parameter(0)
  r = bf16[16,64,128] reshape(a)
  t = bf16[16,128,64] transpose(r), dimensions={0,2,1}
  ROOT n = bf16[16,128,64] negate(t)
})");
  auto s = ScaleShapes(*m, kLimit);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->factor, 2);
  EXPECT_EQ(ShapeOf(*s->module, "a"), "bf16[16,4096]");
  EXPECT_EQ(ShapeOf(*s->module, "r"), "bf16[16,64,64]");
  EXPECT_EQ(ShapeOf(*s->module, "n"), "bf16[16,64,64]");
}

// Scaling 128 with the reshape's 1024 breaks a concatenate of two 64s into
// 128; the conservative scheme (reshaped sizes whole) is used instead.
TEST(SubgraphScaleTest, BrokenBalancedScalingFallsBackToTheConservativeOne) {
  auto m = Parse(R"(HloModule concat
ENTRY e {
  a = f32[1024] parameter(0)
  r = f32[8,128] reshape(a)
  b = f32[8,64] parameter(1)
  k = f32[8,128] concatenate(b, b), dimensions={1}
  s = f32[8,128] add(r, k)
  big = f32[4096,32] parameter(2)
  nb = f32[4096,32] negate(big)
  ROOT t = (f32[8,128], f32[4096,32]) tuple(s, nb)
})");
  auto s = ScaleShapes(*m, kLimit);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(VerifyModule(*s->module).ok());
  EXPECT_EQ(s->factor, 2);
  EXPECT_EQ(ShapeOf(*s->module, "r"), "f32[8,128]");
  EXPECT_EQ(ShapeOf(*s->module, "nb"), "f32[2048,32]");
}

constexpr char kMergingReshape[] = R"(HloModule merge
ENTRY e {
  a = f32[1024,1024] parameter(0)
  n = f32[1024,1024] negate(a)
  r = f32[1048576] reshape(n)
  ROOT x = f32[1048576] exponential(r)
})";

// 1024 scales by f on one side and 1048576 by f * f on the other.
TEST(SubgraphScaleTest, MergingReshapeScalesBothSides) {
  auto m = Parse(kMergingReshape);
  auto s = ScaleShapes(*m, kLimit);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->factor, 4);
  EXPECT_EQ(ShapeOf(*s->module, "n"), "f32[256,256]");
  EXPECT_EQ(ShapeOf(*s->module, "x"), "f32[65536]");
}

// A window as wide as the trace's row: no scaled row holds it.
constexpr char kWideWindow[] = R"(HloModule window
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  a = f32[1024,1024] parameter(0)
  n = f32[1024,1024] negate(a)
  z = f32[] constant(0)
  w = f32[1024,1] reduce-window(n, z), window={size=1x1024 stride=1x1024}, to_apply=add
  ROOT x = f32[1024,1] exponential(w)
})";

TEST(SubgraphScaleTest, AWindowWiderThanAnyScaledDimCannotBeScaled) {
  auto m = Parse(kWideWindow);
  auto s = ScaleShapes(*m, kLimit);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
}

TEST(SubgraphScaleTest, CutFallsBackToSingleInstructions) {
  auto m = Parse(kWideWindow);
  SubgraphOptions o;
  o.max_elements = kLimit;
  auto r = CutSubgraphs(
      *m, [](const HloInstruction&) { return true; }, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->accepted, 3);
  // The reduce-window cannot be scaled even alone; negate scales, and
  // exponential fits as it is.
  EXPECT_EQ(r->unscalable, 1);
  ASSERT_EQ(r->subgraphs.size(), 2u);
  for (const Subgraph& sg : r->subgraphs) {
    EXPECT_TRUE(VerifyModule(*sg.module).ok()) << PrintHloModule(*sg.module);
    EXPECT_EQ(sg.instructions.size(), 1u);
  }
  EXPECT_EQ(r->subgraphs[0].instructions[0], "n");
  EXPECT_GT(r->subgraphs[0].scale_factor, 1);
  EXPECT_EQ(r->subgraphs[1].instructions[0], "x");
  EXPECT_EQ(r->subgraphs[1].scale_factor, 1);
}

TEST(SubgraphScaleTest, CutScalesWholeSubgraphWhenItCan) {
  auto m = Parse(R"(HloModule whole
ENTRY e {
  a = f32[4096,256] parameter(0)
  n = f32[4096,256] negate(a)
  ROOT x = f32[4096,256] exponential(n)
})");
  SubgraphOptions o;
  o.max_elements = kLimit;
  auto r = CutSubgraphs(
      *m, [](const HloInstruction&) { return true; }, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->unscalable, 0);
  ASSERT_EQ(r->subgraphs.size(), 1u);
  EXPECT_EQ(r->subgraphs[0].scale_factor, 4);
  EXPECT_EQ(r->subgraphs[0].inputs, std::vector<std::string>({"a"}));
  EXPECT_EQ(ShapeOf(*r->subgraphs[0].module, "x"), "f32[1024,64]");
}

}  // namespace
}  // namespace trench
