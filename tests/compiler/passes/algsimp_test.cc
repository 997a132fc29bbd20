#include "compiler/passes/algsimp.h"

#include <cmath>

#include "compiler/passes/dce.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

using testing::Find;
using testing::Parse;
using testing::Root;
using testing::RunPass;

struct Simplified {
  std::unique_ptr<HloModule> before, after;
  PassContext ctx;
  bool changed = false;
};

// Parses, runs algsimp, checks random-input equivalence with the oracle.
std::unique_ptr<Simplified> Simplify(std::string_view text) {
  auto s = std::make_unique<Simplified>();
  s->after = Parse(text);
  if (!s->after) return s;
  s->before = s->after->Clone();
  AlgebraicSimplifier algsimp;
  s->changed = RunPass(algsimp, s->after.get(), &s->ctx);
  testing::ExpectEquivalent(*s->before, *s->after);
  return s;
}

// The sites of the allowed decisions, in order.
std::vector<std::string> Sites(const PassContext& ctx) {
  std::vector<std::string> out;
  for (const RewriteDecision& d : ctx.decisions()) {
    if (d.allowed) out.push_back(d.site);
  }
  return out;
}

bool HasSite(const PassContext& ctx, const std::string& site) {
  for (const std::string& s : Sites(ctx)) {
    if (s == site) return true;
  }
  return false;
}

Literal F32(std::vector<float> v) {
  Literal l(Shape(PrimitiveType::F32, {static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) l.mutable_data<float>()[i] = v[i];
  return l;
}

TEST(AlgsimpTest, AddNegativeZeroIsIdentityPositiveZeroIsNot) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  mz = f32[4] broadcast(f32[] constant(-0)), dimensions={}
  ROOT a = f32[4] add(p, mz)
})");
  EXPECT_TRUE(s->changed);
  EXPECT_EQ(Root(*s->after)->name(), "p");
  EXPECT_TRUE(HasSite(s->ctx, "add-zero"));

  s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[4] constant({0, 0, 0, 0})
  ROOT a = f32[4] add(p, z)
})");
  EXPECT_FALSE(s->changed);
  // -0 + +0 is +0: the kept add is what makes this right.
  std::vector<Literal> args;
  args.push_back(F32({-0.0f, 1, -1, 0}));
  testing::ExpectSameValues(*s->before, *s->after, args);

  s = Simplify(R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[4] constant({0, 0, 0, 0})
  ROOT a = s32[4] add(z, p)
})");
  EXPECT_TRUE(s->changed);
  EXPECT_EQ(Root(*s->after)->name(), "p");
}

TEST(AlgsimpTest, SubMulDivIdentities) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  one = f32[4] broadcast(f32[] constant(1)), dimensions={}
  a = f32[4] subtract(p, zb)
  b = f32[4] multiply(one, a)
  ROOT c = f32[4] divide(b, one)
})");
  EXPECT_TRUE(s->changed);
  EXPECT_EQ(Root(*s->after)->name(), "p");
  EXPECT_TRUE(HasSite(s->ctx, "sub-zero"));
  EXPECT_TRUE(HasSite(s->ctx, "mul-one"));
  EXPECT_TRUE(HasSite(s->ctx, "div-one"));
  std::vector<Literal> args;
  args.push_back(F32({-0.0f, INFINITY, NAN, -3}));
  testing::ExpectSameValues(*s->before, *s->after, args);
}

TEST(AlgsimpTest, MulZeroOnlyForIntegers) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  zb = f32[4] broadcast(f32[] constant(0)), dimensions={}
  ROOT m = f32[4] multiply(p, zb)
})");
  EXPECT_FALSE(s->changed);
  s = Simplify(R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  zb = s32[4] broadcast(s32[] constant(0)), dimensions={}
  ROOT m = s32[4] multiply(p, zb)
})");
  EXPECT_TRUE(s->changed);
  EXPECT_EQ(Root(*s->after)->name(), "zb");
  EXPECT_TRUE(HasSite(s->ctx, "mul-zero-int"));
}

