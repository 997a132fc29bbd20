// The cost model: cycles per instruction class, DMA setup plus bytes over
// bandwidth, matrix-unit utilization. The simulator fills a CostReport that
// a report.json writer serializes; nothing here depends on the simulator.
//
// Timing model: one instruction issues per cycle slot; an instruction costs
// its class's cycles (x wide_factor for 64-bit element types, which the
// machine emulates with register pairs). DMAs run on one engine in the
// background: a transfer starts when both the issue happens and the engine is
// free, takes dma_setup_cycles + ceil(bytes / bandwidth), and `dmawait`
// stalls until the transfers it waits for are done.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tpu/isa.h"

namespace trench::tpu {

struct CostParams {
  // Indexed by CostClass: scalar, scalar_mem, control, vector, vector_mem,
  // transcendental, cross_lane, transpose, weight_push, matmul_pass, dma.
  std::array<int64_t, kNumCostClasses> cycles = {1, 2,   1, 1, 2, 8,
                                                 4, 128, 8, 8, 4};
  int64_t wide_factor = 4;  // 64-bit element ops.
  int64_t dma_setup_cycles = 64;
  int64_t hbm_bytes_per_cycle = 256;    // Any transfer touching HBM.
  int64_t local_bytes_per_cycle = 512;  // VMEM/SMEM <-> VMEM/SMEM.
};

// Cycles the DMA engine is busy for one transfer of `bytes`.
int64_t DmaTransferCycles(const CostParams& p, MemSpace src, MemSpace dst,
                          int64_t bytes);

struct KernelStats {
  std::string kernel;
  int64_t launches = 0;
  int64_t instructions = 0;
  int64_t cycles = 0;
  std::array<int64_t, kNumCostClasses> instructions_by_class{};
  int64_t bytes_hbm_to_vmem = 0;
  int64_t bytes_vmem_to_hbm = 0;
  int64_t bytes_other = 0;  // hbm<->hbm, vmem<->vmem, anything with smem.
  int64_t dma_transfers = 0;
  int64_t dma_stall_cycles = 0;
  int64_t matmul_passes = 0;
  int64_t mxu_busy_cycles = 0;

  // Adds `o`'s counters (not the name) into this.
  void Add(const KernelStats& o);
};

struct CostReport {
  KernelStats total;           // total.kernel is empty.
  double mxu_utilization = 0;  // mxu_busy_cycles / cycles, 0 when no cycles.
  std::vector<KernelStats> per_kernel;  // One entry per kernel name, in
                                        // first-launch order.
};

// Builds a report from per-launch stats (several launches of one kernel are
// merged).
CostReport MakeCostReport(const std::vector<KernelStats>& launches);

// A short human-readable multi-line summary.
std::string CostReportToString(const CostReport& r);

}  // namespace trench::tpu
