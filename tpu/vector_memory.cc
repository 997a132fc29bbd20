// Vector loads and stores between VMEM and the vector registers: strided
// (per-sublane stride), masked (inactive lanes are neither accessed nor
// written), with element conversion (bf16/f16/s8/.../pred <-> 32-bit lanes,
// 64-bit types into register pairs), plus gather and scatter.
#include <cstring>

#include "tpu/lanes.h"
#include "tpu/numerics.h"

namespace trench::tpu {
namespace {

constexpr int64_t kMaxStride = int64_t{1} << 48;

// Memory element at p -> lane words.
inline void LoadElem(DType t, const uint8_t* p, uint32_t* lo, uint32_t* hi) {
  switch (t) {
    case DType::kF32:
    case DType::kS32:
    case DType::kU32:
      std::memcpy(lo, p, 4);
      return;
    case DType::kF64:
    case DType::kS64:
    case DType::kU64: {
      std::memcpy(lo, p, 4);
      std::memcpy(hi, p + 4, 4);
      return;
    }
    case DType::kBf16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      *lo = uint32_t{h} << 16;
      return;
    }
    case DType::kF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      *lo = F32Bits(F16ToF32(h));
      return;
    }
    case DType::kS8:
      *lo = static_cast<uint32_t>(static_cast<int8_t>(*p));
      return;
    case DType::kU8:
      *lo = *p;
      return;
    case DType::kPred:
      *lo = *p != 0;
      return;
    case DType::kS16: {
      int16_t h;
      std::memcpy(&h, p, 2);
      *lo = static_cast<uint32_t>(h);
      return;
    }
    default: {  // kU16
      uint16_t h;
      std::memcpy(&h, p, 2);
      *lo = h;
      return;
    }
  }
}

