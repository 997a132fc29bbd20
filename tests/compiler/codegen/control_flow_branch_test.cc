// conditional and call (and their mixes with while): one kernel whose
// scalar unit jumps to the selected branch's code; results agree with the
// oracle.
#include <string>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracle;

std::string Replace(std::string s, const std::string& from,
                    const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

// Branches of different ops on a (x, y) tuple; branch 1 returns a tuple
// leaf as it is (its parameter's buffer).
constexpr char kBranches[] = R"(
HloModule cond
b0 {
  p = (f32[9,140], f32[9,140]) parameter(0)
  x = f32[9,140] get-tuple-element(p), index=0
  y = f32[9,140] get-tuple-element(p), index=1
  ROOT r = f32[9,140] add(x, y)
}
b1 {
  p = (f32[9,140], f32[9,140]) parameter(0)
  ROOT y = f32[9,140] get-tuple-element(p), index=1
}
b2 {
  p = (f32[9,140], f32[9,140]) parameter(0)
  x = f32[9,140] get-tuple-element(p), index=0
  ROOT r = f32[9,140] exponential(x)
}
ENTRY e {
  a = f32[9,140] parameter(0)
  b = f32[9,140] parameter(1)
  t = (f32[9,140], f32[9,140]) tuple(a, b)
  SELECTOR
  ROOT r = f32[9,140] conditional(k, t, t, t), branch_computations={b0, b1, b2}
}
)";

TEST(ControlFlowBranchTest, IndexSelectsBranchOutOfRangeSelectsTheLast) {
  for (const char* k : {"0", "1", "2", "3", "7", "-1", "-2147483648"}) {
    SCOPED_TRACE(k);
    ExpectMatchesOracle(Replace(kBranches, "SELECTOR",
                                std::string("k = s32[] constant(") + k + ")"),
                        3, ComparisonOptions::Near(1e-5, 1e-5));
  }
}

TEST(ControlFlowBranchTest, IndexFromAParameter) {
  // Random s32 scalars lie in [-8, 7]: in range and out of range.
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    ExpectMatchesOracle(
        Replace(kBranches, "SELECTOR", "k = s32[] parameter(2)"), seed,
        ComparisonOptions::Near(1e-5, 1e-5));
  }
}

constexpr char kPred[] = R"(
HloModule condp
on_true {
  p = (f32[300], s32[300]) parameter(0)
  x = f32[300] get-tuple-element(p), index=0
  n = s32[300] get-tuple-element(p), index=1
  s = f32[300] sine(x)
  m = s32[300] negate(n)
  ROOT r = (f32[300], s32[300]) tuple(s, m)
}
on_false {
  p = (f32[300], s32[300]) parameter(0)
  x = f32[300] get-tuple-element(p), index=0
  n = s32[300] get-tuple-element(p), index=1
  c = f32[300] cosine(x)
  ROOT r = (f32[300], s32[300]) tuple(c, n)
}
ENTRY e {
  a = f32[300] parameter(0)
  b = s32[300] parameter(1)
  t = (f32[300], s32[300]) tuple(a, b)
  SELECTOR
  ROOT r = (f32[300], s32[300]) conditional(k, t, t), true_computation=on_true, false_computation=on_false
}
)";

TEST(ControlFlowBranchTest, PredSelectsTrueOrFalseWithTupleResults) {
  for (const char* k : {"true", "false"}) {
    SCOPED_TRACE(k);
    ExpectMatchesOracle(Replace(kPred, "SELECTOR",
                                std::string("k = pred[] constant(") + k + ")"),
                        2, ComparisonOptions::Near(1e-5, 1e-5));
  }
  // A pred computed on the vector unit from the inputs.
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    ExpectMatchesOracle(
        Replace(kPred, "SELECTOR",
                "s0 = f32[1] slice(a), slice={[0:1]}\n"
                "  s = f32[] reshape(s0)\n  z = f32[] constant(0)\n"
                "  k = pred[] compare(s, z), direction=GT"),
        seed, ComparisonOptions::Near(1e-5, 1e-5));
  }
}

