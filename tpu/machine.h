// Internal to tpu/: the architectural state the units operate on, and the
// entry points of the units. Each chip of a slice owns one Machine, reused
// across runs (no allocation per instruction).
//
// Unit functions return true on success. On a memory error or trap they fill
// Machine::fault and return false; the chip then stops and reports. The
// link unit may also return false with Machine::pause set: the instruction
// completed its issue and the chip hands control back to the slice's
// scheduler (to wait on a flag, or to let the peers see what it sent).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpu/cost_model.h"
#include "tpu/isa.h"
#include "tpu/memory.h"

namespace trench::tpu {

struct Fault {
  bool is_trap = false;  // Otherwise a memory error.
  MemoryErrorKind kind = MemoryErrorKind::kNone;
  MemSpace space = MemSpace::kHbm;
  int64_t address = -1;
  std::string message;
};

class Interconnect;

struct PendingDma {
  int sem = 0;
  MemSpace dst_space = MemSpace::kVmem;
  MemSpace src_space = MemSpace::kHbm;
  int64_t dst = 0;
  int64_t src = 0;
  int64_t chunk = 0;
  int ndims = 0;
  int64_t count[kMaxDmaDims] = {1, 1, 1};
  int64_t sstride[kMaxDmaDims] = {0, 0, 0};
  int64_t dstride[kMaxDmaDims] = {0, 0, 0};
  int64_t done_cycle = 0;
  int transfer = -1;  // rdmastart: its Interconnect transfer, else -1.
};

inline constexpr int kMaxDmasInFlight = 64;

// Calls f(src_offset, dst_offset) for every chunk of `p`, innermost dim
// fastest; stops early (returning false) when f returns false.
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

// Why a link instruction handed control back to the scheduler.
enum class Pause : uint8_t {
  kNone,
  kYield,     // Sent something: let the slice schedule the peers.
  kFlagWait,  // Blocked in flagwait on wait_flag until wait_count.
};

struct Machine {
  // Registers. 64-bit values live in even/odd pairs: low word in vN, high
  // word in vN+1.
  int64_t s[kNumSregs] = {};
  alignas(64) uint32_t v[kNumVregs][kVregElems];
  alignas(64) uint8_t m[kNumMregs][kVregElems];
  // Matrix unit: the weight tile (bf16 values held as f32), which row groups
  // of 8 were pushed since the kernel started.
  alignas(64) float mxu_w[kMxuDim * kMxuDim];
  uint32_t mxu_loaded = 0;
  // Scratch for the transposer (16 registers).
  alignas(64) uint32_t xpose_tmp[16 * kVregElems];

  Region hbm, vmem, smem;
  const HbmLayout* layout = nullptr;  // The same on every chip.
  int64_t vmem_capacity = 0;
  int64_t vmem_declared = 0;             // Current kernel's .vmem.
  const int64_t* symbol_addr = nullptr;  // Current kernel's saddr targets.
  std::vector<PendingDma> dmas;          // Capacity kMaxDmasInFlight.
  int64_t dma_free_cycle = 0;

  // The slice: this chip's index, the chip count, what they share.
  int chip = 0;
  int nchips = 1;
  Interconnect* ici = nullptr;
  Pause pause = Pause::kNone;
  int wait_flag = 0;
  int64_t wait_count = 0;

  const CostParams* params = nullptr;
  KernelStats* stats = nullptr;  // Current launch.
  int64_t cycle = 0;

  Fault fault;

  Region& region(MemSpace sp) {
    return sp == MemSpace::kHbm ? hbm : sp == MemSpace::kVmem ? vmem : smem;
  }
  // Effective address; wraps (two's complement) rather than overflowing.
  int64_t Addr(const MemRef& r) const {
    return AddWrap(r.base >= 0 ? s[r.base] : 0, r.offset);
  }
  static int64_t AddWrap(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) +
                                static_cast<uint64_t>(b));
  }
  // Range checks; on failure record a memory fault and return false.
  bool CheckRead(MemSpace sp, int64_t addr, int64_t n);
  bool CheckWrite(MemSpace sp, int64_t addr, int64_t n);
  // Checked copies; writes mark the bytes initialized.
  bool Read(MemSpace sp, int64_t addr, int64_t n, void* out);
  bool Write(MemSpace sp, int64_t addr, int64_t n, const void* in);
  // Records a memory fault (message built here, off the hot path).
  bool MemFault(MemoryErrorKind kind, MemSpace sp, int64_t addr, int64_t n,
                bool write);
  // As above for an access by this chip to chip `peer`'s HBM (rdmastart's
  // destination): the fault is this chip's, the bytes the peer's.
  bool PeerMemFault(MemoryErrorKind kind, const Machine& peer, int64_t addr,
                    int64_t n);
  bool Trap(std::string message);
};

bool ExecScalar(Machine& M, const Instr& in, const Kernel& k, int64_t* pc);
bool ExecVector(Machine& M, const Instr& in);
bool ExecVectorMemory(Machine& M, const Instr& in);
bool ExecTranscendental(Machine& M, const Instr& in);
bool ExecCrossLane(Machine& M, const Instr& in);
bool ExecMatrix(Machine& M, const Instr& in);
bool ExecDma(Machine& M, const Instr& in);
bool ExecLink(Machine& M, const Instr& in);
// Issues dmastart, or rdmastart to chip `peer` (REQUIRES: a valid peer).
bool StartDma(Machine& M, const Instr& in, Machine* peer);
// Ends the flagwait M is blocked in at cycle `wake` (when its signals have
// landed): consumes them, counts the stall.
void FinishFlagWait(Machine& M, int64_t wake);
// Completes every in-flight DMA on `sem` (all when sem < 0): copies the data,
// marks destinations initialized, advances M.cycle past their completion.
// Returns false (trap) when sem >= 0 has nothing in flight.
bool WaitDmas(Machine& M, int sem);

}  // namespace trench::tpu
