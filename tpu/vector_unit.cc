// The vector unit: elementwise arithmetic, compares, selects, bit ops,
// rounding, converts, pack/unpack and the mask registers. Loads and stores
// live in vector_memory.cc.
#include <bit>
#include <cmath>
#include <limits>

#include "tpu/lanes.h"
#include "tpu/numerics.h"

namespace trench::tpu {
namespace {

template <typename T>
T Neg(T a) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));
  } else {
    return -a;
  }
}

template <typename T>
T Sub(T a, T b) {
  return WrapAdd(a, Neg(b));
}

template <typename T>
T Mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// NaN-propagating min/max; -0 orders below +0.
template <typename T>
T Min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<T>::quiet_NaN();
    if (a == b) return std::signbit(a) ? a : b;
  }
  return a < b ? a : b;
}
template <typename T>
T Max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<T>::quiet_NaN();
    if (a == b) return std::signbit(a) ? b : a;
  }
  return a > b ? a : b;
}

template <typename T>
T Rem(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return IntRem(a, b);
  } else {
    return std::fmod(a, b);
  }
}

template <typename T>
T Abs(T a) {
  if constexpr (std::is_unsigned_v<T>) {
    return a;
  } else if constexpr (std::is_integral_v<T>) {
    return a < 0 ? Neg(a) : a;
  } else {
    return std::fabs(a);
  }
}

template <typename T>
T Sign(T a) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || a == 0) return a;
    return a > 0 ? T(1) : T(-1);
  } else {
    return a > 0 ? T(1) : (a == 0 ? T(0) : static_cast<T>(-1));
  }
}

template <typename T>
using Bits = std::make_unsigned_t<T>;

// Shift amounts are unsigned; amounts >= the width give 0 (shl, shrl) or the
// sign fill (shra).
template <typename T>
T Shl(T a, T b) {
  auto n = static_cast<Bits<T>>(b);
  if (n >= sizeof(T) * 8) return 0;
  return static_cast<T>(static_cast<Bits<T>>(a) << n);
}
template <typename T>
T Shrl(T a, T b) {
  auto n = static_cast<Bits<T>>(b);
  if (n >= sizeof(T) * 8) return 0;
  return static_cast<T>(static_cast<Bits<T>>(a) >> n);
}
template <typename T>
T Shra(T a, T b) {
  using S = std::make_signed_t<T>;
  auto n = static_cast<Bits<T>>(b);
  if (n >= sizeof(T) * 8) n = sizeof(T) * 8 - 1;
  return static_cast<T>(static_cast<S>(a) >> n);
}

template <typename D, typename S>
D Convert(S s) {
  if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
    // Truncate toward zero, saturate, NaN -> 0.
    if (std::isnan(s)) return 0;
    constexpr int kBits =
        std::is_signed_v<D> ? sizeof(D) * 8 - 1 : sizeof(D) * 8;
    const S hi = std::ldexp(S(1), kBits);
    if (s >= hi) return std::numeric_limits<D>::max();
    if (std::is_signed_v<D> ? s < -hi : s <= S(-1)) {
      return std::numeric_limits<D>::min();
    }
    return static_cast<D>(s);
  } else {
    return static_cast<D>(s);
  }
}

