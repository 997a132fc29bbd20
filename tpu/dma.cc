// The DMA engine: multi-dimensional strided copies between any two memories.
// `dmastart` checks every chunk (source readable, destination writable) at
// issue and marks the destination in flight; reading or writing those bytes
// before the matching `dmawait` is a memory error (dma_in_flight_access).
// The data moves at `dmawait` (or never, if the kernel forgets to wait,
// which is a trap at kernel end). `rdmastart` (the link unit) shares the
// issue path; its destination is a peer chip's HBM (interconnect.h).
#include <algorithm>
#include <cstring>

#include "tpu/interconnect.h"
#include "tpu/machine.h"

namespace trench::tpu {
namespace {

constexpr int64_t kMaxDmaBytes = int64_t{1} << 40;

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

// rdmastart's destination check, against the peer's shadow.
bool CheckPeerWrite(Machine& M, const Machine& peer, int64_t addr, int64_t n) {
  MemoryErrorKind kind;
  int64_t bad;
  if (peer.hbm.CheckWrite(addr, n, &kind, &bad)) return true;
  return M.PeerMemFault(kind, peer, bad, n);
}

void Complete(Machine& M, const PendingDma& p) {
  if (p.transfer >= 0) {
    M.ici->SenderDone(p.transfer);
  } else {
    Region& src = M.region(p.src_space);
    Region& dst = M.region(p.dst_space);
    ForEachChunk(p, [&](int64_t so, int64_t dof) {
      std::memmove(dst.data() + p.dst + dof, src.data() + p.src + so, p.chunk);
      dst.SetShadow(p.dst + dof, p.chunk, kInitialized);
      return true;
    });
  }
  if (p.done_cycle > M.cycle) {
    M.stats->dma_stall_cycles += p.done_cycle - M.cycle;
    M.cycle = p.done_cycle;
  }
}

}  // namespace

bool StartDma(Machine& M, const Instr& in, Machine* peer) {
  if (static_cast<int>(M.dmas.size()) >= kMaxDmasInFlight) {
    return M.Trap("more than 64 DMAs in flight");
  }
  // dmastart: chunk, sem, triples; rdmastart: chunk, sem, flag, triples.
  const int dims_at = peer != nullptr ? 3 : 2;
  PendingDma p;
  p.dst_space = in.mem[0].space;
  p.src_space = in.mem[1].space;
  p.dst = M.Addr(in.mem[0]);
  p.src = M.Addr(in.mem[1]);
  p.chunk = in.imm[0];
  p.sem = static_cast<int>(in.imm[1]);
  p.ndims = (in.nimm - dims_at) / 3;
  int64_t bytes = p.chunk;
  for (int d = 0; d < p.ndims; ++d) {
    p.count[d] = in.imm[dims_at + 3 * d];
    p.sstride[d] = in.imm[dims_at + 1 + 3 * d];
    p.dstride[d] = in.imm[dims_at + 2 + 3 * d];
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
    const int64_t dst = Machine::AddWrap(p.dst, dof);
    return M.CheckRead(p.src_space, Machine::AddWrap(p.src, so), p.chunk) &&
           (peer != nullptr ? CheckPeerWrite(M, *peer, dst, p.chunk)
                            : M.CheckWrite(p.dst_space, dst, p.chunk));
  });
  if (!ok) return false;
  Region& dst = peer != nullptr ? peer->hbm : M.region(p.dst_space);
  const uint8_t mark = peer != nullptr ? PeerWrittenShadow(M.chip)
                                       : static_cast<uint8_t>(kInFlight);
  ForEachChunk(p, [&](int64_t, int64_t dof) {
    dst.SetShadow(p.dst + dof, p.chunk, mark);
    return true;
  });
  if (peer != nullptr) {
    M.ici->SendTransfer(M, peer->chip, static_cast<int>(in.imm[2]), bytes, &p);
    M.stats->link_transfers++;
    M.stats->link_bytes_sent += bytes;
  } else {
    const int64_t start = std::max(M.cycle, M.dma_free_cycle);
    p.done_cycle =
        start + DmaTransferCycles(*M.params, p.src_space, p.dst_space, bytes);
    M.dma_free_cycle = p.done_cycle;
    CountBytes(M, p, bytes);
  }
  M.dmas.push_back(p);
  return true;
}

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
  return StartDma(M, in, nullptr);
}

}  // namespace trench::tpu
