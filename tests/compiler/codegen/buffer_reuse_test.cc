// Buffer reuse end to end: programs compiled with buffer assignment agree
// with the oracle, use fewer temp bytes than without it, and stay correct
// at every --rewrite-limit (every prefix of the buffer decisions).
#include <string>
#include <vector>

#include "compiler/codegen/buffer_plan.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

// A long chain: elementwise ops (in place), transposes and a broadcast of
// a reduction (reused buffers), the parameter read again near the end.
std::string Chain(int n) {
  std::string s = R"(
HloModule chain
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[24,130] parameter(0)
  q = f32[24,130] parameter(1)
  v0 = f32[24,130] sine(p)
)";
  const char* ops[] = {"cosine", "add",  "multiply",
                       "negate", "tanh", "subtract"};
  for (int i = 1; i <= n; ++i) {
    const std::string prev = "v" + std::to_string(i - 1);
    const std::string cur = "v" + std::to_string(i);
    const std::string op = ops[i % 6];
    if (i % 5 == 0) {
      s += "  t" + std::to_string(i) + " = f32[130,24] transpose(" + prev +
           "), dimensions={1,0}\n  " + cur + " = f32[24,130] transpose(t" +
           std::to_string(i) + "), dimensions={1,0}\n";
    } else if (i % 7 == 0) {
      const std::string k = std::to_string(i);
      s += "  z" + k + " = f32[] constant(0)\n  r" + k + " = f32[24] reduce(" +
           prev + ", z" + k + "), dimensions={1}, to_apply=sum\n  b" + k +
           " = f32[24,130] broadcast(r" + k + "), dimensions={0}\n  m" + k +
           " = f32[24,130] multiply(" + prev + ", b" + k + ")\n  " + cur +
           " = f32[24,130] tanh(m" + k + ")\n";
    } else if (op == "add" || op == "multiply" || op == "subtract") {
      s += "  " + cur + " = f32[24,130] " + op + "(" + prev + ", q)\n";
    } else {
      s += "  " + cur + " = f32[24,130] " + op + "(" + prev + ")\n";
    }
  }
  s += "  ROOT o = f32[24,130] add(v" + std::to_string(n) + ", p)\n}\n";
  return s;
}

struct Outcome {
  bool ok = false;
  int64_t temp_bytes = 0;
};

// Compiles `text` with `options`, runs it on RandomArguments(seed) and
// compares every output (and tap) with the oracle.
Outcome CompileAndCompare(const std::string& text, uint64_t seed,
                          const CompileOptions& options,
                          const std::vector<std::string>& taps = {}) {
  Outcome out;
  std::unique_ptr<HloModule> m = testing::Parse(text);
  if (m == nullptr) return out;
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), seed);
  auto expected = EvaluateWithTaps(*m, args, taps);
  EXPECT_TRUE(expected.ok()) << expected.status().ToString();
  if (!expected.ok()) return out;
  CompileOptions o = options;
  o.taps = taps;
  auto exe = CompileModule(*m, o);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString();
  if (!exe.ok()) return out;
  for (const tpu::BufferDecl* d :
       exe->BuffersWithRole(tpu::BufferRole::kTemp)) {
    out.temp_bytes += d->bytes;
  }
  tpu::RunResult r = testing::Run(*exe, args);
  EXPECT_EQ(r.report.status, tpu::RunStatus::kOk)
      << r.report.message << " at " << r.report.kernel << ": "
      << r.report.instruction;
  if (r.report.status != tpu::RunStatus::kOk) return out;
  ComparisonOptions tol = ComparisonOptions::Near(1e-4, 1e-4);
  ComparisonResult c = CompareLiterals(testing::ToLiteral(r.outputs.at(0)),
                                       expected->result, tol);
  EXPECT_TRUE(c.ok()) << c.ToText();
  out.ok = c.ok();
  EXPECT_EQ(r.taps.size(), taps.size());
  for (size_t i = 0; i < taps.size() && i < r.taps.size(); ++i) {
    for (const auto& [name, lit] : expected->taps) {
      if (name != taps[i]) continue;
      ComparisonResult t =
          CompareLiterals(testing::ToLiteral(r.taps[i]), lit, tol);
      EXPECT_TRUE(t.ok()) << name << ": " << t.ToText();
      out.ok = out.ok && t.ok();
    }
  }
  return out;
}

TEST(BufferReuseTest, LongChainUsesFewerBytesAndAgrees) {
  const std::string text = Chain(30);
  CompileOptions with, without;
  without.buffer_assignment = false;
  Outcome a = CompileAndCompare(text, 1, with);
  Outcome b = CompileAndCompare(text, 1, without);
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_LT(a.temp_bytes * 4, b.temp_bytes)
      << a.temp_bytes << " vs " << b.temp_bytes;
}

TEST(BufferReuseTest, PlanReportsTheBytesSaved) {
  std::unique_ptr<HloModule> m = testing::Parse(Chain(12));
  ASSERT_NE(m, nullptr);
  const HloComputation& entry = *m->entry_computation();
  auto on = PlanBuffers(entry, entry.MakeInstructionPostOrder(), {});
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_GT(on->stats.bytes_saved(), 0);
  EXPECT_GT(on->stats.in_place, 0);
  EXPECT_GT(on->stats.reused, 0);
  auto off = PlanBuffers(entry, entry.MakeInstructionPostOrder(), {},
                         {.reuse = false});
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->stats.bytes_saved(), 0);
  EXPECT_LT(on->buffers.size(), off->buffers.size());
}

// Every prefix of the buffer decisions is a correct program: what a
// bisection over --rewrite-limit relies on.
TEST(BufferReuseTest, EveryRewriteLimitAgrees) {
  const std::string text = Chain(8);
  PassContext all;
  CompileOptions o;
  o.context = &all;
  ASSERT_TRUE(CompileAndCompare(text, 2, o).ok);
  const int64_t n = all.rewrites_allowed();
  ASSERT_GT(n, 3);
  std::vector<int64_t> bytes;
  for (int64_t limit = 0; limit <= n; ++limit) {
    SCOPED_TRACE(limit);
    PassContext ctx(limit);
    o.context = &ctx;
    Outcome r = CompileAndCompare(text, 2, o);
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(ctx.rewrites_allowed(), limit);
    bytes.push_back(r.temp_bytes);
  }
  EXPECT_LT(bytes.back(), bytes.front());
}

TEST(BufferReuseTest, TappedValuesSurviveReuse) {
  const std::string text = Chain(10);
  Outcome r = CompileAndCompare(text, 3, CompileOptions(),
                                {"v1", "v2", "t5", "v6", "v9"});
  EXPECT_TRUE(r.ok);
}

// dynamic-update-slice written over its dying operand 0.
TEST(BufferReuseTest, DynamicUpdateSliceInPlace) {
  const std::string text = R"(
HloModule dus
ENTRY e {
  p = f32[40,130] parameter(0)
  u = f32[3,50] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  x = f32[40,130] sine(p)
  y = f32[40,130] dynamic-update-slice(x, u, i, j)
  z = f32[40,130] cosine(y)
  ROOT o = f32[40,130] add(z, p)
}
)";
  std::unique_ptr<HloModule> m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  const HloComputation& entry = *m->entry_computation();
  auto plan = PlanBuffers(entry, entry.MakeInstructionPostOrder(), {});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->leaves.at(entry.GetInstructionWithName("y")),
            plan->leaves.at(entry.GetInstructionWithName("x")));
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    EXPECT_TRUE(CompileAndCompare(text, seed, CompileOptions()).ok);
  }
}

}  // namespace
}  // namespace trench::codegen
