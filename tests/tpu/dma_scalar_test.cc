// DMA (strides, semaphores, double buffering) and the scalar unit (loops,
// branches, traps, timeouts).
#include "tests/tpu/tpu_test_util.h"

namespace trench::tpu {
namespace {

using testing::FromBytes;
using testing::RunTpux;
using testing::ToBytes;

TEST(DmaTest, TwoDimensionalStridedCopy) {
  // Copy the 3x5 block at (row 1, col 2) of a 6x10 s32 matrix into a 3x8
  // padded VMEM tile, then back out densely as 3x5.
  std::vector<int32_t> m(60);
  for (int i = 0; i < 60; ++i) m[i] = i;
  std::string text = R"(tpux 1
buffer a input 0 s32[6,10]{1,0} bytes=240
buffer b output 0 s32[3,5]{1,0} bytes=60
kernel k {
  .vmem 4096
  saddr s1, a
  saddr s2, b
  dmastart vmem[0], hbm[s1+48], 20, 0, 3, 40, 32
  dmawait 0
  dmastart hbm[s2], vmem[0], 20, 1, 3, 32, 20
  dmawait 1
}
launch k
)";
  RunResult r = RunTpux(text, {ToBytes(m)});
  ASSERT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
  std::vector<int32_t> out = FromBytes<int32_t>(r.outputs[0].bytes);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 5; ++j) EXPECT_EQ(out[i * 5 + j], (i + 1) * 10 + j + 2);
  }
  EXPECT_EQ(r.report.cost.total.bytes_hbm_to_vmem, 60);
  EXPECT_EQ(r.report.cost.total.bytes_vmem_to_hbm, 60);
}

TEST(DmaTest, ThreeDimensionalTransposingCopy) {
  // a[2][3][4] (u8) -> b[4][3][2]: chunk 1 byte, three dims.
  std::vector<uint8_t> a(24);
  for (int i = 0; i < 24; ++i) a[i] = static_cast<uint8_t>(i);
  std::string text = R"(tpux 1
buffer a input 0 u8[2,3,4] bytes=24
buffer b output 0 u8[4,3,2] bytes=24
kernel k {
  .vmem 64
  saddr s1, a
  saddr s2, b
  dmastart vmem[0], hbm[s1], 1, 0, 4, 1, 6, 3, 4, 2, 2, 12, 1
  dmawait 0
  dmastart hbm[s2], vmem[0], 24, 0
  dmawait 0
}
launch k
)";
  RunResult r = RunTpux(text, {a});
  ASSERT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(r.outputs[0].bytes[k * 6 + j * 2 + i], a[i * 12 + j * 4 + k]);
      }
    }
  }
}

TEST(DmaTest, DoubleBufferingOverlapsTransfers) {
  // Sum 8 chunks of 1024 f32 with two VMEM buffers: while chunk i is being
  // added, chunk i+1 streams into the other buffer (semaphores 0 and 1).
  std::vector<float> x(8 * 1024);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13);
  std::string text = R"(tpux 1
buffer x input 0 f32[8,1024] bytes=32768
buffer y output 0 f32[1024] bytes=4096
kernel k {
  .vmem 16384
  saddr s1, x
  saddr s2, y
  vimm.f32 v0, 0
  dmastart vmem[0], hbm[s1], 4096, 0
  simm s3, 4
loop:
  sadd s1, s1, 4096
  dmastart vmem[4096], hbm[s1], 4096, 1
  dmawait 0
  vld.f32 v1, vmem[0]
  vadd.f32 v0, v0, v1
  sadd s1, s1, 4096
  scmpne s4, s3, 1
  brz s4, last
  dmastart vmem[0], hbm[s1], 4096, 0
last:
  dmawait 1
  vld.f32 v1, vmem[4096]
  vadd.f32 v0, v0, v1
  sloop s3, loop
  vst.f32 vmem[8192], v0
  dmastart hbm[s2], vmem[8192], 4096, 2
  dmawait 2
}
launch k
)";
  RunResult r = RunTpux(text, {ToBytes(x)});
  ASSERT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
  std::vector<float> y = FromBytes<float>(r.outputs[0].bytes);
  for (int i = 0; i < 1024; ++i) {
    float want = 0;
    for (int c = 0; c < 8; ++c) want += x[c * 1024 + i];
    EXPECT_EQ(y[i], want) << i;
  }
  EXPECT_EQ(r.report.cost.total.dma_transfers, 9);
  EXPECT_EQ(r.report.cost.total.bytes_hbm_to_vmem, 32768);
}

TEST(DmaTest, MissingWaitIsATrap) {
  std::string text = R"(tpux 1
buffer x input 0 f32[4] bytes=16
kernel k {
  .vmem 64
  saddr s1, x
  dmastart vmem[0], hbm[s1], 16, 5
}
launch k
)";
  RunReport r = RunTpux(text, {std::vector<uint8_t>(16)}).report;
  EXPECT_EQ(r.status, RunStatus::kTrap);
  EXPECT_NE(r.message.find("1 DMA(s) in flight"), std::string::npos)
      << r.message;
  text = R"(tpux 1
