// Tokens (after-all, add-dependency, token parameters and tuple elements)
// and opt-barrier: no kernels, zero-byte buffers for tokens, add-dependency
// and opt-barrier aliasing their operand 0, and outputs still numbered
// like the oracle's flattened result leaves. Each program runs through the
// back end alone (CompileModule) and through the whole compiler (Compile)
// and must agree with the oracle.
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

// Compiles `text` both ways, runs it on RandomArguments(seed) and compares
// every output leaf (tokens included) with the oracle, exactly.
void ExpectBothPathsMatch(const std::string& text, uint64_t seed) {
  SCOPED_TRACE(text);
  testing::ExpectMatchesOracle(text, seed, ComparisonOptions::Exact());
  std::unique_ptr<HloModule> m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), seed);
  auto expected = Evaluate(*m, args);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  auto compiled = Compile(*m, CompileOptions());
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  tpu::RunResult r = testing::Run(compiled->executable, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
  std::vector<Literal> leaves;
  for (const tpu::OutputBuffer& b : r.outputs) {
    leaves.push_back(testing::ToLiteral(b));
  }
  ASSERT_EQ(leaves.size(), expected->Leaves().size());
  Literal actual = expected->shape().IsTuple()
                       ? Literal::Tuple(std::move(leaves))
                       : std::move(leaves.at(0));
  ComparisonResult c =
      CompareLiterals(actual, *expected, ComparisonOptions::Exact());
  EXPECT_TRUE(c.ok()) << c.ToText();
}

TEST(TokenTest, AddDependencyOfParameterAndOperation) {
  ExpectBothPathsMatch(R"(
HloModule m
ENTRY e {
  p0 = s32[9,130] parameter(0)
  p1 = s32[9,130] parameter(1)
  add = s32[9,130] add(p0, p1)
  t0 = token[] after-all(add, p0)
  p1_dep = s32[9,130] add-dependency(p1, t0)
  neg = s32[9,130] negate(p1_dep)
  sub = s32[9,130] subtract(add, p0)
  sub_dep = s32[9,130] add-dependency(sub, t0)
  ROOT r = s32[9,130] multiply(neg, sub_dep)
}
)",
                       1);
}

TEST(TokenTest, AddDependencyAsRootAndOfConstant) {
  ExpectBothPathsMatch(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  t = token[] after-all(p)
  c_dep = f32[4] add-dependency(c, t)
  m = f32[4] multiply(p, c_dep)
  ROOT r = f32[4] add-dependency(m, t)
}
)",
                       2);
}

TEST(TokenTest, TupleShapedAddDependency) {
  ExpectBothPathsMatch(R"(
HloModule m
ENTRY e {
  p0 = f32[3,5] parameter(0)
  p1 = f32[3,5] parameter(1)
  k = f32[] constant(42)
  t = token[] after-all()
  tup = (f32[3,5], token[], f32[3,5], f32[]) tuple(p0, t, p1, k)
  dep = (f32[3,5], token[], f32[3,5], f32[]) add-dependency(tup, t)
  a = f32[3,5] get-tuple-element(dep), index=0
  b = f32[3,5] get-tuple-element(dep), index=2
  ROOT d = f32[3,5] subtract(a, b)
}
)",
                       3);
}

// Token outputs: output k is still leaf k of the result (a zero-byte
// token buffer where the result has a token).
TEST(TokenTest, TokenOutputsKeepLeafNumbering) {
  const std::string text = R"(
HloModule m
ENTRY e {
  p = u8[7] parameter(0)
  t = token[] after-all()
  n = u8[7] not(p)
  ROOT r = (token[], u8[7], token[], u8[7]) tuple(t, n, t, p)
}
)";
  ExpectBothPathsMatch(text, 4);
  std::unique_ptr<HloModule> m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  auto exe = CompileModule(*m, CompileOptions());
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  std::vector<const tpu::BufferDecl*> outs =
      exe->BuffersWithRole(tpu::BufferRole::kOutput);
  ASSERT_EQ(outs.size(), 4u);
  EXPECT_EQ(outs[0]->bytes, 0);
  EXPECT_EQ(outs[0]->dtype, "token");
  EXPECT_EQ(outs[1]->bytes, 7);
  EXPECT_EQ(outs[2]->bytes, 0);
  EXPECT_EQ(outs[3]->bytes, 7);
}

