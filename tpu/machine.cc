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

bool Machine::MemFault(MemoryErrorKind kind, MemSpace sp, int64_t addr,
                       int64_t n, bool write) {
  fault = Fault();
  fault.kind = kind;
  fault.space = sp;
  fault.address = addr;
  std::string where;
  switch (sp) {
    case MemSpace::kHbm:
      where = layout.Describe(addr);
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
                  " address " + std::to_string(addr) + ": " + where;
  return false;
}

bool Machine::Trap(std::string message) {
  fault = Fault();
  fault.is_trap = true;
  fault.message = std::move(message);
  return false;
}

}  // namespace trench::tpu