TEST(AlgsimpTest, DoubleNegationSelectAndCompare) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  q = s32[4] parameter(1)
  n = s32[4] negate(p)
  nn = s32[4] negate(n)
  t = pred[4] broadcast(pred[] constant(true)), dimensions={}
  s = s32[4] select(t, nn, q)
  c = pred[4] compare(p, p), direction=LE
  ROOT r = s32[4] select(c, s, q)
})");
  EXPECT_TRUE(s->changed);
  EXPECT_EQ(Root(*s->after)->name(), "p");
  EXPECT_TRUE(HasSite(s->ctx, "double-negate"));
  EXPECT_TRUE(HasSite(s->ctx, "select-const-pred"));
  EXPECT_TRUE(HasSite(s->ctx, "compare-same-int"));
}

TEST(AlgsimpTest, SameOperandRules) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  q = pred[4] parameter(1)
  f = f32[4] parameter(2)
  n = pred[4] not(q)
  nn = pred[4] not(n)
  sel = s32[4] select(nn, p, p)
  mx = f32[4] maximum(f, f)
  an = pred[4] and(q, q)
  d = s32[4] subtract(sel, sel)
  b1 = s32[2,4] broadcast(d), dimensions={1}
  b2 = s32[3,2,4] broadcast(b1), dimensions={1,2}
  ROOT t = (s32[3,2,4], f32[4], pred[4], pred[4]) tuple(b2, mx, an, nn)
})");
  EXPECT_TRUE(s->changed);
  for (const char* site :
       {"double-not", "select-same-operands", "idempotent-binary",
        "sub-self-int", "broadcast-broadcast"}) {
    EXPECT_TRUE(HasSite(s->ctx, site)) << site;
  }
  HloInstruction* r = Root(*s->after);
  EXPECT_EQ(r->operand(1)->name(), "f");
  EXPECT_EQ(r->operand(2)->name(), "q");
  EXPECT_EQ(r->operand(3)->name(), "q");
  // broadcast(broadcast(broadcast(0))) collapses onto the scalar zero.
  EXPECT_EQ(r->operand(0)->opcode(), HloOpcode::kBroadcast);
  EXPECT_EQ(r->operand(0)->operand(0)->shape().rank(), 0);
}

TEST(AlgsimpTest, CompareOfSameFloatOperandIsKept) {
  // compare(x, x) EQ is false for NaN, so it must stay for floats.
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = pred[4] compare(p, p), direction=EQ
})");
  EXPECT_FALSE(s->changed);
}

TEST(AlgsimpTest, ReshapeAndTransposeChains) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[2,3,4] parameter(0)
  r1 = f32[6,4] reshape(p)
  r2 = f32[24] reshape(r1)
  r3 = f32[2,3,4] reshape(r2)
  t1 = f32[3,4,2] transpose(r3), dimensions={1,2,0}
  t2 = f32[4,3,2] transpose(t1), dimensions={1,0,2}
  ROOT t3 = f32[2,3,4] transpose(t2), dimensions={2,1,0}
})");
  EXPECT_TRUE(s->changed);
  EXPECT_EQ(Root(*s->after)->name(), "p");
  EXPECT_TRUE(HasSite(s->ctx, "reshape-reshape"));
  EXPECT_TRUE(HasSite(s->ctx, "reshape-identity"));
  EXPECT_TRUE(HasSite(s->ctx, "transpose-transpose"));
}

TEST(AlgsimpTest, TransposeTransposeComposes) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[2,3,4] parameter(0)
  t1 = f32[3,4,2] transpose(p), dimensions={1,2,0}
  ROOT t2 = f32[4,2,3] transpose(t1), dimensions={1,2,0}
})");
  EXPECT_TRUE(s->changed);
  HloInstruction* r = Root(*s->after);
  EXPECT_EQ(r->opcode(), HloOpcode::kTranspose);
  EXPECT_EQ(r->operand(0)->name(), "p");
  EXPECT_EQ(r->dimensions(), (std::vector<int64_t>{2, 0, 1}));
}

TEST(AlgsimpTest, IdentityDataMovementIsRemoved) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  t = f32[2,3]{1,0} transpose(p), dimensions={0,1}
  b = f32[2,3]{1,0} broadcast(t), dimensions={0,1}
  s = f32[2,3]{1,0} slice(b), slice={[0:2], [0:3]}
  c = f32[2,3]{1,0} copy(s)
  k = f32[2,3]{1,0} concatenate(c), dimensions={0}
  ROOT pd = f32[2,3]{1,0} pad(k, f32[] constant(0)), padding=0_0x0_0
})");
  EXPECT_TRUE(s->changed);
  EXPECT_EQ(Root(*s->after)->name(), "p");
  for (const char* site :
       {"transpose-identity", "broadcast-identity", "slice-identity",
        "copy-identity", "concat-single", "pad-zero"}) {
    EXPECT_TRUE(HasSite(s->ctx, site)) << site;
  }
}

