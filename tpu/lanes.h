// Internal to tpu/: typed access to vector registers and the elementwise
// loops the units share. A 32-bit element type occupies one register; a
// 64-bit type occupies the pair (vN, vN+1) with the low word in vN.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tpu/machine.h"

namespace trench::tpu {

template <typename T>
inline T GetLane(const Machine& M, int r, int i) {
  if constexpr (sizeof(T) == 4) {
    T v;
    std::memcpy(&v, &M.v[r][i], 4);
    return v;
  } else {
    uint64_t b = (uint64_t{M.v[r + 1][i]} << 32) | M.v[r][i];
    T v;
    std::memcpy(&v, &b, 8);
    return v;
  }
}

template <typename T>
inline void SetLane(Machine& M, int r, int i, T v) {
  if constexpr (sizeof(T) == 4) {
    std::memcpy(&M.v[r][i], &v, 4);
  } else {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    M.v[r][i] = static_cast<uint32_t>(b);
    M.v[r + 1][i] = static_cast<uint32_t>(b >> 32);
  }
}

// Writes out[] to register d (a pair for 64-bit T), only active lanes when
// in.mask >= 0.
template <typename T>
inline void Commit(Machine& M, const Instr& in, int d, const T* out) {
  if (in.mask < 0) {
    if constexpr (sizeof(T) == 4) {
      std::memcpy(M.v[d], out, sizeof(M.v[d]));
    } else {
      for (int i = 0; i < kVregElems; ++i) SetLane<T>(M, d, i, out[i]);
    }
    return;
  }
  const uint8_t* mk = M.m[in.mask];
  if constexpr (sizeof(T) == 4) {
    uint32_t* dst = M.v[d];
    for (int i = 0; i < kVregElems; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &out[i], 4);
      dst[i] = mk[i] ? bits : dst[i];  // A blend; vectorizes.
    }
  } else {
    for (int i = 0; i < kVregElems; ++i) {
      if (mk[i]) SetLane<T>(M, d, i, out[i]);
    }
  }
}

// dst[i] = f(a[i]) for active lanes (all when in.mask < 0). Every lane is
// computed into a local array first (the functions are total), which keeps
// the loop free of aliasing so the compiler vectorizes it; dst may alias a.
template <typename T, typename R = T, typename F>
inline void Map1(Machine& M, const Instr& in, int d, int a, F f) {
  alignas(64) R out[kVregElems];
  for (int i = 0; i < kVregElems; ++i) out[i] = f(GetLane<T>(M, a, i));
  Commit<R>(M, in, d, out);
}

template <typename T, typename F>
inline void Map2(Machine& M, const Instr& in, F f) {
  const int d = in.reg[0], a = in.reg[1], b = in.reg[2];
  alignas(64) T out[kVregElems];
  for (int i = 0; i < kVregElems; ++i) {
    out[i] = f(GetLane<T>(M, a, i), GetLane<T>(M, b, i));
  }
  Commit<T>(M, in, d, out);
}

// Calls FN(T) with T the C++ type of a numeric DType; returns false for
// other types (which validation rules out).
#define TRENCH_TPU_DISPATCH_NUM(type, FN) \
  switch (type) {                         \
    case DType::kF32:                     \
      FN(float);                          \
    case DType::kS32:                     \
      FN(int32_t);                        \
    case DType::kU32:                     \
      FN(uint32_t);                       \
    case DType::kF64:                     \
      FN(double);                         \
    case DType::kS64:                     \
      FN(int64_t);                        \
    case DType::kU64:                     \
      FN(uint64_t);                       \
    default:                              \
      return false;                       \
  }

template <typename T>
inline T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

// XLA integer division semantics: x/0 = -1 (all ones), x%0 = x;
// INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0.
template <typename T>
inline T IntDiv(T a, T b) {
  if (b == 0) return static_cast<T>(-1);
  if constexpr (std::is_signed_v<T>) {
    if (b == -1)
      return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));
  }
  return a / b;
}
template <typename T>
inline T IntRem(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  return a % b;
}

}  // namespace trench::tpu