template <typename T>
bool Binary(Machine& M, const Instr& in) {
  switch (in.op) {
    case Opcode::kVAdd:
      Map2<T>(M, in, [](T a, T b) { return WrapAdd(a, b); });
      return true;
    case Opcode::kVSub:
      Map2<T>(M, in, [](T a, T b) { return Sub(a, b); });
      return true;
    case Opcode::kVMul:
      Map2<T>(M, in, [](T a, T b) { return Mul(a, b); });
      return true;
    case Opcode::kVRem:
      Map2<T>(M, in, [](T a, T b) { return Rem(a, b); });
      return true;
    case Opcode::kVMin:
      Map2<T>(M, in, [](T a, T b) { return Min(a, b); });
      return true;
    case Opcode::kVMax:
      Map2<T>(M, in, [](T a, T b) { return Max(a, b); });
      return true;
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (in.op) {
      case Opcode::kVAnd:
        Map2<T>(M, in, [](T a, T b) { return static_cast<T>(a & b); });
        return true;
      case Opcode::kVOr:
        Map2<T>(M, in, [](T a, T b) { return static_cast<T>(a | b); });
        return true;
      case Opcode::kVXor:
        Map2<T>(M, in, [](T a, T b) { return static_cast<T>(a ^ b); });
        return true;
      case Opcode::kVShl:
        Map2<T>(M, in, Shl<T>);
        return true;
      case Opcode::kVShrl:
        Map2<T>(M, in, Shrl<T>);
        return true;
      case Opcode::kVShra:
        Map2<T>(M, in, Shra<T>);
        return true;
      default:
        break;
    }
  }
  return false;
}

template <typename T>
bool Unary(Machine& M, const Instr& in) {
  const int d = in.reg[0], a = in.reg[1];
  switch (in.op) {
    case Opcode::kVNeg:
      Map1<T>(M, in, d, a, Neg<T>);
      return true;
    case Opcode::kVAbs:
      Map1<T>(M, in, d, a, Abs<T>);
      return true;
    case Opcode::kVSign:
      Map1<T>(M, in, d, a, Sign<T>);
      return true;
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    using U = Bits<T>;
    switch (in.op) {
      case Opcode::kVNot:
        Map1<T>(M, in, d, a, [](T x) { return static_cast<T>(~x); });
        return true;
      case Opcode::kVClz:
        Map1<T>(M, in, d, a, [](T x) {
          return static_cast<T>(std::countl_zero(static_cast<U>(x)));
        });
        return true;
      case Opcode::kVPopcnt:
        Map1<T>(M, in, d, a, [](T x) {
          return static_cast<T>(std::popcount(static_cast<U>(x)));
        });
        return true;
      default:
        break;
    }
  } else {
    switch (in.op) {
      case Opcode::kVFloor:
        Map1<T>(M, in, d, a, [](T x) { return std::floor(x); });
        return true;
      case Opcode::kVCeil:
        Map1<T>(M, in, d, a, [](T x) { return std::ceil(x); });
        return true;
      case Opcode::kVTrunc:
        Map1<T>(M, in, d, a, [](T x) { return std::trunc(x); });
        return true;
      case Opcode::kVRound:
        Map1<T>(M, in, d, a, [](T x) { return std::round(x); });
        return true;
      case Opcode::kVRoundEven:
        Map1<T>(M, in, d, a, [](T x) { return std::nearbyint(x); });
        return true;
      default:
        break;
    }
  }
  return false;
}

template <typename T>
bool Compare(Machine& M, const Instr& in) {
  uint8_t* out = M.m[in.reg[0]];
  const int a = in.reg[1], b = in.reg[2];
  auto run = [&](auto pred) {
    for (int i = 0; i < kVregElems; ++i) {
      out[i] = pred(GetLane<T>(M, a, i), GetLane<T>(M, b, i)) ? 1 : 0;
    }
  };
  switch (in.op) {
    case Opcode::kVCmpEq:
      run([](T x, T y) { return x == y; });
      return true;
    case Opcode::kVCmpNe:
      run([](T x, T y) { return x != y; });
      return true;
    case Opcode::kVCmpLt:
      run([](T x, T y) { return x < y; });
      return true;
    case Opcode::kVCmpLe:
      run([](T x, T y) { return x <= y; });
      return true;
    case Opcode::kVCmpGt:
      run([](T x, T y) { return x > y; });
      return true;
    case Opcode::kVCmpGe:
      run([](T x, T y) { return x >= y; });
      return true;
    default:
      return false;
  }
}

template <typename T>
bool Select(Machine& M, const Instr& in) {
  const uint8_t* mk = M.m[in.reg[1]];
  const int d = in.reg[0], a = in.reg[2], b = in.reg[3];
  for (int i = 0; i < kVregElems; ++i) {
    SetLane<T>(M, d, i, mk[i] ? GetLane<T>(M, a, i) : GetLane<T>(M, b, i));
  }
  return true;
}

