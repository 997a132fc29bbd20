// The fusion pass never creates cycles: hand-written modules whose
// multi-output merges would close a cycle, and seeded random DAGs (elementwise,
// reduce, broadcast, transpose, dot, as bench/compile_speed.cc generates them)
// that must verify after fusion and evaluate (oracle) exactly as before.
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
using testing::RunPass;

int CountFusions(const HloModule& m) {
  int n = 0;
  for (const HloInstruction* i : m.entry_computation()->instructions()) {
    if (i->opcode() != HloOpcode::kFusion) continue;
    ++n;
    auto spec = AnalyzeFusedComputation(*i->fused_computation());
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  }
  return n;
}

// Runs fusion on `text`: the result must verify (RunPass checks it, which
// rejects cycles), every fusion must satisfy the shared predicate, and
// the values must not change.
std::unique_ptr<HloModule> FuseChecked(const std::string& text, int seeds) {
  auto before = Parse(text);
  auto m = Parse(text);
  if (before == nullptr || m == nullptr) return nullptr;
  FusionPass pass;
  RunPass(pass, m.get());
  CountFusions(*m);
  ExpectEquivalent(*before, *m, seeds);
  return m;
}

// Minimized from a random DAG (and the same shape of failure as
// nv_maxtext_1n1g_jit_train_step_before_optimization.hlo in the corpus):
// every pair that merges is fine on its own, but {v1, v5, v7} (siblings
// of p1) and {v3, v8, v9} (siblings of p0) feed each other (v1 -> v8,
// v3 -> v7). A check that only looks for paths through instructions
// outside the two merged groups misses the path through the other
// fusion; the two fusions then form a cycle.
TEST(FusionCycleTest, TwoMultiOutputFusionsDoNotFeedEachOther) {
  const std::string text = R"(HloModule two_fusions
ENTRY e {
  p0 = f32[8,16] parameter(0)
  p1 = f32[8,16] parameter(1)
  v1 = f32[8,16] add(p1, p1)
  v3 = f32[8,16] subtract(p0, p0)
  v5 = f32[8,16] subtract(p1, v1)
  v7 = f32[8,16] subtract(v3, p1)
  v8 = f32[8,16] add(v3, v1)
  v9 = f32[8,16] add(v8, p0)
  ROOT r = (f32[8,16], f32[8,16], f32[8,16]) tuple(v5, v7, v9)
})";
  auto m = FuseChecked(text, 4);
  ASSERT_NE(m, nullptr);
  // Still fuses (at least one multi-output fusion), just not both ways.
  int tuples = 0;
  for (const HloInstruction* i : m->entry_computation()->instructions()) {
    if (i->opcode() == HloOpcode::kFusion) tuples += i->shape().IsTuple();
  }
  EXPECT_GE(tuples, 1);
}

// Sibling consumers of p0 where one reaches the other through an
// unfusible op: merging them into one multi-output fusion would be a
// cycle (a -> y -> b with a, b in the fusion and y outside).
TEST(FusionCycleTest, SiblingsConnectedThroughOutsideOpDoNotMerge) {
  const std::string text = R"(HloModule cyc2
ENTRY e {
  p0 = f32[8,128] parameter(0)
  p1 = f32[8,128] parameter(1)
  a = f32[8,128] exponential(p0)
  y = f32[8,128] reverse(a), dimensions={0}
  b = f32[8,128] add(p0, y)
  ROOT out = (f32[8,128], f32[8,128]) tuple(a, b)
})";
  auto m = FuseChecked(text, 4);
  ASSERT_NE(m, nullptr);
}

