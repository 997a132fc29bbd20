#include "tpu/cost_model.h"

#include <gtest/gtest.h>

#include "tests/tpu/tpu_test_util.h"

namespace trench::tpu {
namespace {

TEST(CostModelTest, TotalsForASmallProgram) {
  // 2 scalar ops, 1 DMA in (4096 B) + wait, 1 vld, 1 vexp, 1 vadd, 1 vst,
  // 1 DMA out + wait, launched twice.
  std::string text = R"(tpux 1
buffer x input 0 f32[1024] bytes=4096
buffer y output 0 f32[1024] bytes=4096
kernel k {
  .vmem 8192
  saddr s1, x
  saddr s2, y
  dmastart vmem[0], hbm[s1], 4096, 0
  dmawait 0
  vld.f32 v0, vmem[0]
  vexp.f32 v1, v0
  vadd.f32 v1, v1, v0
  vst.f32 vmem[4096], v1
  dmastart hbm[s2], vmem[4096], 4096, 0
  dmawait 0
}
launch k
launch k
)";
  SimOptions opts;
  RunResult r = testing::RunTpux(text, {std::vector<uint8_t>(4096)}, opts);
  ASSERT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
  const CostParams& p = opts.cost;
  auto c = [&](CostClass k) { return p.cycles[static_cast<int>(k)]; };
  const int64_t dma = p.dma_setup_cycles + 4096 / p.hbm_bytes_per_cycle;
  // Issue: saddr x2, dmastart; the wait stalls to the DMA's completion.
  int64_t t = 2 * c(CostClass::kScalarOp) + c(CostClass::kDmaOp);
  int64_t done = t + dma;
  t = std::max(t + c(CostClass::kDmaOp), done);
  t += c(CostClass::kVectorMem) + c(CostClass::kTranscendentalOp) +
       c(CostClass::kVectorOp) + c(CostClass::kVectorMem) +
       c(CostClass::kDmaOp);
  done = t + dma;
  t = std::max(t + c(CostClass::kDmaOp), done);
  const CostReport& cr = r.report.cost;
  EXPECT_EQ(cr.total.cycles, 2 * t);
  EXPECT_EQ(cr.total.instructions, 20);
  EXPECT_EQ(cr.total.bytes_hbm_to_vmem, 8192);
  EXPECT_EQ(cr.total.bytes_vmem_to_hbm, 8192);
  EXPECT_EQ(cr.total.dma_transfers, 4);
  EXPECT_EQ(cr.total.instructions_by_class[static_cast<int>(
                CostClass::kTranscendentalOp)],
            2);
  ASSERT_EQ(cr.per_kernel.size(), 1u);
  EXPECT_EQ(cr.per_kernel[0].launches, 2);
  EXPECT_EQ(cr.mxu_utilization, 0.0);
  EXPECT_GT(cr.total.dma_stall_cycles, 0);
  EXPECT_NE(CostReportToString(cr).find("k: launches 2"), std::string::npos);
}

TEST(CostModelTest, TransferCyclesAndMerging) {
  CostParams p;
  EXPECT_EQ(DmaTransferCycles(p, MemSpace::kHbm, MemSpace::kVmem, 257),
            p.dma_setup_cycles + 2);
  EXPECT_EQ(DmaTransferCycles(p, MemSpace::kVmem, MemSpace::kVmem, 512),
            p.dma_setup_cycles + 1);
  KernelStats a, b;
  a.kernel = "a";
  a.cycles = 10;
  a.mxu_busy_cycles = 5;
  b.kernel = "b";
  b.cycles = 30;
  CostReport r = MakeCostReport({a, b, a});
  EXPECT_EQ(r.total.cycles, 50);
  EXPECT_DOUBLE_EQ(r.mxu_utilization, 10.0 / 50.0);
  ASSERT_EQ(r.per_kernel.size(), 2u);
  EXPECT_EQ(r.per_kernel[0].cycles, 20);
}

}  // namespace
}  // namespace trench::tpu