// A conditional in a while body picks add or subtract by the counter's
// parity; a while in a conditional branch.
TEST(ControlFlowBranchTest, ConditionalInWhileAndWhileInConditional) {
  ExpectMatchesOracle(R"(
HloModule mix
inc {
  p = (f32[50], f32[50]) parameter(0)
  x = f32[50] get-tuple-element(p), index=0
  y = f32[50] get-tuple-element(p), index=1
  ROOT r = f32[50] add(x, y)
}
dec {
  p = (f32[50], f32[50]) parameter(0)
  x = f32[50] get-tuple-element(p), index=0
  y = f32[50] get-tuple-element(p), index=1
  ROOT r = f32[50] subtract(x, y)
}
cond {
  p = (s32[], f32[50], f32[50]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[50], f32[50]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[50] get-tuple-element(p), index=1
  y = f32[50] get-tuple-element(p), index=2
  two = s32[] constant(2)
  k = s32[] remainder(i, two)
  xy = (f32[50], f32[50]) tuple(x, y)
  x1 = f32[50] conditional(k, xy, xy), branch_computations={inc, dec}
  y1 = f32[50] multiply(y, y)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT r = (s32[], f32[50], f32[50]) tuple(i1, x1, y1)
}
loop {
  p = (f32[50], f32[50]) parameter(0)
  x = f32[50] get-tuple-element(p), index=0
  y = f32[50] get-tuple-element(p), index=1
  z = s32[] constant(0)
  t = (s32[], f32[50], f32[50]) tuple(z, x, y)
  w = (s32[], f32[50], f32[50]) while(t), condition=cond, body=body
  ROOT o = f32[50] get-tuple-element(w), index=1
}
skip {
  p = (f32[50], f32[50]) parameter(0)
  ROOT x = f32[50] get-tuple-element(p), index=0
}
ENTRY e {
  a = f32[50] parameter(0)
  b = f32[50] parameter(1)
  c = pred[] parameter(2)
  t = (f32[50], f32[50]) tuple(a, b)
  ROOT r = f32[50] conditional(c, t, t), true_computation=loop, false_computation=skip
}
)",
                      9, ComparisonOptions::Near(1e-4, 1e-5));
}

// call: a computation called twice (parameters of its own, filled by
// copies), a tuple result, a call inside a call.
TEST(ControlFlowBranchTest, Calls) {
  ExpectMatchesOracle(R"(
HloModule calls
f {
  x = f32[7,129] parameter(0)
  y = f32[7,129] parameter(1)
  m = f32[7,129] multiply(x, y)
  s = f32[7,129] add(m, x)
  ROOT r = (f32[7,129], f32[7,129]) tuple(s, y)
}
g {
  x = f32[7,129] parameter(0)
  c = (f32[7,129], f32[7,129]) call(x, x), to_apply=f
  ROOT r = f32[7,129] get-tuple-element(c), index=0
}
ENTRY e {
  a = f32[7,129] parameter(0)
  b = f32[7,129] parameter(1)
  c1 = (f32[7,129], f32[7,129]) call(a, b), to_apply=f
  s1 = f32[7,129] get-tuple-element(c1), index=0
  y1 = f32[7,129] get-tuple-element(c1), index=1
  c2 = (f32[7,129], f32[7,129]) call(s1, y1), to_apply=f
  s2 = f32[7,129] get-tuple-element(c2), index=0
  g1 = f32[7,129] call(s2), to_apply=g
  ROOT o = (f32[7,129], f32[7,129]) tuple(g1, y1)
}
)",
                      4, ComparisonOptions::Near(1e-5, 1e-5));
}

TEST(ControlFlowBranchTest, SingleBranchTakesEveryIndex) {
  // One branch: every index selects it.
  ExpectMatchesOracle(R"(
HloModule one
b0 {
  p = f32[4] parameter(0)
  ROOT r = f32[4] negate(p)
}
ENTRY e {
  a = f32[4] parameter(0)
  k = s32[] constant(5)
  ROOT r = f32[4] conditional(k, a), branch_computations={b0}
}
)",
                      1, ComparisonOptions::Exact());
}

}  // namespace
}  // namespace trench::codegen
