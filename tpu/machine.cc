#include "tpu/machine.h"

#include <cstring>

namespace trench::tpu {

bool Machine::CheckRead(MemSpace sp, int64_t addr, int64_t n) {
  MemoryErrorKind kind;
  int64_t bad;
  if (region(sp).CheckRead(addr, n, &kind, &bad)) return true;
  return MemFault(kind, sp, bad, n, false);
}

bool Machine::CheckWrite(MemSpace sp, int64_t addr, int64_t n) {
  MemoryErrorKind kind;
  int64_t bad;
  if (region(sp).CheckWrite(addr, n, &kind, &bad)) return true;
  return MemFault(kind, sp, bad, n, true);
}

bool Machine::Read(MemSpace sp, int64_t addr, int64_t n, void* out) {
  if (!CheckRead(sp, addr, n)) return false;
  std::memcpy(out, region(sp).data() + addr, n);
  return true;
}

bool Machine::Write(MemSpace sp, int64_t addr, int64_t n, const void* in) {
  if (!CheckWrite(sp, addr, n)) return false;
  std::memcpy(region(sp).data() + addr, in, n);
  region(sp).SetShadow(addr, n, kInitialized);
  return true;
}

namespace {

// "; written by chip 3 (rdmastart), not yet synchronized by a flagwait"
// when the faulting byte is a peer's unsynchronized write.
std::string PeerWriterNote(MemoryErrorKind kind, const Region& r,
                           int64_t addr) {
  if (kind != MemoryErrorKind::kUnsynchronizedPeerAccess || addr < 0 ||
      addr >= r.size() || !IsPeerWritten(r.shadow(addr))) {
    return "";
  }
  return "; written by chip " + std::to_string(PeerWriter(r.shadow(addr))) +
         " (rdmastart), not yet synchronized by a flagwait";
}

}  // namespace

bool Machine::PeerMemFault(MemoryErrorKind kind, const Machine& peer,
                           int64_t addr, int64_t n) {
  fault = Fault();
  fault.kind = kind;
  fault.space = MemSpace::kHbm;
  fault.address = addr;
  fault.message = std::string(MemoryErrorKindName(kind)) +
                  ": remote write (rdmastart) of " + std::to_string(n) +
                  " bytes touching hbm address " + std::to_string(addr) +
                  " of chip " + std::to_string(peer.chip) + ": " +
                  layout->Describe(addr) + PeerWriterNote(kind, peer.hbm, addr);
  return false;
}

bool Machine::MemFault(MemoryErrorKind kind, MemSpace sp, int64_t addr,
                       int64_t n, bool write) {
  fault = Fault();
  fault.kind = kind;
  fault.space = sp;
  fault.address = addr;
  std::string where;
  switch (sp) {
    case MemSpace::kHbm:
      where = layout->Describe(addr);
      break;
    case MemSpace::kVmem:
      where = "the kernel declares .vmem " + std::to_string(vmem_declared) +
              " (capacity " + std::to_string(vmem_capacity) + ")";
      break;
    case MemSpace::kSmem:
      where = "SMEM size " + std::to_string(smem.size());
      break;
  }
  fault.message = std::string(MemoryErrorKindName(kind)) + ": " +
                  (write ? "write" : "read") + " of " + std::to_string(n) +
                  " bytes touching " + std::string(MemSpaceName(sp)) +
                  " address " + std::to_string(addr) + ": " + where +
                  PeerWriterNote(kind, region(sp), addr);
  return false;
}

bool Machine::Trap(std::string message) {
  fault = Fault();
  fault.is_trap = true;
  fault.message = std::move(message);
  return false;
}

}  // namespace trench::tpu
