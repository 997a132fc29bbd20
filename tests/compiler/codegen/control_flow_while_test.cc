// while: one kernel whose scalar unit loops over the condition's and the
// body's instructions; results agree with the oracle.
#include <string>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracle;

// (i, x): 5 iterations of x += sin(x); the result is the whole state.
constexpr char kCounter[] = R"(
HloModule while_counter
cond {
  p = (s32[], f32[8,130]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8,130]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8,130] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  s = f32[8,130] sine(x)
  x1 = f32[8,130] add(x, s)
  ROOT r = (s32[], f32[8,130]) tuple(i1, x1)
}
ENTRY e {
  a = f32[8,130] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[8,130]) tuple(z, a)
  ROOT w = (s32[], f32[8,130]) while(t), condition=cond, body=body
}
)";

TEST(ControlFlowWhileTest, CounterLoop) {
  ExpectMatchesOracle(kCounter, 1, ComparisonOptions::Near(1e-5, 1e-5));
}

TEST(ControlFlowWhileTest, RunsAsOneKernel) {
  auto m = testing::Parse(kCounter);
  ASSERT_NE(m, nullptr);
  auto exe = CompileModule(*m, CompileOptions());
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  // The while kernel and the copy-out kernel.
  EXPECT_EQ(exe->launches.size(), 2u);
}

// A trip count from a parameter: sometimes zero iterations (the result is
// the initial state), state leaves that trade places every iteration (a
// parallel assignment) and a leaf that passes through unchanged.
TEST(ControlFlowWhileTest, SwappedAndPassThroughLeaves) {
  const std::string text = R"(
HloModule swap
cond {
  p = (s32[], f32[300], f32[300], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=3
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[300], f32[300], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[300] get-tuple-element(p), index=1
  y = f32[300] get-tuple-element(p), index=2
  n = s32[] get-tuple-element(p), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[300] multiply(x, y)
  ROOT r = (s32[], f32[300], f32[300], s32[]) tuple(i1, y, x1, n)
}
ENTRY e {
  a = f32[300] parameter(0)
  b = f32[300] parameter(1)
  n = s32[] parameter(2)
  z = s32[] constant(0)
  t = (s32[], f32[300], f32[300], s32[]) tuple(z, a, b, n)
  w = (s32[], f32[300], f32[300], s32[]) while(t), condition=cond, body=body
  x = f32[300] get-tuple-element(w), index=1
  y = f32[300] get-tuple-element(w), index=2
  i = s32[] get-tuple-element(w), index=0
  ROOT o = (f32[300], f32[300], s32[]) tuple(x, y, i)
}
)";
  for (uint64_t seed : {1, 2, 3, 4}) {
    ExpectMatchesOracle(text, seed, ComparisonOptions::Near(1e-5, 1e-5));
  }
}

// A reduction every iteration: acc += sum(x * x); x *= 0.5.
TEST(ControlFlowWhileTest, ReductionInTheBody) {
  ExpectMatchesOracle(R"(
HloModule reduce_loop
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  p = (s32[], f32[], f32[9,200]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[], f32[9,200]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[] get-tuple-element(p), index=1
  x = f32[9,200] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  xx = f32[9,200] multiply(x, x)
  z = f32[] constant(0)
  s = f32[] reduce(xx, z), dimensions={0,1}, to_apply=sum
  acc1 = f32[] add(acc, s)
  half = f32[] constant(0.5)
  hb = f32[9,200] broadcast(half), dimensions={}
  x1 = f32[9,200] multiply(x, hb)
  ROOT r = (s32[], f32[], f32[9,200]) tuple(i1, acc1, x1)
}
ENTRY e {
  a = f32[9,200] parameter(0)
  z = s32[] constant(0)
  c = f32[] constant(0)
  t = (s32[], f32[], f32[9,200]) tuple(z, c, a)
  w = (s32[], f32[], f32[9,200]) while(t), condition=cond, body=body
  ROOT s = f32[] get-tuple-element(w), index=1
}
)",
                      7, ComparisonOptions::Near(1e-4, 1e-5));
}

