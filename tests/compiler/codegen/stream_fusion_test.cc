// Fused kernels whose operands or results exceed VMEM stream through it
// (compiler/codegen/stream_fusion.h). With 64 KiB of VMEM (compiler and
// simulator alike) every fusion here (a few hundred KiB) fails staged
// whole; it must compile as one streamed fused kernel and match the
// oracle: loop fusions with broadcast, transposed and iota operands,
// multi-output loop and reduce fusions, row / column / middle / total
// reductions (per-slab results and resident accumulators), ragged slabs,
// and bf16 / f16 / f64 / s8 / s64 / u16 / pred types.
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/compile.h"
#include "tests/compiler/codegen/streaming_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracleWithVmem;
using testing::IsFloatType;

constexpr int64_t kVmem = 64 << 10;

// Expects the module's only fusion to be a fused kernel (not emitted
// inline), a fusion operand or result to exceed kVmem, and the oracle's
// values with kVmem of VMEM in several DMAs.
void ExpectStreams(const std::string& text, uint64_t seed,
                   const ComparisonOptions& options = {}) {
  std::unique_ptr<HloModule> m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  const HloInstruction* fusion = nullptr;
  for (const HloInstruction* i : m->entry_computation()->instructions()) {
    if (i->opcode() == HloOpcode::kFusion) fusion = i;
  }
  ASSERT_NE(fusion, nullptr);
  EXPECT_TRUE(EmitsFusedKernel(*fusion)) << "not a fused kernel";
  int64_t biggest = 0;
  for (const HloInstruction* o : fusion->operands()) {
    biggest = std::max(biggest, o->shape().byte_size());
  }
  for (const HloInstruction* o : fusion->fused_computation()->instructions()) {
    if (o->shape().IsArray()) {
      biggest = std::max(biggest, o->shape().byte_size());
    }
  }
  EXPECT_GT(biggest, kVmem) << "not a streaming case";
  tpu::KernelStats s = ExpectMatchesOracleWithVmem(text, seed, options, kVmem);
  EXPECT_GE(s.dma_transfers, 4) << text;
}

// Tolerance for sums of `terms` values: the kernel adds in the lane type,
// the oracle rounds once.
ComparisonOptions SumTolerance(int64_t terms) {
  ComparisonOptions o;
  o.f32 = {2e-6 * static_cast<double>(terms) + 1e-5, 1e-5};
  o.f64 = {1e-12 * static_cast<double>(terms) + 1e-12, 1e-12};
  return o;
}

// out = max(a * a, a + broadcast(b)) over t[r, c]; b is t[c] (staged).
std::string BroadcastLoop(const std::string& t, int64_t r, int64_t c) {
  const std::string s =
      t + "[" + std::to_string(r) + "," + std::to_string(c) + "]";
  const std::string v = t + "[" + std::to_string(c) + "]";
  return "HloModule m\nfused {\n  a = " + s + " parameter(0)\n  b = " + v +
         " parameter(1)\n  bb = " + s +
         " broadcast(b), dimensions={1}\n  m = " + s +
         " multiply(a, a)\n  s = " + s + " add(a, bb)\n  ROOT x = " + s +
         " maximum(m, s)\n}\nENTRY e {\n  p0 = " + s +
         " parameter(0)\n  p1 = " + v + " parameter(1)\n  ROOT f = " + s +
         " fusion(p0, p1), kind=kLoop, calls=fused\n}\n";
}

TEST(StreamFusionTest, LoopFusionWithBroadcastEveryWidth) {
  // Ragged: 97 x 1001 is no multiple of 1024.
  const std::vector<std::string> types = {"f32", "bf16", "f16", "f64",
                                          "s8",  "u16",  "s64", "s32"};
  uint64_t seed = 1;
  for (const std::string& t : types) {
    ExpectStreams(BroadcastLoop(t, 97, 1001), seed++);
  }
  ExpectStreams(BroadcastLoop("f32", 64, 1024), seed++);  // Even chunks.
  ExpectStreams(BroadcastLoop("bf16", 40001, 3), seed++);
}

TEST(StreamFusionTest, MultiOutputLoopFusionOfMixedTypes) {
  const std::string text = R"(
HloModule m
fused {
  a = bf16[130,515] parameter(0)
  b = f32[130,515] parameter(1)
  ca = f32[130,515] convert(a)
  s = f32[130,515] add(ca, b)
  lt = pred[130,515] compare(ca, b), direction=LT
  h = f16[130,515] convert(s)
  c8 = s8[130,515] convert(b)
  ROOT t = (f32[130,515], pred[130,515], f16[130,515], s8[130,515]) tuple(s, lt, h, c8)
}
ENTRY e {
  p0 = bf16[130,515] parameter(0)
  p1 = f32[130,515] parameter(1)
  ROOT f = (f32[130,515], pred[130,515], f16[130,515], s8[130,515]) fusion(p0, p1), kind=kLoop, calls=fused
}
)";
  ExpectStreams(text, 11);
}

