// Taps inside fused kernels that stream (compiler/codegen/stream_fusion.h):
// with 64 KiB of VMEM the fusions below do not fit staged, and every
// tapped fused instruction -- elementwise ones, a broadcast, a parameter,
// the roots of a multi-output loop fusion and of a reduce fusion -- must
// still equal the oracle's value of that instruction.
#include <string>
#include <vector>

#include "tests/compiler/codegen/streaming_test_util.h"

namespace trench::codegen {
namespace {

constexpr int64_t kVmem = 64 << 10;

// Compiles and runs `text` with taps `names` and kVmem of VMEM and
// compares every tap with the oracle's value.
void ExpectTapsMatch(const std::string& text,
                     const std::vector<std::string>& names, uint64_t seed) {
  auto m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), seed);
  auto expected = EvaluateWithTaps(*m, args, names);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  CompileOptions options;
  options.taps = names;
  options.vmem_bytes = kVmem;
  auto exe = CompileModule(*m, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  EXPECT_LE(testing::MaxKernelVmem(*exe), kVmem);
  tpu::SimOptions so;
  so.vmem_bytes = kVmem;
  auto r = tpu::RunExecutable(*exe, testing::InputBytes(args), so);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->report.status, tpu::RunStatus::kOk)
      << r->report.message << " at " << r->report.instruction;
  ComparisonOptions tol;
  tol.f32 = {2e-3, 1e-5};
  size_t leaves = 0;
  for (const auto& [name, lit] : expected->taps) {
    leaves += lit.shape().IsTuple() ? lit.tuple_elements().size() : 1;
  }
  ASSERT_EQ(r->taps.size(), leaves);
  for (const tpu::OutputBuffer& tap : r->taps) {
    // A tuple value's leaf k is tapped as "name#k".
    const size_t hash = tap.label.find('#');
    const std::string name = tap.label.substr(0, hash);
    const Literal* want = nullptr;
    for (const auto& [n, lit] : expected->taps) {
      if (n != name) continue;
      want = hash == std::string::npos
                 ? &lit
                 : &lit.tuple_element(std::stoi(tap.label.substr(hash + 1)));
    }
    ASSERT_NE(want, nullptr) << tap.label;
    ComparisonResult c = CompareLiterals(testing::ToLiteral(tap), *want, tol);
    EXPECT_TRUE(c.ok()) << tap.label << ": " << c.ToText();
  }
}

TEST(StreamFusionTapsTest, LoopFusionTaps) {
  const std::string text = R"(
HloModule m
fused {
  p0 = f32[97,1001] parameter(0)
  p1 = f32[1001] parameter(1)
  b = f32[97,1001] broadcast(p1), dimensions={1}
  e = f32[97,1001] multiply(p0, p0)
  m = f32[97,1001] add(e, b)
  n = f32[97,1001] negate(m)
  c = s8[97,1001] convert(m)
  ROOT t = (f32[97,1001], s8[97,1001]) tuple(n, c)
}
ENTRY e {
  a = f32[97,1001] parameter(0)
  v = f32[1001] parameter(1)
  ROOT f = (f32[97,1001], s8[97,1001]) fusion(a, v), kind=kLoop, calls=fused
}
)";
  ExpectTapsMatch(text, {"e", "m", "b", "n", "p0", "t"}, 3);
}

TEST(StreamFusionTapsTest, ReduceFusionTaps) {
  const std::string text = R"(
HloModule m
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused {
  p0 = f32[1001,97] parameter(0)
  p1 = f32[1001,97] parameter(1)
  m = f32[1001,97] multiply(p0, p1)
  z = f32[] constant(0)
  ROOT r = f32[97] reduce(m, z), dimensions={0}, to_apply=sum
}
ENTRY e {
  a = f32[1001,97] parameter(0)
  b = f32[1001,97] parameter(1)
  ROOT f = f32[97] fusion(a, b), kind=kInput, calls=fused
}
)";
  ExpectTapsMatch(text, {"m", "r", "p1"}, 4);
}

}  // namespace
}  // namespace trench::codegen
