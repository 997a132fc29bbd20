// The double-buffered streaming tile loop (compiler/codegen/streaming.h):
// kernels built directly with KernelBuilder + StreamLoop, run on the
// simulator, checked element by element; in-place streaming; and the cost
// model's view of the overlap (streamed kernels report fewer cycles than
// the same kernel staging whole arrays).
#include "compiler/codegen/streaming.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "compiler/codegen/kernel_builder.h"
#include "tpu/simulator.h"

namespace trench::codegen {
namespace {

using tpu::BufferDecl;
using tpu::BufferRole;

BufferDecl Decl(const std::string& name, BufferRole role, int index,
                const std::string& dtype, int64_t n, int64_t esz) {
  BufferDecl d;
  d.name = name;
  d.role = role;
  d.index = index;
  d.dtype = dtype;
  d.dims = {n};
  d.bytes = n * esz;
  return d;
}

std::vector<uint8_t> Floats(int64_t n, float scale) {
  std::vector<uint8_t> b(n * 4);
  for (int64_t i = 0; i < n; ++i) {
    float f = static_cast<float>((i * 37) % 1001) * scale - 3.0f;
    std::memcpy(&b[i * 4], &f, 4);
  }
  return b;
}

float At(const std::vector<uint8_t>& b, int64_t i) {
  float f;
  std::memcpy(&f, &b[i * 4], 4);
  return f;
}

// z = x + y (f32[n]) streamed with `chunk` (0: staged whole, the
// KernelBuilder way), in kernel "k" of an executable.
StatusOr<tpu::Executable> AddKernel(int64_t n, int64_t chunk,
                                    int64_t vmem = 16 << 20) {
  tpu::Executable exe;
  exe.buffers = {Decl("x", BufferRole::kInput, 0, "f32", n, 4),
                 Decl("y", BufferRole::kInput, 1, "f32", n, 4),
                 Decl("z", BufferRole::kOutput, 0, "f32", n, 4)};
  KernelBuilder kb("k", vmem);
  if (chunk == 0) {
    const int64_t x = kb.AllocVmem(n * 4), y = kb.AllocVmem(n * 4);
    const int64_t z = kb.AllocVmem(n * 4);
    kb.DmaIn(x, "x", n * 4);
    kb.DmaIn(y, "y", n * 4);
    kb.BeginLinearTiles(n);
    kb.LoadTile(0, "f32", x);
    kb.LoadTile(1, "f32", y);
    kb.Emit("vadd.f32 v2, v0, v1 @m0");
    kb.StoreTile("f32", z, 2);
    kb.EndLinearTiles();
    kb.DmaOut("z", z, n * 4);
  } else {
    ASSIGN_OR_RETURN(StreamLoop s,
                     StreamLoop::Create(kb, n, {{"x", "f32"}, {"y", "f32"}},
                                        {{"z", "f32"}}, chunk));
    s.Begin();
    s.Load(0, 0);
    s.Load(1, 1);
    kb.Emit("vadd.f32 v2, v0, v1 @m0");
    s.Store(0, 2);
    s.End();
  }
  ASSIGN_OR_RETURN(tpu::Kernel k, kb.Finish());
  exe.kernels.push_back(std::move(k));
  exe.launches = {"k"};
  return exe;
}

tpu::RunResult RunAdd(int64_t n, int64_t chunk, int64_t vmem = 16 << 20) {
  auto exe = AddKernel(n, chunk, vmem);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString();
  if (!exe.ok()) return {};
  tpu::SimOptions o;
  o.vmem_bytes = vmem;
  auto r = tpu::RunExecutable(*exe, {Floats(n, 0.25f), Floats(n, 0.5f)}, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return {};
  EXPECT_EQ(r->report.status, tpu::RunStatus::kOk)
      << r->report.message << " at " << r->report.instruction;
  return std::move(r).value();
}

void ExpectSums(const tpu::RunResult& r, int64_t n) {
  ASSERT_EQ(r.outputs.size(), 1u);
  std::vector<uint8_t> x = Floats(n, 0.25f), y = Floats(n, 0.5f);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(At(r.outputs[0].bytes, i), At(x, i) + At(y, i)) << i;
  }
}

TEST(StreamingTest, AddWithRaggedLastChunk) {
  for (int64_t n : {1, 1000, 1024, 5000, 6144, 9000}) {
    SCOPED_TRACE(n);
    tpu::RunResult r = RunAdd(n, 1024);
    ExpectSums(r, n);
    // Every chunk moves its inputs in and its output out once.
    const int64_t chunks = (n + 1023) / 1024;
    EXPECT_EQ(r.report.cost.total.dma_transfers, 3 * chunks);
    EXPECT_EQ(r.report.cost.total.bytes_hbm_to_vmem, 2 * n * 4);
    EXPECT_EQ(r.report.cost.total.bytes_vmem_to_hbm, n * 4);
  }
}

TEST(StreamingTest, LargerChunks) {
  ExpectSums(RunAdd(20000, 4096), 20000);
  ExpectSums(RunAdd(20480, 2048), 20480);
}

TEST(StreamingTest, ArraysLargerThanVmem) {
  // 3 x 256 KiB of arrays through 64 KiB of VMEM.
  const int64_t n = 64 * 1024, vmem = 64 << 10;
  EXPECT_FALSE(AddKernel(n, 0, vmem).ok());  // Staged whole: too big.
  const int64_t chunk =
      ChooseStreamChunk(n, {{"x", "f32"}, {"y", "f32"}, {"z", "f32"}}, vmem);
  EXPECT_EQ(chunk, 2048);  // 2 sets x 3 arrays x 8 KiB = 48 KiB.
  ExpectSums(RunAdd(n, chunk, vmem), n);
}

TEST(StreamingTest, StreamingOverlapsDmaWithCompute) {
  // The cost model runs DMAs in the background (tpu/cost_model.h): the
  // streamed kernel waits for about one chunk, the staged one for all.
  const int64_t n = 256 * 1024;
  tpu::RunResult whole = RunAdd(n, 0);
  tpu::RunResult streamed = RunAdd(n, kDefaultStreamChunk);
  ExpectSums(streamed, n);
  const tpu::KernelStats& w = whole.report.cost.total;
  const tpu::KernelStats& s = streamed.report.cost.total;
  EXPECT_EQ(w.bytes_hbm_to_vmem, s.bytes_hbm_to_vmem);
  EXPECT_LT(s.dma_stall_cycles, w.dma_stall_cycles)
      << "streamed " << s.dma_stall_cycles << " vs whole "
      << w.dma_stall_cycles;
  EXPECT_LT(s.cycles, w.cycles);
  // The gain is most of the transfer time of the smaller of DMA and compute.
  EXPECT_LT(s.cycles * 10, w.cycles * 9)
      << "streamed " << s.cycles << " vs whole " << w.cycles;
}

TEST(StreamingTest, InPlaceOverAnInput) {
  // t = x; t = t + y in place (output buffer = input buffer); z = t.
  const int64_t n = 7000;
  tpu::Executable exe;
  exe.buffers = {Decl("x", BufferRole::kInput, 0, "f32", n, 4),
                 Decl("y", BufferRole::kInput, 1, "f32", n, 4),
                 Decl("t", BufferRole::kTemp, -1, "f32", n, 4),
                 Decl("z", BufferRole::kOutput, 0, "f32", n, 4)};
  const std::vector<std::vector<std::string>> kernels = {
      {"x", "t"}, {"t", "y", "t"}, {"t", "z"}};
  for (size_t k = 0; k < kernels.size(); ++k) {
    const std::vector<std::string>& io = kernels[k];
    KernelBuilder kb("k" + std::to_string(k), 16 << 20);
    std::vector<StreamArray> ins;
    for (size_t i = 0; i + 1 < io.size(); ++i) ins.push_back({io[i], "f32"});
    auto s = StreamLoop::Create(kb, n, ins, {{io.back(), "f32"}}, 2048);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    s->Begin();
    s->Load(0, 0);
    if (ins.size() == 2) {
      s->Load(1, 1);
      kb.Emit("vadd.f32 v0, v0, v1 @m0");
    }
    s->Store(0, 0);
    s->End();
    auto kernel = kb.Finish();
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    exe.kernels.push_back(std::move(kernel).value());
    exe.launches.push_back("k" + std::to_string(k));
  }
  auto r = tpu::RunExecutable(exe, {Floats(n, 0.25f), Floats(n, 0.5f)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->report.status, tpu::RunStatus::kOk) << r->report.message;
  ExpectSums(*r, n);
}

TEST(StreamingTest, ConvertsMemoryTypes) {
  // bf16 in, s32 out through lanes: z = (s32)(f32)x, streamed.
  const int64_t n = 3000;
  tpu::Executable exe;
  exe.buffers = {Decl("x", BufferRole::kInput, 0, "bf16", n, 2),
                 Decl("z", BufferRole::kOutput, 0, "s32", n, 4)};
  KernelBuilder kb("k", 16 << 20);
  auto s = StreamLoop::Create(kb, n, {{"x", "bf16"}}, {{"z", "s32"}}, 1024);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  s->Begin();
  s->Load(0, 0);
  kb.Emit("vcvt.s32.f32 v1, v0");
  s->Store(0, 1);
  s->End();
  auto kernel = kb.Finish();
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  exe.kernels.push_back(std::move(kernel).value());
  exe.launches = {"k"};
  std::vector<uint8_t> x(n * 2);
  for (int64_t i = 0; i < n; ++i) {
    const float f = static_cast<float>(i % 200 - 100);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    x[2 * i] = (bits >> 16) & 0xff;
    x[2 * i + 1] = bits >> 24;
  }
  auto r = tpu::RunExecutable(exe, {x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->report.status, tpu::RunStatus::kOk) << r->report.message;
  for (int64_t i = 0; i < n; ++i) {
    int32_t v;
    std::memcpy(&v, &r->outputs[0].bytes[i * 4], 4);
    ASSERT_EQ(v, i % 200 - 100) << i;
  }
}

TEST(StreamingTest, BadPlansAreErrors) {
  KernelBuilder kb("k", 64 << 10);
  EXPECT_EQ(
      StreamLoop::Create(kb, 100, {{"x", "f32"}}, {}, 1000).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(StreamLoop::Create(kb, 0, {{"x", "f32"}}, {}, 1024).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(StreamLoop::Create(kb, 100, {{"x", "bf16"}}, {{"x", "f32"}}, 1024)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      StreamLoop::Create(kb, 1 << 20, {{"x", "f32"}}, {{"y", "f32"}}, 8192)
          .status()
          .code(),
      StatusCode::kResourceExhausted);
  EXPECT_EQ(ChooseStreamChunk(1 << 20, {{"x", "f64"}}, 8 << 10), 0);
  EXPECT_EQ(ChooseStreamChunk(100, {{"x", "f32"}}, 16 << 20), 1024);
  EXPECT_TRUE(StreamingPays(2 * kDefaultStreamChunk, 1024, 16 << 20));
  EXPECT_FALSE(StreamingPays(4096, 3 * 4096 * 4, 16 << 20));
  EXPECT_TRUE(StreamingPays(4096, 3 * 4096 * 4, 16 << 10));
}

}  // namespace
}  // namespace trench::codegen