// after-all and add-dependency emit no kernel of their own.
TEST(TokenTest, TokensEmitNoKernels) {
  std::unique_ptr<HloModule> m = testing::Parse(R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  t = token[] after-all(p)
  d = f32[8] add-dependency(p, t)
  ROOT n = f32[8] negate(d)
}
)");
  ASSERT_NE(m, nullptr);
  auto exe = CompileModule(*m, CompileOptions());
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  for (const std::string& launch : exe->launches) {
    EXPECT_EQ(launch.find("_t"), std::string::npos) << launch;
    EXPECT_EQ(launch.find("_d"), std::string::npos) << launch;
  }
  EXPECT_EQ(exe->launches.size(), 2u);  // negate, copy_out.
}

TEST(TokenTest, TokenInConditional) {
  const std::string text = R"(
HloModule m
on_true {
  p = token[] parameter(0)
  k = s32[] constant(42)
  ROOT t = (s32[], token[]) tuple(k, p)
}
on_false {
  p = s32[] parameter(0)
  n = token[] after-all()
  ROOT t = (s32[], token[]) tuple(p, n)
}
ENTRY e {
  sel = pred[] parameter(0)
  tok = token[] after-all()
  seven = s32[] constant(7)
  c = (s32[], token[]) conditional(sel, tok, seven),
      true_computation=on_true, false_computation=on_false
  ROOT r = s32[] get-tuple-element(c), index=0
}
)";
  for (uint64_t seed = 0; seed < 4; ++seed) ExpectBothPathsMatch(text, seed);
}

TEST(TokenTest, TokenInWhileState) {
  ExpectBothPathsMatch(R"(
HloModule m
cond {
  s = (s32[], token[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], token[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  t = token[] get-tuple-element(s), index=1
  x = f32[4] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  t1 = token[] after-all(t, x)
  xd = f32[4] add-dependency(x, t1)
  x1 = f32[4] add(xd, xd)
  ROOT r = (s32[], token[], f32[4]) tuple(i1, t1, x1)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  t = token[] after-all()
  init = (s32[], token[], f32[4]) tuple(z, t, x)
  w = (s32[], token[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=2
}
)",
                       5);
}

// Taps of token values are zero-byte tap buffers.
TEST(TokenTest, TappedTokenIsZeroBytes) {
  std::unique_ptr<HloModule> m = testing::Parse(R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  t = token[] after-all(p)
  ROOT d = f32[8] add-dependency(p, t)
}
)");
  ASSERT_NE(m, nullptr);
  CompileOptions options;
  options.taps = {"t", "d"};
  auto exe = CompileModule(*m, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  std::vector<const tpu::BufferDecl*> taps =
      exe->BuffersWithRole(tpu::BufferRole::kTap);
  ASSERT_EQ(taps.size(), 2u);
  EXPECT_EQ(taps[0]->bytes, 0);
  EXPECT_EQ(taps[1]->bytes, 32);
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), 6);
  tpu::RunResult r = testing::Run(*exe, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
  ASSERT_EQ(r.taps.size(), 2u);
  ComparisonResult c = CompareLiterals(testing::ToLiteral(r.taps[1]), args[0],
                                       ComparisonOptions::Exact());
  EXPECT_TRUE(c.ok()) << c.ToText();
}

// opt-barrier returns its operand unchanged (a tuple here, as XLA uses
// it); its leaves alias the operand's, values flow on through
// get-tuple-element, and a parameter passed straight through stays intact.
TEST(TokenTest, OptBarrierOfTupleAliasesItsOperand) {
  ExpectBothPathsMatch(R"(
HloModule m
ENTRY e {
  p0 = f32[9,130] parameter(0)
  p1 = s32[3] parameter(1)
  neg = f32[9,130] negate(p0)
  t = (f32[9,130], s32[3], f32[9,130]) tuple(neg, p1, p0)
  b = (f32[9,130], s32[3], f32[9,130]) opt-barrier(t)
  g0 = f32[9,130] get-tuple-element(b), index=0
  g1 = s32[3] get-tuple-element(b), index=1
  g2 = f32[9,130] get-tuple-element(b), index=2
  sum = f32[9,130] add(g0, g2)
  ROOT r = (f32[9,130], s32[3]) tuple(sum, g1)
}
)",
                       11);
}

// An opt-barrier of a single array and one that is the root.
TEST(TokenTest, OptBarrierOfArrayAndAsRoot) {
  ExpectBothPathsMatch(R"(
HloModule m
ENTRY e {
  p0 = bf16[7,3] parameter(0)
  b = bf16[7,3] opt-barrier(p0)
  e = bf16[7,3] exponential(b)
  ROOT r = bf16[7,3] opt-barrier(e)
}
)",
                       12);
}

}  // namespace
}  // namespace trench::codegen
