// Target problems the differential fuzzer (tools/hlo-fuzz) found, compiled
// through the whole pipeline (Compile(): passes, then the code generator)
// and compared with the oracle on the ORIGINAL module:
//  - a bitcast between non-default layouts inside a fusion (it was fused as
//    a row-major reshape, ignoring that a bitcast reinterprets the physical
//    bytes; XLA's evaluator and the oracle's EvalBitcast do);
//  - register pressure: a map whose computation holds many c128 values (4
//    registers each) and a sort with many f64 operands ran out of v0..v27.
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::EntryModule;

constexpr char kAdd[] = R"(
add {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT s = f32[] add(p0, p1)
}
)";

// The fuzzer's case abe54e41b926b47e: negate into a column-major buffer,
// bitcast to a row-major [8,8,128], reduce over the two major dims. The
// physical bytes of %neg are its transpose, so %bitcast is not a reshape
// of %neg's logical (row-major) values.
TEST(FuzzRegressionTest, BitcastOfColumnMajorIntoReduce) {
  testing::ExpectCompiledMatchesOracle(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  param_0 = f32[64,128] parameter(0)
  zero = f32[] constant(0)
  reduce.1 = f32[128] reduce(param_0, zero), dimensions={0}, to_apply=add
  neg = f32[64,128]{0,1} negate(param_0)
  bitcast = f32[8,8,128] bitcast(neg)
  reduce.2 = f32[128] reduce(bitcast, zero), dimensions={0,1}, to_apply=add
  ROOT t = (f32[128], f32[128]) tuple(reduce.1, reduce.2)
})",
                                       1);
}

// Bitcasts between other layouts feeding elementwise consumers (loop
// fusions): operand and result non-default, result non-default only.
TEST(FuzzRegressionTest, BitcastBetweenLayoutsInLoopFusion) {
  testing::ExpectCompiledMatchesOracle(EntryModule(R"(
  a = f32[6,10,4] parameter(0)
  n = f32[6,10,4]{1,0,2} negate(a)
  b = f32[4,60]{0,1} bitcast(n)
  e = f32[4,60] exponential(b)
  c = s32[12,5] parameter(1)
  d = s32[12,5] abs(c)
  f = s32[5,12]{0,1} bitcast(d)
  g = s32[5,12] add(f, f)
  ROOT t = (f32[4,60], s32[5,12]) tuple(e, g)
)"),
                                       2);
}

// A map whose computation keeps many c128 values (4 registers each) alive
// one after another: registers must be recycled after each value's last
// reader. The fuzzer's case 905c0cd1aac787d6 (out of vector registers).
TEST(FuzzRegressionTest, MapOnC128WithLongComputation) {
  testing::ExpectCompiledMatchesOracle(R"(
HloModule m
mapped {
  x = c128[] parameter(0)
  y = c128[] parameter(1)
  a = c128[] subtract(y, y)
  ab = f64[] abs(y)
  mx = f64[] maximum(ab, ab)
  rs = f64[] reshape(mx)
  pr = pred[] convert(rs)
  sel = c128[] select(pr, a, a)
  re = f64[] real(sel)
  lo = f64[] constant(-4)
  hi = f64[] constant(4)
  cre = f64[] clamp(lo, re, hi)
  im = f64[] imag(sel)
  lo2 = f64[] constant(-4)
  hi2 = f64[] constant(4)
  cim = f64[] clamp(lo2, im, hi2)
  ROOT r = c128[] complex(cre, cim)
}
chain {
  x = c128[] parameter(0)
  y = c128[] parameter(1)
  a = c128[] add(x, y)
  b = c128[] multiply(a, x)
  c = c128[] subtract(b, y)
  d = c128[] negate(c)
  e = c128[] add(d, x)
  f = c128[] multiply(e, e)
  g = c128[] subtract(f, y)
  h = c128[] add(g, x)
  dead = c128[] multiply(h, h)
  j = c128[] subtract(h, y)
  k = c128[] add(j, e)
  ROOT i = c128[] add(k, x)
}
ENTRY e {
  p = c128[1,129,1,1]{1,0,3,2} parameter(0)
  q = c128[3,50] parameter(1)
  m1 = c128[1,129,1,1] map(p, p), dimensions={0,1,2,3}, to_apply=mapped
  m2 = c128[3,50] map(q, q), dimensions={0,1}, to_apply=chain
  ROOT t = (c128[1,129,1,1], c128[3,50]) tuple(m1, m2)
}
)",
                                       3);
}