// Lane words -> memory element at p (bf16/f16 round to nearest even,
// integers keep the low bits, pred stores 1 for nonzero).
inline void StoreElem(DType t, uint32_t lo, uint32_t hi, uint8_t* p) {
  switch (t) {
    case DType::kF32:
    case DType::kS32:
    case DType::kU32:
      std::memcpy(p, &lo, 4);
      return;
    case DType::kF64:
    case DType::kS64:
    case DType::kU64:
      std::memcpy(p, &lo, 4);
      std::memcpy(p + 4, &hi, 4);
      return;
    case DType::kBf16: {
      uint16_t h = RoundToBf16(BitsF32(lo));
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::kF16: {
      uint16_t h = RoundToF16(BitsF32(lo));
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::kS8:
    case DType::kU8:
      *p = static_cast<uint8_t>(lo);
      return;
    case DType::kPred:
      *p = lo != 0;
      return;
    default: {
      uint16_t h = static_cast<uint16_t>(lo);
      std::memcpy(p, &h, 2);
      return;
    }
  }
}

bool AllActive(const uint8_t* m) {
  for (int l = 0; l < kLanes; ++l) {
    if (!m[l]) return false;
  }
  return true;
}

// Checks one sublane row for a load (store when `write`). Sets *full when
// every lane is active.
bool CheckRow(Machine& M, int64_t row, int esz, const uint8_t* rm, bool write,
              bool* full) {
  *full = rm == nullptr || AllActive(rm);
  if (*full) {
    return write ? M.CheckWrite(MemSpace::kVmem, row, int64_t{kLanes} * esz)
                 : M.CheckRead(MemSpace::kVmem, row, int64_t{kLanes} * esz);
  }
  for (int l = 0; l < kLanes; ++l) {
    if (!rm[l]) continue;
    int64_t a = row + int64_t{l} * esz;
    if (!(write ? M.CheckWrite(MemSpace::kVmem, a, esz)
                : M.CheckRead(MemSpace::kVmem, a, esz))) {
      return false;
    }
  }
  return true;
}

bool StrideOk(Machine& M, int64_t base, int64_t stride) {
  if (stride > kMaxStride || stride < -kMaxStride) {
    return M.MemFault(MemoryErrorKind::kOutOfBounds, MemSpace::kVmem, base, 1,
                      false);
  }
  return true;
}

bool Load(Machine& M, const Instr& in) {
  const DType t = in.type;
  const int esz = DTypeBytes(t);
  const int64_t base = M.Addr(in.mem[0]);
  const int64_t stride = in.has_optional ? in.imm[0] : int64_t{kLanes} * esz;
  if (!StrideOk(M, base, stride)) return false;
  const uint8_t* mk = in.mask >= 0 ? M.m[in.mask] : nullptr;
  const int d = in.reg[0];
  uint32_t* lo = M.v[d];
  uint32_t* hi = Is64Bit(t) ? M.v[d + 1] : M.v[d];
  for (int s = 0; s < kSublanes; ++s) {
    const int64_t row = Machine::AddWrap(base, s * stride);
    const uint8_t* rm = mk ? mk + s * kLanes : nullptr;
    bool full;
    if (!CheckRow(M, row, esz, rm, false, &full)) return false;
    const uint8_t* p = M.vmem.data() + row;
    const int off = s * kLanes;
    if (full && (t == DType::kF32 || t == DType::kS32 || t == DType::kU32)) {
      std::memcpy(lo + off, p, kLanes * 4);
      continue;
    }
    for (int l = 0; l < kLanes; ++l) {
      if (full || rm[l]) LoadElem(t, p + l * esz, lo + off + l, hi + off + l);
    }
  }
  return true;
}

bool Store(Machine& M, const Instr& in) {
  const DType t = in.type;
  const int esz = DTypeBytes(t);
  const int64_t base = M.Addr(in.mem[0]);
  const int64_t stride = in.has_optional ? in.imm[0] : int64_t{kLanes} * esz;
  if (!StrideOk(M, base, stride)) return false;
  const uint8_t* mk = in.mask >= 0 ? M.m[in.mask] : nullptr;
  const int r = in.reg[0];
  const uint32_t* lo = M.v[r];
  const uint32_t* hi = Is64Bit(t) ? M.v[r + 1] : M.v[r];
  for (int s = 0; s < kSublanes; ++s) {
    const int64_t row = Machine::AddWrap(base, s * stride);
    const uint8_t* rm = mk ? mk + s * kLanes : nullptr;
    bool full;
    if (!CheckRow(M, row, esz, rm, true, &full)) return false;
    uint8_t* p = M.vmem.data() + row;
    const int off = s * kLanes;
    if (full) {
      if (t == DType::kF32 || t == DType::kS32 || t == DType::kU32) {
        std::memcpy(p, lo + off, kLanes * 4);
      } else {
        for (int l = 0; l < kLanes; ++l) {
          StoreElem(t, lo[off + l], hi[off + l], p + l * esz);
        }
      }
      M.vmem.SetShadow(row, int64_t{kLanes} * esz, kInitialized);
      continue;
    }
    for (int l = 0; l < kLanes; ++l) {
      if (!rm[l]) continue;
      StoreElem(t, lo[off + l], hi[off + l], p + l * esz);
      M.vmem.SetShadow(row + int64_t{l} * esz, esz, kInitialized);
    }
  }
  return true;
}

// Element i accesses base + idx[i] * element_bytes (idx as s32).
bool Gather(Machine& M, const Instr& in) {
  const DType t = in.type;
  const int esz = DTypeBytes(t);
  const int64_t base = M.Addr(in.mem[0]);
  const uint8_t* mk = in.mask >= 0 ? M.m[in.mask] : nullptr;
  const int d = in.reg[0];
  const uint32_t* idx = M.v[in.reg[1]];
  uint32_t* lo = M.v[d];
  uint32_t* hi = Is64Bit(t) ? M.v[d + 1] : M.v[d];
  // The index register may be the destination: read indices first.
  int64_t addr[kVregElems];
  for (int i = 0; i < kVregElems; ++i) {
    addr[i] =
        Machine::AddWrap(base, int64_t{static_cast<int32_t>(idx[i])} * esz);
  }
  for (int i = 0; i < kVregElems; ++i) {
    if (mk && !mk[i]) continue;
    if (!M.CheckRead(MemSpace::kVmem, addr[i], esz)) return false;
    LoadElem(t, M.vmem.data() + addr[i], lo + i, hi + i);
  }
  return true;
}

// In lane order, so with duplicate indices the highest lane wins.
bool Scatter(Machine& M, const Instr& in) {
  const DType t = in.type;
  const int esz = DTypeBytes(t);
  const int64_t base = M.Addr(in.mem[0]);
  const uint8_t* mk = in.mask >= 0 ? M.m[in.mask] : nullptr;
  const uint32_t* idx = M.v[in.reg[0]];
  const int r = in.reg[1];
  const uint32_t* lo = M.v[r];
  const uint32_t* hi = Is64Bit(t) ? M.v[r + 1] : M.v[r];
  for (int i = 0; i < kVregElems; ++i) {
    if (mk && !mk[i]) continue;
    int64_t a =
        Machine::AddWrap(base, int64_t{static_cast<int32_t>(idx[i])} * esz);
    if (!M.CheckWrite(MemSpace::kVmem, a, esz)) return false;
    StoreElem(t, lo[i], hi[i], M.vmem.data() + a);
    M.vmem.SetShadow(a, esz, kInitialized);
  }
  return true;
}

}  // namespace

bool ExecVectorMemory(Machine& M, const Instr& in) {
  switch (in.op) {
    case Opcode::kVLd:
      return Load(M, in);
    case Opcode::kVSt:
      return Store(M, in);
    case Opcode::kVGather:
      return Gather(M, in);
    case Opcode::kVScatter:
      return Scatter(M, in);
    default:
      return false;
  }
}

}  // namespace trench::tpu
