#include "tpu/cost_model.h"

namespace trench::tpu {

int64_t DmaTransferCycles(const CostParams& p, MemSpace src, MemSpace dst,
                          int64_t bytes) {
  bool hbm = src == MemSpace::kHbm || dst == MemSpace::kHbm;
  int64_t bw = hbm ? p.hbm_bytes_per_cycle : p.local_bytes_per_cycle;
  if (bw <= 0) bw = 1;
  return p.dma_setup_cycles + (bytes + bw - 1) / bw;
}

int64_t LinkSendCycles(const CostParams& p, int64_t bytes) {
  const int64_t bw = p.link_bytes_per_cycle > 0 ? p.link_bytes_per_cycle : 1;
  return (bytes + bw - 1) / bw;
}

void KernelStats::Add(const KernelStats& o) {
  launches += o.launches;
  instructions += o.instructions;
  cycles += o.cycles;
  for (int i = 0; i < kNumCostClasses; ++i) {
    instructions_by_class[i] += o.instructions_by_class[i];
  }
  bytes_hbm_to_vmem += o.bytes_hbm_to_vmem;
  bytes_vmem_to_hbm += o.bytes_vmem_to_hbm;
  bytes_other += o.bytes_other;
  dma_transfers += o.dma_transfers;
  dma_stall_cycles += o.dma_stall_cycles;
  matmul_passes += o.matmul_passes;
  mxu_busy_cycles += o.mxu_busy_cycles;
  link_transfers += o.link_transfers;
  link_signals += o.link_signals;
  link_bytes_sent += o.link_bytes_sent;
  flag_stall_cycles += o.flag_stall_cycles;
}

CostReport MakeCostReport(const std::vector<KernelStats>& launches) {
  CostReport r;
  for (const KernelStats& s : launches) {
    r.total.Add(s);
    KernelStats* slot = nullptr;
    for (KernelStats& k : r.per_kernel) {
      if (k.kernel == s.kernel) slot = &k;
    }
    if (slot == nullptr) {
      r.per_kernel.push_back(KernelStats{});
      slot = &r.per_kernel.back();
      slot->kernel = s.kernel;
    }
    slot->Add(s);
  }
  if (r.total.cycles > 0) {
    r.mxu_utilization = static_cast<double>(r.total.mxu_busy_cycles) /
                        static_cast<double>(r.total.cycles);
  }
  return r;
}

std::string CostReportToString(const CostReport& r) {
  const KernelStats& t = r.total;
  std::string s = "cycles " + std::to_string(t.cycles) + ", instructions " +
                  std::to_string(t.instructions) + ", hbm->vmem " +
                  std::to_string(t.bytes_hbm_to_vmem) + " B, vmem->hbm " +
                  std::to_string(t.bytes_vmem_to_hbm) + " B, matmul passes " +
                  std::to_string(t.matmul_passes) + ", mxu utilization " +
                  std::to_string(r.mxu_utilization) + "\n";
  for (const KernelStats& k : r.per_kernel) {
    s += "  " + k.kernel + ": launches " + std::to_string(k.launches) +
         ", cycles " + std::to_string(k.cycles) + ", instructions " +
         std::to_string(k.instructions) + "\n";
  }
  return s;
}

}  // namespace trench::tpu
