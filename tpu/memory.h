// The machine's memories with per-byte shadow state.
//
// Each address space (HBM, VMEM, SMEM) is a flat byte array plus a shadow
// byte per data byte. Accesses are checked as byte ranges (eight shadow bytes
// per step), so a check costs about n/8 loads for an n-byte access. HBM holds
// named buffers, each surrounded by guard zones; HbmLayout maps addresses
// back to buffers for error messages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tpu/isa.h"

namespace trench::tpu {

#define TRENCH_TPU_MEMORY_ERRORS(X)                          \
  X(kNone, "none")                                           \
  X(kOutOfBounds, "out_of_bounds")                           \
  X(kUninitializedRead, "uninitialized_read")                \
  X(kReadOnlyWrite, "read_only_write")                       \
  X(kGuardZoneCorruption, "guard_zone_corruption")           \
  X(kVmemOverCapacity, "vmem_over_capacity")                 \
  X(kDmaInFlight, "dma_in_flight_access")                    \
  X(kUnsynchronizedPeerAccess, "unsynchronized_peer_access") \
  X(kUninitializedOutput, "uninitialized_output")

enum class MemoryErrorKind : uint8_t {
#define X(e, name) e,
  TRENCH_TPU_MEMORY_ERRORS(X)
#undef X
};
std::string_view MemoryErrorKindName(MemoryErrorKind k);

// Shadow byte values. Bit 0 = readable, bit 1 = writable.
enum Shadow : uint8_t {
  kUnallocated = 0x00,
  kReadOnly = 0x01,       // Initialized, read-only (inputs, constants).
  kUninitialized = 0x02,  // Writable, not yet written.
  kInitialized = 0x03,
  kGuard = 0x10,     // Guard zone around an HBM buffer.
  kInFlight = 0x20,  // Destination of a DMA not yet waited for.
  // Written by a peer chip's rdmastart whose flag signal this chip has not
  // consumed yet (flagwait). The writer's chip index is in bits 2..6.
  kPeerWritten = 0x80,
};

inline uint8_t PeerWrittenShadow(int writer) {
  return static_cast<uint8_t>(kPeerWritten | (writer << 2));
}
inline bool IsPeerWritten(uint8_t shadow) {
  return (shadow & kPeerWritten) != 0;
}
// REQUIRES: IsPeerWritten(shadow).
inline int PeerWriter(uint8_t shadow) { return (shadow >> 2) & 0x1f; }

// One flat address space. Not thread-safe.
class Region {
 public:
  // Resizes to `size` bytes, all kUnallocated (data zeroed).
  void Reset(int64_t size);
  int64_t size() const { return static_cast<int64_t>(data_.size()); }
  uint8_t* data() { return data_.data(); }
  const uint8_t* data() const { return data_.data(); }
  uint8_t shadow(int64_t addr) const { return shadow_[addr]; }

  // Returns true when every byte of [addr, addr+n) is readable (resp.
  // writable). On failure sets *kind and *bad (first offending address;
  // `addr` itself when the range leaves the space).
  bool CheckRead(int64_t addr, int64_t n, MemoryErrorKind* kind,
                 int64_t* bad) const;
  bool CheckWrite(int64_t addr, int64_t n, MemoryErrorKind* kind,
                  int64_t* bad) const;
  // Sets the shadow of [addr, addr+n) to `s` (a Shadow value or
  // PeerWrittenShadow). REQUIRES: the range is inside.
  void SetShadow(int64_t addr, int64_t n, uint8_t s);
  // First address in [addr, addr+n) whose shadow is not `s`, or -1.
  int64_t FindNot(int64_t addr, int64_t n, Shadow s) const;

 private:
  bool Check(int64_t addr, int64_t n, uint8_t bit, bool write,
             MemoryErrorKind* kind, int64_t* bad) const;
  std::vector<uint8_t> data_;
  std::vector<uint8_t> shadow_;
};

struct HbmBuffer {
  std::string name;
  int64_t base = 0;
  int64_t size = 0;
  bool read_only = false;
};

// Places buffers in HBM: the first at `guard_bytes` * 2, each preceded and
// followed by a guard zone of `guard_bytes`, bases aligned to 512 bytes.
class HbmLayout {
 public:
  HbmLayout() = default;
  HbmLayout(const std::vector<HbmBuffer>& buffers, int64_t guard_bytes);
  const std::vector<HbmBuffer>& buffers() const { return buffers_; }
  int64_t total_size() const { return total_; }
  int64_t guard_bytes() const { return guard_; }
  // Describes `addr` relative to the nearest buffer, e.g. "12 bytes past the
  // end of buffer 'y' (size 8000)" or "offset 40 of buffer 'x'".
  std::string Describe(int64_t addr) const;
  // Shapes the shadow of `hbm`: guards, buffers uninitialized (read-only
  // buffers are left for the caller to fill and mark).
  void InitShadow(Region* hbm) const;

 private:
  std::vector<HbmBuffer> buffers_;
  int64_t guard_ = 0;
  int64_t total_ = 0;
};

}  // namespace trench::tpu