kernel k {
  dmawait 3
}
launch k
)";
  r = RunTpux(text, {}).report;
  EXPECT_EQ(r.status, RunStatus::kTrap);
  EXPECT_NE(r.message.find("semaphore 3"), std::string::npos) << r.message;
}

// Sums 1..n in a loop, then branches on the parity of the sum.
constexpr char kLoopProgram[] = R"(tpux 1
buffer n input 0 s32[1] bytes=4
buffer out output 0 s64[2] bytes=16
kernel k {
  .vmem 0
  saddr s1, n
  sld.s32 s2, hbm[s1]
  simm s3, 0
  smov s4, s2
  brz s4, done
loop:
  sadd s3, s3, s4
  sloop s4, loop
done:
  sand s5, s3, 1
  brnz s5, odd
  simm s6, 100
  jmp store
odd:
  simm s6, 200
store:
  saddr s7, out
  sst.s64 hbm[s7], s3
  sst.s64 hbm[s7+8], s6
}
launch k
)";

TEST(ScalarTest, LoopAndConditionalBranch) {
  for (int32_t n : {0, 1, 4, 7, 1000}) {
    RunResult r = RunTpux(kLoopProgram, {ToBytes(std::vector<int32_t>{n})});
    ASSERT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
    std::vector<int64_t> out = FromBytes<int64_t>(r.outputs[0].bytes);
    int64_t sum = int64_t{n} * (n + 1) / 2;
    EXPECT_EQ(out[0], sum);
    EXPECT_EQ(out[1], sum % 2 ? 200 : 100);
  }
}

TEST(ScalarTest, ArithmeticAndSmem) {
  std::string text = R"(tpux 1
buffer out output 0 s64[8] bytes=64
kernel k {
  simm s1, -7
  sdiv s2, s1, 2
  srem s3, s1, 2
  sshra s4, s1, 1
  sshrl s5, s1, 60
  simm s9, 3
  smul s6, s1, s9
  scmpltu s7, s9, s1
  sst.s16 smem[100], s1
  sld.u16 s8, smem[100]
  saddr s10, out
  sst.s64 hbm[s10], s2
  sst.s64 hbm[s10+8], s3
  sst.s64 hbm[s10+16], s4
  sst.s64 hbm[s10+24], s5
  sst.s64 hbm[s10+32], s6
  sst.s64 hbm[s10+40], s7
  sst.s64 hbm[s10+48], s8
  ssel s11, s7, s9, s1
  sst.s64 hbm[s10+56], s11
}
launch k
)";
  RunResult r = RunTpux(text, {});
  ASSERT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
  std::vector<int64_t> o = FromBytes<int64_t>(r.outputs[0].bytes);
  EXPECT_EQ(o[0], -3);
  EXPECT_EQ(o[1], -1);
  EXPECT_EQ(o[2], -4);
  EXPECT_EQ(o[3], 15);
  EXPECT_EQ(o[4], -21);
  EXPECT_EQ(o[5], 1);
  EXPECT_EQ(o[6], 0xfff9);
  EXPECT_EQ(o[7], 3);
}

TEST(ScalarTest, InfiniteLoopTimesOut) {
  std::string text = "tpux 1\nkernel spin {\nl:\n  jmp l\n}\nlaunch spin\n";
  SimOptions opts;
  opts.max_steps = 100000;
  RunReport r = RunTpux(text, {}, opts).report;
  EXPECT_EQ(r.status, RunStatus::kTimeout);
  EXPECT_EQ(r.kernel, "spin");
  EXPECT_EQ(r.steps, 100000);
  EXPECT_NE(r.message.find("step limit"), std::string::npos);
  opts.max_steps = 1 << 30;
  opts.max_cycles = 5000;
  r = RunTpux(text, {}, opts).report;
  EXPECT_EQ(r.status, RunStatus::kTimeout);
  EXPECT_NE(r.message.find("cycle limit"), std::string::npos);
}

TEST(ScalarTest, TrapsAndDivisionByZero) {
  RunReport r =
      RunTpux("tpux 1\nkernel k {\n  trap 42\n}\nlaunch k\n", {}).report;
  EXPECT_EQ(r.status, RunStatus::kTrap);
  EXPECT_NE(r.message.find("trap 42"), std::string::npos);
  r = RunTpux(
          "tpux 1\nkernel k {\n  simm s1, 0\n  sdiv s2, s2, s1\n}\nlaunch k\n",
          {})
          .report;
  EXPECT_EQ(r.status, RunStatus::kTrap);
  EXPECT_EQ(r.instruction_index, 1);
  EXPECT_EQ(r.instruction, "sdiv s2, s2, s1");
}

TEST(ScalarTest, MatmulWithoutWeightsTraps) {
  RunReport r = RunTpux(
                    "tpux 1\nkernel k {\n  vimm.f32 v0, 1\n  mxwpush v0, 0\n"
                    "  mxmatmul v1, v0\n}\nlaunch k\n",
                    {})
                    .report;
  EXPECT_EQ(r.status, RunStatus::kTrap);
  EXPECT_NE(r.message.find("pushed mask 0x0001"), std::string::npos)
      << r.message;
}

}  // namespace
}  // namespace trench::tpu
