// The fusion pass on large modules (about 20,000 instructions): long
// elementwise chains, diamonds, sibling consumers of one value near and
// far apart (so that multi-output merges meet both short and long paths
// and the bounded cycle check of fusion_order.h gives up on some), row
// reductions, dots and ops fusion leaves alone (paths that leave a fusion
// and come back). The result must verify (the verifier rejects fusion
// cycles), every fusion must satisfy the fused-kernel predicate, and the
// values must not change. No timing is asserted: before the incremental
// cycle check this took minutes, now well under a second of fusion.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "compiler/passes/fusion.h"
#include "compiler/passes/fusion_support.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

using testing::ExpectEquivalent;
using testing::Parse;

// About `n` instructions over f32[8,128] values (see the file comment).
std::string LargeModule(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string t =
      "HloModule large\nadd {\n  x = f32[] parameter(0)\n  y = f32[] "
      "parameter(1)\n  ROOT s = f32[] add(x, y)\n}\nENTRY e {\n"
      "  p0 = f32[8,128] parameter(0)\n  p1 = f32[8,128] parameter(1)\n"
      "  w = f32[128,128] parameter(2)\n  zero = f32[] constant(0)\n"
      "  half = f32[] constant(0.5)\n";
  std::vector<std::string> live = {"p0", "p1"};
  const char* binary[] = {"add", "multiply", "subtract", "maximum", "minimum"};
  const char* unary[] = {"tanh", "negate", "abs", "logistic", "exponential"};
  auto recent = [&] {
    const int k = static_cast<int>(live.size());
    const int lo = std::max(0, k - 6);
    return live[lo + static_cast<int>(rng() % (k - lo))];
  };
  // One value in 16 comes from anywhere before: long-range siblings.
  auto pick = [&] {
    if (rng() % 16 != 0) return recent();
    return live[rng() % live.size()];
  };
  const std::string f = " = f32[8,128] ";
  int count = 5;
  for (int id = 0; count < n; ++id) {
    const std::string v = "v" + std::to_string(id);
    const int kind = static_cast<int>(rng() % 16);
    if (kind < 5) {  // Chain link.
      t += "  " + v + f + unary[rng() % 5] + "(" + recent() + ")\n";
      count += 1;
    } else if (kind < 9) {
      t += "  " + v + f + binary[rng() % 5] + "(" + pick() + ", " + pick() +
           ")\n";
      count += 1;
    } else if (kind < 12) {  // Diamond: two consumers of x joined.
      const std::string x = pick();
      t += "  " + v + "a" + f + unary[rng() % 5] + "(" + x + ")\n";
      t += "  " + v + "b" + f + binary[rng() % 5] + "(" + x + ", " + x + ")\n";
      t += "  " + v + f + "add(" + v + "a, " + v + "b)\n";
      count += 3;
    } else if (kind < 13) {  // Row reduction broadcast back.
      t += "  " + v + "r = f32[8] reduce(" + pick() +
           ", zero), dimensions={1}, to_apply=add\n";
      t += "  " + v + f + "broadcast(" + v + "r), dimensions={0}\n";
      count += 2;
    } else if (kind < 14) {
      t += "  " + v + f + "dot(" + pick() +
           ", w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
      count += 1;
    } else if (kind < 15) {  // Fusion leaves reverse alone.
      t += "  " + v + f + "reverse(" + pick() + "), dimensions={1}\n";
      count += 1;
    } else {  // A copied splat.
      t += "  " + v + "h" + f + "broadcast(half), dimensions={}\n";
      t += "  " + v + f + "multiply(" + v + "h, " + pick() + ")\n";
      count += 2;
    }
    live.push_back(v);
  }
  // Every value feeds a sum chain (nothing dead); some are also outputs.
  std::string acc = live[0];
  std::vector<std::string> outs;
  for (size_t i = 1; i < live.size(); ++i) {
    const std::string name = "acc" + std::to_string(i);
    t += "  " + name + f + "add(" + acc + ", " + live[i] + ")\n";
    acc = name;
    if (rng() % 512 == 0) outs.push_back(live[i]);
  }
  outs.push_back(acc);
  std::string shapes, names;
  for (size_t i = 0; i < outs.size(); ++i) {
    shapes += (i ? ", " : "") + std::string("f32[8,128]");
    names += (i ? ", " : "") + outs[i];
  }
  t += "  ROOT r = (" + shapes + ") tuple(" + names + ")\n}\n";
  return t;
}

TEST(FusionLargeTest, TwentyThousandInstructionsFuseWithoutCycles) {
  auto m = Parse(LargeModule(20000, 7));
  ASSERT_NE(m, nullptr);
  ASSERT_GE(m->entry_computation()->instruction_count(), 20000);
  const std::unique_ptr<HloModule> before = m->Clone();
  FusionPass pass;
  PassContext ctx;
  StatusOr<bool> changed = pass.Run(m.get(), &ctx);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_TRUE(*changed);
  // The verifier rejects fusion cycles ("fusion is part of a cycle").
  Status verified = VerifyModule(*m);
  ASSERT_TRUE(verified.ok()) << verified.ToString();
  int fusions = 0, multi_output = 0, fused = 0;
  for (const HloInstruction* i : m->entry_computation()->instructions()) {
    if (i->opcode() != HloOpcode::kFusion) continue;
    ++fusions;
    multi_output += i->shape().IsTuple();
    fused += i->fused_computation()->instruction_count();
    auto spec = AnalyzeFusedComputation(*i->fused_computation());
    EXPECT_TRUE(spec.ok()) << i->name() << ": " << spec.status().ToString();
  }
  // Most of the module fused, with multi-output fusions among them.
  EXPECT_GT(fused, 10000);
  EXPECT_GT(fusions, 1000);
  EXPECT_GT(multi_output, 100);
  ExpectEquivalent(*before, *m, 1);
}

}  // namespace
}  // namespace trench