// Power iteration: v = A v / |A v|, 6 times, with a HIGHEST dot.
TEST(ControlFlowWhileTest, PowerIteration) {
  ExpectMatchesOracle(R"(
HloModule power
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  p = (s32[], f32[16,16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[16,16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  m = f32[16,16] get-tuple-element(p), index=1
  v = f32[16] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = f32[16] dot(m, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
  yy = f32[16] multiply(y, y)
  z = f32[] constant(0)
  s = f32[] reduce(yy, z), dimensions={0}, to_apply=sum
  r = f32[] rsqrt(s)
  rb = f32[16] broadcast(r), dimensions={}
  v1 = f32[16] multiply(y, rb)
  ROOT t = (s32[], f32[16,16], f32[16]) tuple(i1, m, v1)
}
ENTRY e {
  a = f32[16,16] parameter(0)
  at = f32[16,16] transpose(a), dimensions={1,0}
  sym = f32[16,16] add(a, at)
  v0 = f32[16] parameter(1)
  z = s32[] constant(0)
  t = (s32[], f32[16,16], f32[16]) tuple(z, sym, v0)
  w = (s32[], f32[16,16], f32[16]) while(t), condition=cond, body=body
  ROOT v = f32[16] get-tuple-element(w), index=2
}
)",
                      3, ComparisonOptions::Near(1e-4, 1e-4));
}

// A while in a while: acc += inc 4 times per outer iteration, 3 outer
// iterations, inc doubled each outer iteration.
TEST(ControlFlowWhileTest, NestedWhile) {
  ExpectMatchesOracle(R"(
HloModule nested
icond {
  p = (s32[], f32[130], f32[130]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(j, n), direction=LT
}
ibody {
  p = (s32[], f32[130], f32[130]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  acc = f32[130] get-tuple-element(p), index=1
  inc = f32[130] get-tuple-element(p), index=2
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  acc1 = f32[130] add(acc, inc)
  ROOT r = (s32[], f32[130], f32[130]) tuple(j1, acc1, inc)
}
ocond {
  p = (s32[], f32[130], f32[130]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
obody {
  p = (s32[], f32[130], f32[130]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[130] get-tuple-element(p), index=1
  inc = f32[130] get-tuple-element(p), index=2
  zero = s32[] constant(0)
  it = (s32[], f32[130], f32[130]) tuple(zero, acc, inc)
  iw = (s32[], f32[130], f32[130]) while(it), condition=icond, body=ibody
  acc1 = f32[130] get-tuple-element(iw), index=1
  inc2 = f32[130] add(inc, inc)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT r = (s32[], f32[130], f32[130]) tuple(i1, acc1, inc2)
}
ENTRY e {
  a = f32[130] parameter(0)
  b = f32[130] parameter(1)
  z = s32[] constant(0)
  t = (s32[], f32[130], f32[130]) tuple(z, a, b)
  w = (s32[], f32[130], f32[130]) while(t), condition=ocond, body=obody
  ROOT o = f32[130] get-tuple-element(w), index=1
}
)",
                      11, ComparisonOptions::Near(1e-5, 1e-5));
}

// Two whiles share one condition and one body (their parameters are
// buffers of their own, filled by copies), and an integer state.
TEST(ControlFlowWhileTest, SharedComputationsAndIntegerState) {
  ExpectMatchesOracle(R"(
HloModule shared
cond {
  p = (s32[], s32[70]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], s32[70]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = s32[70] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = s32[70] multiply(x, x)
  ROOT r = (s32[], s32[70]) tuple(i1, x1)
}
ENTRY e {
  a = s32[70] parameter(0)
  b = s32[70] parameter(1)
  z = s32[] constant(0)
  t1 = (s32[], s32[70]) tuple(z, a)
  w1 = (s32[], s32[70]) while(t1), condition=cond, body=body
  t2 = (s32[], s32[70]) tuple(z, b)
  w2 = (s32[], s32[70]) while(t2), condition=cond, body=body
  x1 = s32[70] get-tuple-element(w1), index=1
  x2 = s32[70] get-tuple-element(w2), index=1
  ROOT o = s32[70] subtract(x1, x2)
}
)",
                      5, ComparisonOptions::Exact());
}

}  // namespace
}  // namespace trench::codegen