// Map computations as the fuzzer writes them: one-element arrays between
// scalar parameters and root (f32[] -> f32[1] -> ... -> f32[]), dead code
// with non-scalar values, c128 divides whose result is not the root, map
// of one operand twice (cases 55d8c006f301c49a, e2ec4bf937273257 and
// 905c0cd1aac787d6 of seed 7: "cannot compile map" and out of vector
// registers).
TEST(FuzzRegressionTest, MapWithOneElementArraysDeadCodeAndC128Divide) {
  testing::ExpectCompiledMatchesOracle(R"(
HloModule m
one_element {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  r1 = f32[1] reshape(x)
  lo = f32[] constant(0)
  lob = f32[1] broadcast(lo), dimensions={}
  hi = f32[] constant(128)
  hib = f32[1] broadcast(hi), dimensions={}
  c = f32[1] clamp(lob, r1, hib)
  u = u8[1] convert(c)
  x2 = u8[1] xor(u, u)
  l = f32[1] logistic(c)
  m = f32[1,1] reshape(l)
  t = f32[1,1] transpose(m), dimensions={1,0}
  s = f32[] reshape(t)
  ROOT z = f32[] add(s, y)
}
divide {
  x = c128[] parameter(0)
  y = c128[] parameter(1)
  five = c128[] constant((5, 0))
  a = c128[] add(y, five)
  d = c128[] divide(x, a)
  k = u32[] constant(2)
  kb = bf16[] convert(k)
  dead = bf16[2,2] broadcast(kb), dimensions={}
  e = bf16[2,2] exponential(dead)
  ROOT r = c128[] add(d, d)
}
two_divides {
  x = c128[] parameter(0)
  y = c128[] parameter(1)
  a = c128[] add(x, x)
  seven = c128[] constant((7, 0))
  b = c128[] add(y, seven)
  d = c128[] divide(a, b)
  nineteen = c128[] constant((19, 0))
  e = c128[] add(d, nineteen)
  f = c128[] divide(x, e)
  re = f64[] real(d)
  im = f64[] imag(f)
  ROOT r = c128[] complex(re, im)
}
ENTRY e {
  p = f32[63,127] parameter(0)
  q = c128[256,5,3] parameter(1)
  w = c128[256,5,3]{1,0,2} parameter(2)
  m1 = f32[63,127] map(p, p), dimensions={0,1}, to_apply=one_element
  m2 = c128[256,5,3]{1,2,0} map(q, w), dimensions={0,1,2}, to_apply=divide
  m3 = c128[256,5,3] map(q, q), dimensions={0,1,2}, to_apply=two_divides
  ROOT t = (f32[63,127], c128[256,5,3]{1,2,0}, c128[256,5,3]) tuple(m1, m2, m3)
}
)",
                                       5);
}

// sort with eight f64 operands (a pair of registers each, for lhs and rhs)
// by a comparator that reads the first two only, plus a c128 payload.
TEST(FuzzRegressionTest, SortWithManyWideOperands) {
  std::string params, ops, types;
  const int n = 8;
  for (int i = 0; i < n; ++i) {
    const std::string t = i == n - 1 ? "c128[]" : "f64[]";
    params += "  p" + std::to_string(2 * i) + " = " + t + " parameter(" +
              std::to_string(2 * i) + ")\n  p" + std::to_string(2 * i + 1) +
              " = " + t + " parameter(" + std::to_string(2 * i + 1) + ")\n";
  }
  std::string entry;
  for (int i = 0; i < n; ++i) {
    const std::string t = i == n - 1 ? "c128[5,3,9]" : "f64[5,3,9]";
    entry += "  a" + std::to_string(i) + " = " + t + " parameter(" +
             std::to_string(i) + ")\n";
    ops += (i ? ", a" : "a") + std::to_string(i);
    types += (i ? ", " : "") + t;
  }
  testing::ExpectCompiledMatchesOracle(
      "HloModule m\nless {\n" + params +
          "  ROOT r = pred[] compare(p0, p1), direction=GT\n}\nENTRY e {\n" +
          entry + "  ROOT s = (" + types + ") sort(" + ops +
          "), dimensions={2}, is_stable=true, to_apply=less\n}\n",
      4);
}

}  // namespace
}  // namespace trench::codegen