template <typename T>
bool Broadcast(Machine& M, const Instr& in, uint64_t bits) {
  T v;
  if constexpr (sizeof(T) == 4) {
    uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(&v, &b, 4);
  } else {
    std::memcpy(&v, &bits, 8);
  }
  Map1<T>(M, in, in.reg[0], in.reg[0], [v](T) { return v; });
  return true;
}

template <typename D>
bool ConvertFrom(Machine& M, const Instr& in) {
  const int d = in.reg[0], a = in.reg[1];
#define TRENCH_CVT(S)                                            \
  Map1<S, D>(M, in, d, a, [](S s) { return Convert<D, S>(s); }); \
  return true;
  // Overlapping pairs are fine: lane i is read before lane i is written.
  TRENCH_TPU_DISPATCH_NUM(in.type2, TRENCH_CVT)
#undef TRENCH_CVT
}

bool Pack(Machine& M, const Instr& in) {
  const int d = in.reg[0], a = in.reg[1];
  auto go = [&](auto f) { Map1<uint32_t>(M, in, d, a, f); };
  switch (in.type) {
    case DType::kBf16:
      go([](uint32_t x) { return uint32_t{RoundToBf16(BitsF32(x))}; });
      break;
    case DType::kF16:
      go([](uint32_t x) { return uint32_t{RoundToF16(BitsF32(x))}; });
      break;
    case DType::kS8:
    case DType::kU8:
      go([](uint32_t x) { return x & 0xffu; });
      break;
    default:
      go([](uint32_t x) { return x & 0xffffu; });
      break;
  }
  return true;
}

bool Unpack(Machine& M, const Instr& in) {
  const int d = in.reg[0], a = in.reg[1];
  auto go = [&](auto f) { Map1<uint32_t>(M, in, d, a, f); };
  switch (in.type) {
    case DType::kBf16:
      go([](uint32_t x) { return x << 16; });
      break;
    case DType::kF16:
      go([](uint32_t x) {
        return F32Bits(F16ToF32(static_cast<uint16_t>(x)));
      });
      break;
    case DType::kS8:
      go([](uint32_t x) {
        return static_cast<uint32_t>(static_cast<int8_t>(x));
      });
      break;
    case DType::kU8:
      go([](uint32_t x) { return x & 0xffu; });
      break;
    case DType::kS16:
      go([](uint32_t x) {
        return static_cast<uint32_t>(static_cast<int16_t>(x));
      });
      break;
    default:
      go([](uint32_t x) { return x & 0xffffu; });
      break;
  }
  return true;
}

