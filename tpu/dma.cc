// The DMA engine: multi-dimensional strided copies between any two memories.
// `dmastart` checks every chunk (source readable, destination writable) at
// issue and marks the destination in flight; reading or writing those bytes
// before the matching `dmawait` is a memory error (dma_in_flight_access).
// The data moves at `dmawait` (or never, if the kernel forgets to wait,
// which is a trap at kernel end).
#include <algorithm>
#include <cstring>

#include "tpu/machine.h"

namespace trench::tpu {
namespace {

constexpr int64_t kMaxDmaBytes = int64_t{1} << 40;

// Calls f(src_offset, dst_offset) for every chunk, innermost dim fastest.
template <typename F>
bool ForEachChunk(const PendingDma& p, F f) {
  int64_t i[kMaxDmaDims] = {0, 0, 0};
  while (true) {
    int64_t so = 0, dof = 0;
    for (int d = 0; d < p.ndims; ++d) {
      so += i[d] * p.sstride[d];
      dof += i[d] * p.dstride[d];
    }
    if (!f(so, dof)) return false;
    int d = 0;
    for (; d < p.ndims; ++d) {
      if (++i[d] < p.count[d]) break;
      i[d] = 0;
    }
    if (d == p.ndims) return true;
  }
}

void CountBytes(Machine& M, const PendingDma& p, int64_t bytes) {
  KernelStats& st = *M.stats;
  st.dma_transfers++;
  if (p.src_space == MemSpace::kHbm && p.dst_space == MemSpace::kVmem) {
    st.bytes_hbm_to_vmem += bytes;
  } else if (p.src_space == MemSpace::kVmem && p.dst_space == MemSpace::kHbm) {
    st.bytes_vmem_to_hbm += bytes;
  } else {
    st.bytes_other += bytes;
  }
}

bool Start(Machine& M, const Instr& in) {
  if (static_cast<int>(M.dmas.size()) >= kMaxDmasInFlight) {
    return M.Trap("more than 64 DMAs in flight");
  }
  PendingDma p;
  p.dst_space = in.mem[0].space;
  p.src_space = in.mem[1].space;
  p.dst = M.Addr(in.mem[0]);
  p.src = M.Addr(in.mem[1]);
  p.chunk = in.imm[0];
  p.sem = static_cast<int>(in.imm[1]);
  p.ndims = (in.nimm - 2) / 3;
  int64_t bytes = p.chunk;
  for (int d = 0; d < p.ndims; ++d) {
    p.count[d] = in.imm[2 + 3 * d];
    p.sstride[d] = in.imm[3 + 3 * d];
    p.dstride[d] = in.imm[4 + 3 * d];
    // Bounds keep every offset sum far from int64 overflow.
    const int64_t stride =
        std::max(std::abs(p.sstride[d] / 2), std::abs(p.dstride[d] / 2));
    if (p.count[d] > kMaxDmaBytes / bytes || stride > kMaxDmaBytes ||
        (stride > 0 && p.count[d] > kMaxDmaBytes / stride)) {
      return M.MemFault(MemoryErrorKind::kOutOfBounds, p.dst_space, p.dst,
                        bytes, true);
    }
    bytes *= p.count[d];
  }
  bool ok = ForEachChunk(p, [&](int64_t so, int64_t dof) {
    return M.CheckRead(p.src_space, Machine::AddWrap(p.src, so), p.chunk) &&
           M.CheckWrite(p.dst_space, Machine::AddWrap(p.dst, dof), p.chunk);
  });
  if (!ok) return false;
  Region& dst = M.region(p.dst_space);
  ForEachChunk(p, [&](int64_t, int64_t dof) {
    dst.SetShadow(p.dst + dof, p.chunk, kInFlight);
    return true;
  });
  const int64_t start = std::max(M.cycle, M.dma_free_cycle);
  p.done_cycle =
      start + DmaTransferCycles(*M.params, p.src_space, p.dst_space, bytes);
  M.dma_free_cycle = p.done_cycle;
  CountBytes(M, p, bytes);
  M.dmas.push_back(p);
  return true;
}

void Complete(Machine& M, const PendingDma& p) {
  Region& src = M.region(p.src_space);
  Region& dst = M.region(p.dst_space);
  ForEachChunk(p, [&](int64_t so, int64_t dof) {
    std::memmove(dst.data() + p.dst + dof, src.data() + p.src + so, p.chunk);
    dst.SetShadow(p.dst + dof, p.chunk, kInitialized);
    return true;
  });
  if (p.done_cycle > M.cycle) {
    M.stats->dma_stall_cycles += p.done_cycle - M.cycle;
    M.cycle = p.done_cycle;
  }
}

}  // namespace

bool WaitDmas(Machine& M, int sem) {
  bool any = false;
  size_t keep = 0;
  for (size_t i = 0; i < M.dmas.size(); ++i) {
    if (sem < 0 || M.dmas[i].sem == sem) {
      Complete(M, M.dmas[i]);
      any = true;
    } else {
      M.dmas[keep++] = M.dmas[i];
    }
  }
  M.dmas.resize(keep);
  if (!any && sem >= 0) {
    return M.Trap("dmawait on semaphore " + std::to_string(sem) +
                  " with no DMA in flight (the machine would hang)");
  }
  return true;
}

bool ExecDma(Machine& M, const Instr& in) {
  if (in.op == Opcode::kDmaWait)
    return WaitDmas(M, static_cast<int>(in.imm[0]));
  return Start(M, in);
}

}  // namespace trench::tpu