// A random DAG of about `n` instructions over f32[8,16] values, in the
// style of bench/compile_speed.cc but with a wider operand window and
// several outputs, so that fusions meet through unfused ops and copies.
std::string RandomDag(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string t =
      "HloModule gen\nadd {\n  x = f32[] parameter(0)\n  y = f32[] "
      "parameter(1)\n  ROOT s = f32[] add(x, y)\n}\nmax {\n  x = f32[] "
      "parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] "
      "maximum(x, y)\n}\nENTRY e {\n"
      "  p0 = f32[8,16] parameter(0)\n  p1 = f32[8,16] parameter(1)\n"
      "  w = f32[16,16] parameter(2)\n  zero = f32[] constant(0)\n";
  std::vector<std::string> live = {"p0", "p1"};
  const char* binary[] = {"add", "multiply", "subtract", "maximum", "minimum"};
  const char* unary[] = {"exponential", "tanh", "negate", "abs", "logistic"};
  const int window = 4 + static_cast<int>(seed % 12);
  auto pick = [&] {
    const int k = static_cast<int>(live.size());
    const int lo = std::max(0, k - window);
    return live[lo + static_cast<int>(rng() % (k - lo))];
  };
  int count = 4;
  for (int id = 0; count < n; ++id) {
    const std::string v = "v" + std::to_string(id);
    const int kind = static_cast<int>(rng() % 24);
    if (kind < 9) {
      t += "  " + v + " = f32[8,16] " + binary[rng() % 5] + "(" + pick() +
           ", " + pick() + ")\n";
      count += 1;
    } else if (kind < 14) {
      t += "  " + v + " = f32[8,16] " + unary[rng() % 5] + "(" + pick() + ")\n";
      count += 1;
    } else if (kind < 17) {
      const bool rows = rng() % 2 == 0;
      t += "  " + v + "r = f32[" + (rows ? "8" : "16") + "] reduce(" + pick() +
           ", zero), dimensions={" + (rows ? "1" : "0") +
           "}, to_apply=" + (rng() % 2 ? "add" : "max") + "\n";
      t += "  " + v + " = f32[8,16] broadcast(" + v + "r), dimensions={" +
           (rows ? "0" : "1") + "}\n";
      count += 2;
    } else if (kind < 19) {
      t += "  " + v + "t = f32[16,8] transpose(" + pick() +
           "), dimensions={1,0}\n";
      t += "  " + v + " = f32[8,16] transpose(" + v + "t), dimensions={1,0}\n";
      count += 2;
    } else if (kind < 21) {
      t += "  " + v + " = f32[8,16] dot(" + pick() +
           ", w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
      count += 1;
    } else if (kind < 22) {
      // An op fusion leaves alone, so that paths leave and re-enter.
      t += "  " + v + " = f32[8,16] reverse(" + pick() + "), dimensions={1}\n";
      count += 1;
    } else {
      t += "  " + v + " = f32[8,16] broadcast(zero), dimensions={}\n";
      t += "  " + v + "s = f32[8,16] add(" + v + ", " + pick() + ")\n";
      count += 2;
      live.push_back(v);
      live.push_back(v + "s");
      continue;
    }
    live.push_back(v);
  }
  // Some values feed a sum chain, a few are outputs of their own; the
  // rest may be dead (DCE is not fusion's business, but it must cope).
  std::string acc = live[0];
  std::vector<std::string> outs;
  for (size_t i = 1; i < live.size(); ++i) {
    if (rng() % 3 == 0) continue;
    const std::string name = "acc" + std::to_string(i);
    t += "  " + name + " = f32[8,16] add(" + acc + ", " + live[i] + ")\n";
    acc = name;
    if (rng() % 16 == 0) outs.push_back(live[i]);
  }
  outs.push_back(acc);
  std::string shapes, names;
  for (size_t i = 0; i < outs.size(); ++i) {
    shapes += (i ? ", " : "") + std::string("f32[8,16]");
    names += (i ? ", " : "") + outs[i];
  }
  t += "  ROOT r = (" + shapes + ") tuple(" + names + ")\n}\n";
  return t;
}

TEST(FusionCycleTest, RandomDagsVerifyAndKeepTheirValues) {
  int fusions = 0, multi_output = 0;
  for (uint32_t seed = 1; seed <= 24; ++seed) {
    const std::string text = RandomDag(seed % 3 == 0 ? 400 : 150, seed);
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto m = FuseChecked(text, 1);
    ASSERT_NE(m, nullptr);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << text;
      return;
    }
    for (const HloInstruction* i : m->entry_computation()->instructions()) {
      if (i->opcode() != HloOpcode::kFusion) continue;
      ++fusions;
      multi_output += i->shape().IsTuple();
    }
  }
  // The property is only meaningful if fusion (and merging) happened.
  EXPECT_GT(fusions, 24);
  EXPECT_GT(multi_output, 0);
}

}  // namespace
}  // namespace trench
