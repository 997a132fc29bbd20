#include "tpu/memory.h"

#include <cstring>

namespace trench::tpu {

std::string_view MemoryErrorKindName(MemoryErrorKind k) {
  static constexpr std::string_view kNames[] = {
#define X(e, name) name,
      TRENCH_TPU_MEMORY_ERRORS(X)
#undef X
  };
  return kNames[static_cast<int>(k)];
}

void Region::Reset(int64_t size) {
  data_.assign(size, 0);
  shadow_.assign(size, kUnallocated);
}

bool Region::Check(int64_t addr, int64_t n, uint8_t bit, bool write,
                   MemoryErrorKind* kind, int64_t* bad) const {
  if (n == 0) return true;
  if (addr < 0 || n < 0 || addr > size() - n) {
    *kind = MemoryErrorKind::kOutOfBounds;
    *bad = addr;
    return false;
  }
  const uint8_t* p = shadow_.data() + addr;
  const uint64_t want = 0x0101010101010101ull * bit;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if ((w & want) != want) break;
  }
  for (; i < n; ++i) {
    if ((p[i] & bit) == 0) break;
  }
  if (i >= n) return true;
  *bad = addr + i;
  switch (p[i]) {
    case kGuard:
      *kind = write ? MemoryErrorKind::kGuardZoneCorruption
                    : MemoryErrorKind::kOutOfBounds;
      break;
    case kInFlight:
      *kind = MemoryErrorKind::kDmaInFlight;
      break;
    case kUninitialized:
      *kind = MemoryErrorKind::kUninitializedRead;
      break;
    case kReadOnly:
      *kind = MemoryErrorKind::kReadOnlyWrite;
      break;
    default:
      *kind = IsPeerWritten(p[i]) ? MemoryErrorKind::kUnsynchronizedPeerAccess
                                  : MemoryErrorKind::kOutOfBounds;
      break;
  }
  return false;
}

bool Region::CheckRead(int64_t addr, int64_t n, MemoryErrorKind* kind,
                       int64_t* bad) const {
  return Check(addr, n, 0x01, false, kind, bad);
}

bool Region::CheckWrite(int64_t addr, int64_t n, MemoryErrorKind* kind,
                        int64_t* bad) const {
  return Check(addr, n, 0x02, true, kind, bad);
}

void Region::SetShadow(int64_t addr, int64_t n, uint8_t s) {
  if (n <= 0) return;
  std::memset(shadow_.data() + addr, s, n);
}

int64_t Region::FindNot(int64_t addr, int64_t n, Shadow s) const {
  for (int64_t i = 0; i < n; ++i) {
    if (shadow_[addr + i] != s) return addr + i;
  }
  return -1;
}

HbmLayout::HbmLayout(const std::vector<HbmBuffer>& buffers, int64_t guard_bytes)
    : buffers_(buffers), guard_(guard_bytes) {
  int64_t at = 2 * guard_;
  for (HbmBuffer& b : buffers_) {
    at = (at + guard_ + 511) / 512 * 512;
    b.base = at;
    at += b.size + guard_;
  }
  total_ = at + guard_;
}

void HbmLayout::InitShadow(Region* hbm) const {
  for (const HbmBuffer& b : buffers_) {
    hbm->SetShadow(b.base - guard_, guard_, kGuard);
    hbm->SetShadow(b.base, b.size, kUninitialized);
    hbm->SetShadow(b.base + b.size, guard_, kGuard);
  }
}

std::string HbmLayout::Describe(int64_t addr) const {
  const HbmBuffer* best = nullptr;
  int64_t best_dist = INT64_MAX;
  for (const HbmBuffer& b : buffers_) {
    int64_t d = addr < b.base             ? b.base - addr
                : addr >= b.base + b.size ? addr - (b.base + b.size) + 1
                                          : 0;
    if (d < best_dist) {
      best_dist = d;
      best = &b;
    }
  }
  if (best == nullptr) return "outside every buffer";
  std::string s = "offset " + std::to_string(addr - best->base) +
                  " of buffer '" + best->name + "' (size " +
                  std::to_string(best->size) + ")";
  if (best_dist == 0) return s;
  s += addr < best->base ? ", before its start" : ", past its end";
  return s + (best_dist <= guard_ ? ", in its guard zone" : "");
}

}  // namespace trench::tpu