TEST(StreamFusionTest, TransposedOperandIotaAndConstant) {
  // t (f32[8,4]) is read transposed and broadcast: staged whole; a
  // streams; iota and the constant are computed per tile.
  const std::string text = R"(
HloModule m
fused {
  a = f32[1025,4,8] parameter(0)
  t = f32[8,4] parameter(1)
  tt = f32[4,8] transpose(t), dimensions={1,0}
  tb = f32[1025,4,8] broadcast(tt), dimensions={1,2}
  i = s32[1025,4,8] iota(), iota_dimension=0
  fi = f32[1025,4,8] convert(i)
  k = f32[] constant(0.5)
  kb = f32[1025,4,8] broadcast(k), dimensions={}
  m = f32[1025,4,8] multiply(fi, kb)
  s = f32[1025,4,8] subtract(a, tb)
  ROOT x = f32[1025,4,8] add(s, m)
}
ENTRY e {
  p0 = f32[1025,4,8] parameter(0)
  p1 = f32[8,4] parameter(1)
  ROOT f = f32[1025,4,8] fusion(p0, p1), kind=kLoop, calls=fused
}
)";
  ExpectStreams(text, 12);
}

// reduce(a * b, dims) of t`in` (add; pred: or), with a shaped like b.
std::string ReduceFusion(const std::string& t, const std::string& in,
                         const std::string& out, const std::string& dims) {
  const std::string op = t == "pred" ? "or" : "add";
  const std::string mul = t == "pred" ? "and" : "multiply";
  return "HloModule m\nsum {\n  x = " + t + "[] parameter(0)\n  y = " + t +
         "[] parameter(1)\n  ROOT z = " + t + "[] " + op +
         "(x, y)\n}\nfused {\n  a = " + t + in + " parameter(0)\n  b = " + t +
         in + " parameter(1)\n  i = " + t + "[] parameter(2)\n  m = " + t + in +
         " " + mul + "(a, b)\n  ROOT r = " + t + out +
         " reduce(m, i), dimensions={" + dims +
         "}, to_apply=sum\n}\nENTRY e {\n  p0 = " + t + in +
         " parameter(0)\n  p1 = " + t + in + " parameter(1)\n  p2 = " + t +
         "[] parameter(2)\n  ROOT f = " + t + out +
         " fusion(p0, p1, p2), kind=kInput, calls=fused\n}\n";
}

struct Case {
  std::string in, out, dims;
  int64_t terms;
};

TEST(StreamFusionTest, ReduceFusionRowsColumnsMiddleAndTotal) {
  const std::vector<Case> cases = {
      {"[97,1001]", "[97]", "1", 1001},     // Per-slab results.
      {"[1001,97]", "[97]", "0", 1001},     // Resident accumulators.
      {"[40,50,61]", "[40,61]", "1", 50},   // Middle dim, per slab.
      {"[40,50,61]", "[50]", "0,2", 2440},  // Resident, two dims.
      {"[3,20001]", "[3]", "1", 20001},     // Split inside a row.
      {"[130,260]", "[]", "0,1", 33800}};   // Total.
  uint64_t seed = 20;
  for (const Case& c : cases) {
    ExpectStreams(ReduceFusion("f32", c.in, c.out, c.dims), seed++,
                  SumTolerance(c.terms));
  }
}

TEST(StreamFusionTest, ReduceFusionEveryWidth) {
  const std::vector<std::string> types = {"bf16", "f16", "f64", "s8",
                                          "u16",  "s64", "pred"};
  uint64_t seed = 40;
  for (const std::string& t : types) {
    for (const Case& c : std::vector<Case>{{"[97,1001]", "[97]", "1", 1001},
                                           {"[1001,97]", "[97]", "0", 1001}}) {
      ComparisonOptions o = SumTolerance(c.terms);
      // bf16/f16 sums accumulate in f32 and round once: within a few
      // ulps of the result type.
      if (t == "bf16") o.bf16 = {0.05, 2e-2};
      if (t == "f16") o.f16 = {0.05, 2e-3};
      ExpectStreams(ReduceFusion(t, c.in, c.out, c.dims), seed++, o);
    }
  }
}

