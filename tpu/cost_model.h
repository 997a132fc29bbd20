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
//
// In a slice, each chip has its own clock. A chip's outgoing link carries
// one transfer at a time: a remote DMA of `bytes` issued at cycle t leaves
// the link at max(t, link free) + ceil(bytes / link_bytes_per_cycle) (the
// sender's semaphore completes then) and lands hops *
// link_latency_cycles later, when it increments the peer's flag; a
// flagsignal lands after the hops' latency, behind the link's queue.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tpu/isa.h"

namespace trench::tpu {

struct CostParams {
  // Indexed by CostClass: scalar, scalar_mem, control, vector, vector_mem,
  // transcendental, cross_lane, transpose, weight_push, matmul_pass, dma,
  // link.
  std::array<int64_t, kNumCostClasses> cycles = {1, 2,   1, 1, 2, 8,
                                                 4, 128, 8, 8, 4, 4};
  int64_t wide_factor = 4;  // 64-bit element ops.
  int64_t dma_setup_cycles = 64;
  int64_t hbm_bytes_per_cycle = 256;    // Any transfer touching HBM.
  int64_t local_bytes_per_cycle = 512;  // VMEM/SMEM <-> VMEM/SMEM.
  int64_t link_latency_cycles = 200;    // Per hop between chips.
  int64_t link_bytes_per_cycle = 64;    // A chip's outgoing link.
};

// Cycles the DMA engine is busy for one transfer of `bytes`.
int64_t DmaTransferCycles(const CostParams& p, MemSpace src, MemSpace dst,
                          int64_t bytes);
// Cycles a chip's outgoing link is busy sending `bytes`.
int64_t LinkSendCycles(const CostParams& p, int64_t bytes);

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
  // Slice: remote DMAs and flagsignals sent, bytes over the links, cycles
  // stalled in flagwait for signals still on the way.
  int64_t link_transfers = 0;
  int64_t link_signals = 0;
  int64_t link_bytes_sent = 0;
  int64_t flag_stall_cycles = 0;

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
