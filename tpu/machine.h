// Internal to tpu/: the architectural state the units operate on, and the
// entry points of the units. The simulator owns one Machine per loaded
// executable and reuses it across runs (no allocation per instruction).
//
// Unit functions return true on success. On a memory error or trap they fill
// Machine::fault and return false; the simulator then stops and reports.
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
};

inline constexpr int kMaxDmasInFlight = 64;

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
  HbmLayout layout;
  int64_t vmem_capacity = 0;
  int64_t vmem_declared = 0;         // Current kernel's .vmem.
  std::vector<int64_t> symbol_addr;  // Current kernel's saddr targets.
  std::vector<PendingDma> dmas;      // Capacity kMaxDmasInFlight.
  int64_t dma_free_cycle = 0;

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
  bool Trap(std::string message);
};

bool ExecScalar(Machine& M, const Instr& in, const Kernel& k, int64_t* pc);
bool ExecVector(Machine& M, const Instr& in);
bool ExecVectorMemory(Machine& M, const Instr& in);
bool ExecTranscendental(Machine& M, const Instr& in);
bool ExecCrossLane(Machine& M, const Instr& in);
bool ExecMatrix(Machine& M, const Instr& in);
bool ExecDma(Machine& M, const Instr& in);
// Completes every in-flight DMA on `sem` (all when sem < 0): copies the data,
// marks destinations initialized, advances M.cycle past their completion.
// Returns false (trap) when sem >= 0 has nothing in flight.
bool WaitDmas(Machine& M, int sem);

}  // namespace trench::tpu