TEST(AlgsimpTest, LayoutChangingCopyStays) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT c = f32[2,3]{0,1} copy(p)
})");
  EXPECT_FALSE(s->changed);
}

TEST(AlgsimpTest, ScalarBroadcastMovesOutward) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[] parameter(0)
  b = f32[2,3] broadcast(p), dimensions={}
  r = f32[3,2] reshape(b)
  t = f32[2,3] transpose(r), dimensions={1,0}
  sl = f32[1,3] slice(t), slice={[1:2], [0:3]}
  ROOT bb = f32[5,1,3] broadcast(sl), dimensions={1,2}
})");
  EXPECT_TRUE(s->changed);
  HloInstruction* r = Root(*s->after);
  EXPECT_EQ(r->opcode(), HloOpcode::kBroadcast);
  EXPECT_EQ(r->operand(0)->name(), "p");
  EXPECT_TRUE(HasSite(s->ctx, "broadcast-scalar-fold"));
}

TEST(AlgsimpTest, SliceOfSliceAndOfConcat) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[20] parameter(0)
  q = f32[6] parameter(1)
  s1 = f32[9] slice(p), slice={[2:19:2]}
  s2 = f32[3] slice(s1), slice={[1:8:3]}
  c = f32[29] concatenate(q, p, s2), dimensions={0}
  s3 = f32[4] slice(c), slice={[7:15:2]}
  s4 = f32[2] slice(c), slice={[26:29:2]}
  ROOT t = (f32[3], f32[4], f32[2]) tuple(s2, s3, s4)
})");
  EXPECT_TRUE(s->changed);
  HloInstruction* r = Root(*s->after);
  HloInstruction* s2 = r->operand(0);
  EXPECT_EQ(s2->operand(0)->name(), "p");
  EXPECT_EQ(s2->attrs().slice[0], (SliceDim{4, 17, 6}));
  EXPECT_EQ(r->operand(1)->operand(0)->name(), "p");
  EXPECT_EQ(r->operand(1)->attrs().slice[0], (SliceDim{1, 8, 2}));
  EXPECT_TRUE(HasSite(s->ctx, "slice-slice"));
  EXPECT_TRUE(HasSite(s->ctx, "slice-concat"));
}

TEST(AlgsimpTest, SliceAcrossConcatOperandsStays) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  c = f32[8] concatenate(p, q), dimensions={0}
  ROOT s = f32[2] slice(c), slice={[3:5]}
})");
  EXPECT_FALSE(s->changed);
}

TEST(AlgsimpTest, ConvertChains) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = bf16[4] parameter(0)
  a = f32[4] convert(p)
  b = f64[4] convert(a)
  c = bf16[4] convert(b)
  i = s8[4] parameter(1)
  j = s32[4] convert(i)
  k = f32[4] convert(j)
  l = f32[4] convert(k)
  ROOT t = (bf16[4], f32[4]) tuple(c, l)
})");
  EXPECT_TRUE(s->changed);
  HloInstruction* r = Root(*s->after);
  EXPECT_EQ(r->operand(0)->name(), "p");
  EXPECT_EQ(r->operand(1)->opcode(), HloOpcode::kConvert);
  EXPECT_EQ(r->operand(1)->operand(0)->name(), "i");
  EXPECT_TRUE(HasSite(s->ctx, "convert-convert"));
  EXPECT_TRUE(HasSite(s->ctx, "convert-identity"));
}

TEST(AlgsimpTest, LossyConvertChainsStay) {
  // f32 -> bf16 rounds; s32 -> f32 rounds above 2^24; f32 -> s32 truncates.
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = bf16[4] convert(p)
  b = f32[4] convert(a)
  q = s32[4] parameter(1)
  c = f32[4] convert(q)
  d = s32[4] convert(c)
  e = s32[4] convert(p)
  f = f32[4] convert(e)
  ROOT t = (f32[4], s32[4], f32[4]) tuple(b, d, f)
})");
  EXPECT_FALSE(s->changed);
}