TEST(StreamFusionTest, MultiOutputReduceFusion) {
  // Two reduces (sum, max) and a sibling output shaped like the input, on
  // ragged slabs; once per-slab (dim 1) and once resident (dim 0).
  for (const std::string dims : {"1", "0"}) {
    const bool rows = std::string(dims) == "1";
    const std::string out = rows ? "[97]" : "[1001]";
    const std::string text =
        "HloModule m\nsum {\n  x = f32[] parameter(0)\n  y = f32[] "
        "parameter(1)\n  ROOT z = f32[] add(x, y)\n}\nmx {\n  x = f32[] "
        "parameter(0)\n  y = f32[] parameter(1)\n  ROOT z = f32[] maximum(x, "
        "y)\n}\nfused {\n  a = f32[97,1001] parameter(0)\n  b = bf16[97,1001] "
        "parameter(1)\n  cb = f32[97,1001] convert(b)\n  m = f32[97,1001] "
        "multiply(a, cb)\n  z = f32[] constant(0)\n  ni = f32[] "
        "constant(-inf)\n  r1 = f32" +
        out + " reduce(m, z), dimensions={" + dims +
        "}, to_apply=sum\n  r2 = f32" + out + " reduce(a, ni), dimensions={" +
        dims +
        "}, to_apply=mx\n  e = bf16[97,1001] convert(m)\n  ROOT t = (f32" +
        out + ", f32" + out +
        ", bf16[97,1001]) tuple(r1, r2, e)\n}\nENTRY e "
        "{\n  p0 = f32[97,1001] parameter(0)\n  p1 = bf16[97,1001] "
        "parameter(1)\n  ROOT f = (f32" +
        out + ", f32" + out +
        ", bf16[97,1001]) fusion(p0, p1), kind=kInput, calls=fused\n}\n";
    ExpectStreams(text, rows ? 60 : 61, SumTolerance(rows ? 1001 : 97));
  }
}

TEST(StreamFusionTest, ReduceFusionWithResultsLargerThanVmemIsTiled) {
  // The accumulators of the whole result (80-160 KB) do not fit: blocks of
  // the outermost kept dim, ragged last blocks, strided slab DMAs.
  const std::vector<Case> cases = {{"[8,20000]", "[20000]", "0", 8},
                                   {"[4,3,9001]", "[3,9001]", "0", 4},
                                   {"[2,3,50,170]", "[50,170]", "0,1", 6}};
  uint64_t seed = 70;
  for (const Case& c : cases) {
    ExpectStreams(ReduceFusion("f32", c.in, c.out, c.dims), seed++,
                  SumTolerance(c.terms));
  }
  for (const std::string t : {"bf16", "s8", "f64"}) {
    ExpectStreams(ReduceFusion(t, "[6,20001]", "[20001]", "0"), seed++,
                  SumTolerance(6));
  }
  // A sibling output shaped like the input leaves block by block.
  const std::string text = R"(
HloModule m
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
fused {
  a = f32[5,20001] parameter(0)
  b = f32[5,20001] parameter(1)
  m = f32[5,20001] multiply(a, b)
  z = f32[] constant(0)
  r = f32[20001] reduce(m, z), dimensions={0}, to_apply=sum
  e = bf16[5,20001] convert(m)
  ROOT t = (f32[20001], bf16[5,20001]) tuple(r, e)
}
ENTRY e {
  p0 = f32[5,20001] parameter(0)
  p1 = f32[5,20001] parameter(1)
  ROOT f = (f32[20001], bf16[5,20001]) fusion(p0, p1), kind=kInput, calls=fused
}
)";
  ExpectStreams(text, seed++, SumTolerance(5));
  // A staged broadcast operand and an iota: read at the reduce input's
  // positions, which the blocks map back from box indices.
  const std::string mapped = R"(
HloModule m
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
fused {
  a = f32[6,20001] parameter(0)
  v = f32[6] parameter(1)
  bv = f32[6,20001] broadcast(v), dimensions={0}
  i = s32[6,20001] iota(), iota_dimension=1
  fi = f32[6,20001] convert(i)
  m = f32[6,20001] multiply(a, bv)
  s = f32[6,20001] add(m, fi)
  z = f32[] constant(0)
  ROOT r = f32[20001] reduce(s, z), dimensions={0}, to_apply=sum
}
ENTRY e {
  p0 = f32[6,20001] parameter(0)
  p1 = f32[6] parameter(1)
  ROOT f = f32[20001] fusion(p0, p1), kind=kInput, calls=fused
}
)";
  ExpectStreams(mapped, seed++, SumTolerance(6));
}

TEST(StreamFusionTest, RefusesWhenAStagedOperandDoesNotFit) {
  // The transposed operand (160 KiB) must be staged whole: the message
  // says so.
  const std::string text = R"(
HloModule m
fused {
  a = f32[200,200] parameter(0)
  t = f32[200,200] parameter(1)
  tt = f32[200,200] transpose(t), dimensions={1,0}
  ROOT x = f32[200,200] add(a, tt)
}
ENTRY e {
  p0 = f32[200,200] parameter(0)
  p1 = f32[200,200] parameter(1)
  ROOT f = f32[200,200] fusion(p0, p1), kind=kLoop, calls=fused
}
)";
  std::unique_ptr<HloModule> m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  CompileOptions co;
  co.vmem_bytes = kVmem;
  auto exe = CompileModule(*m, co);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(exe.status().message().find("staged whole"), std::string::npos)
      << exe.status().ToString();
  // With the default VMEM it is staged and compiles.
  EXPECT_TRUE(CompileModule(*m, CompileOptions()).ok());
}

}  // namespace
}  // namespace trench::codegen