bool MaskOp(Machine& M, const Instr& in) {
  uint8_t* d = M.m[in.reg[0]];
  switch (in.op) {
    case Opcode::kMSet:
      std::memset(d, 1, kVregElems);
      return true;
    case Opcode::kMClr:
      std::memset(d, 0, kVregElems);
      return true;
    case Opcode::kMNot: {
      const uint8_t* a = M.m[in.reg[1]];
      for (int i = 0; i < kVregElems; ++i) d[i] = a[i] ^ 1;
      return true;
    }
    case Opcode::kMAnd:
    case Opcode::kMOr:
    case Opcode::kMXor: {
      const uint8_t* a = M.m[in.reg[1]];
      const uint8_t* b = M.m[in.reg[2]];
      for (int i = 0; i < kVregElems; ++i) {
        d[i] = in.op == Opcode::kMAnd  ? (a[i] & b[i])
               : in.op == Opcode::kMOr ? (a[i] | b[i])
                                       : (a[i] ^ b[i]);
      }
      return true;
    }
    case Opcode::kMBox: {
      // Active: sublane < s[a] and lane < s[b] (the valid corner of a tile).
      const int64_t rows = M.s[in.reg[1]], cols = M.s[in.reg[2]];
      for (int i = 0; i < kVregElems; ++i) {
        d[i] = (i / kLanes) < rows && (i % kLanes) < cols;
      }
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

bool ExecVector(Machine& M, const Instr& in) {
  switch (in.op) {
    case Opcode::kMSet:
    case Opcode::kMClr:
    case Opcode::kMNot:
    case Opcode::kMAnd:
    case Opcode::kMOr:
    case Opcode::kMXor:
    case Opcode::kMBox:
      return MaskOp(M, in);
    case Opcode::kVMov:
      Map1<uint32_t>(M, in, in.reg[0], in.reg[1], [](uint32_t x) { return x; });
      return true;
    case Opcode::kVIota: {
      const int64_t dim = in.imm[0];
      const uint8_t* mk = in.mask >= 0 ? M.m[in.mask] : nullptr;
      for (int i = 0; i < kVregElems; ++i) {
        if (mk && !mk[i]) continue;
        M.v[in.reg[0]][i] = dim == 0 ? i / kLanes : dim == 1 ? i % kLanes : i;
      }
      return true;
    }
    case Opcode::kVMtoV: {
      const uint8_t* mk = M.m[in.reg[1]];
      for (int i = 0; i < kVregElems; ++i) M.v[in.reg[0]][i] = mk[i];
      return true;
    }
    case Opcode::kVVtoM: {
      for (int i = 0; i < kVregElems; ++i)
        M.m[in.reg[0]][i] = M.v[in.reg[1]][i] != 0;
      return true;
    }
    case Opcode::kVPack:
      return Pack(M, in);
    case Opcode::kVUnpack:
      return Unpack(M, in);
    default:
      break;
  }
#define TRENCH_RUN(T) return Select<T>(M, in);
  if (in.op == Opcode::kVSel) {
    TRENCH_TPU_DISPATCH_NUM(in.type, TRENCH_RUN)
  }
#undef TRENCH_RUN
#define TRENCH_RUN(T) \
  return Broadcast<T>(M, in, static_cast<uint64_t>(in.imm[0]));
  if (in.op == Opcode::kVImm) {
    TRENCH_TPU_DISPATCH_NUM(in.type, TRENCH_RUN)
  }
#undef TRENCH_RUN
#define TRENCH_RUN(T) \
  return Broadcast<T>(M, in, static_cast<uint64_t>(M.s[in.reg[1]]));
  if (in.op == Opcode::kVBcast) {
    TRENCH_TPU_DISPATCH_NUM(in.type, TRENCH_RUN)
  }
#undef TRENCH_RUN
#define TRENCH_RUN(T) return ConvertFrom<T>(M, in);
  if (in.op == Opcode::kVCvt) {
    TRENCH_TPU_DISPATCH_NUM(in.type, TRENCH_RUN)
  }
#undef TRENCH_RUN
  switch (in.op) {
    case Opcode::kVCmpEq:
    case Opcode::kVCmpNe:
    case Opcode::kVCmpLt:
    case Opcode::kVCmpLe:
    case Opcode::kVCmpGt:
    case Opcode::kVCmpGe:
#define TRENCH_RUN(T) return Compare<T>(M, in);
      TRENCH_TPU_DISPATCH_NUM(in.type, TRENCH_RUN)
#undef TRENCH_RUN
    case Opcode::kVAdd:
    case Opcode::kVSub:
    case Opcode::kVMul:
    case Opcode::kVRem:
    case Opcode::kVMin:
    case Opcode::kVMax:
    case Opcode::kVAnd:
    case Opcode::kVOr:
    case Opcode::kVXor:
    case Opcode::kVShl:
    case Opcode::kVShrl:
    case Opcode::kVShra:
#define TRENCH_RUN(T) return Binary<T>(M, in);
      TRENCH_TPU_DISPATCH_NUM(in.type, TRENCH_RUN)
#undef TRENCH_RUN
    default:
      break;
  }
#define TRENCH_RUN(T) return Unary<T>(M, in);
  TRENCH_TPU_DISPATCH_NUM(in.type, TRENCH_RUN)
#undef TRENCH_RUN
}

}  // namespace trench::tpu