TEST(AlgsimpTest, ChainsThroughAFloatKeepSaturation) {
  // s8 -> f16 is exact, but f16 -> u16 saturates -128 to 0 where s8 -> u16
  // wraps it to 65408; s8 -> s32 fits, so that chain merges.
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = s8[4] parameter(0)
  a = f16[4] convert(p)
  b = u16[4] convert(a)
  c = s32[4] convert(a)
  ROOT t = (u16[4], s32[4]) tuple(b, c)
})");
  EXPECT_TRUE(s->changed);
  HloInstruction* r = Root(*s->after);
  EXPECT_EQ(r->operand(0)->operand(0)->name(), "a");
  EXPECT_EQ(r->operand(1)->operand(0)->name(), "p");
}

TEST(AlgsimpTest, ReduceOfSize1Dimensions) {
  auto s = Simplify(R"(
HloModule m
add_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[3,1,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3,4] reduce(p, z), dimensions={1}, to_apply=add_f
})");
  EXPECT_TRUE(s->changed);
  EXPECT_TRUE(HasSite(s->ctx, "reduce-size1"));
  HloInstruction* r = Root(*s->after);
  EXPECT_EQ(r->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(r->operand(1)->opcode(), HloOpcode::kReshape);
  // +0 + -0 is +0: the add with the init keeps that right.
  Literal arg(Shape(PrimitiveType::F32, {3, 1, 4}));
  arg.mutable_data<float>()[0] = -0.0f;
  arg.mutable_data<float>()[1] = NAN;
  std::vector<Literal> args;
  args.push_back(std::move(arg));
  testing::ExpectSameValues(*s->before, *s->after, args);
}

TEST(AlgsimpTest, ReduceOfLargerDimensionStays) {
  auto s = Simplify(R"(
HloModule m
add_f {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  p = s32[3,2] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[3] reduce(p, z), dimensions={1}, to_apply=add_f
})");
  EXPECT_FALSE(s->changed);
}

TEST(AlgsimpTest, DotWithSize1ContractionBecomesMultiply) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  a = f32[2,3,1] parameter(0)
  b = f32[2,1,5] parameter(1)
  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})");
  EXPECT_TRUE(s->changed);
  EXPECT_TRUE(HasSite(s->ctx, "dot-to-multiply"));
  EXPECT_EQ(Root(*s->after)->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(Root(*s->after)->operand(0)->opcode(), HloOpcode::kMultiply);
  // A -0 product: the dot's sum starts at +0.
  Literal a(Shape(PrimitiveType::F32, {2, 3, 1}));
  Literal b(Shape(PrimitiveType::F32, {2, 1, 5}));
  a.mutable_data<float>()[0] = -1;
  std::vector<Literal> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  testing::ExpectSameValues(*s->before, *s->after, args);

  s = Simplify(R"(
HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  b = s32[] parameter(1)
  ROOT d = s32[4] dot(a, b), lhs_contracting_dims={}, rhs_contracting_dims={}
})");
  EXPECT_TRUE(s->changed);
  EXPECT_EQ(Root(*s->after)->opcode(), HloOpcode::kMultiply);
}

TEST(AlgsimpTest, RealDotStays) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_FALSE(s->changed);
}

TEST(AlgsimpTest, RewriteLimitStopsMidway) {
  const char* text = R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[4] constant({0, 0, 0, 0})
  a = s32[4] add(p, z)
  b = s32[4] add(a, z)
  ROOT c = s32[4] add(b, z)
})";
  auto m = Parse(text);
  AlgebraicSimplifier algsimp;
  PassContext ctx(2);
  EXPECT_TRUE(RunPass(algsimp, m.get(), &ctx));
  EXPECT_EQ(ctx.rewrites_allowed(), 2);
  EXPECT_EQ(Root(*m)->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(Root(*m)->operand(0)->name(), "p");
  ASSERT_NE(ctx.LastAllowed(), nullptr);
  EXPECT_EQ(ctx.LastAllowed()->instruction, "b");
  EXPECT_EQ(ctx.LastAllowed()->site, "add-zero");
}

TEST(AlgsimpTest, NothingToDoReportsUnchanged) {
  auto s = Simplify(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT a = f32[4] add(p, q)
})");
  EXPECT_FALSE(s->changed);
  EXPECT_TRUE(s->ctx.decisions().empty());
}

}  // namespace
}  // namespace trench
