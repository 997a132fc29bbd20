// Typed loop helpers for the elementwise kernels. Internal to oracle/.
//
// Every kernel is a tight loop over raw element pointers with the per-element
// operation inlined (lambdas through templates): no virtual call, no
// per-element type switch, so the compiler can vectorize the simple ones.
// bf16/f16 load into f32, compute there and round once on store (RNE), as
// XLA's HloEvaluatorTypedVisitor<bfloat16, float> does.
//
// Aliasing: an output buffer may be the same memory as an operand (the
// evaluator donates dead operand buffers). Every loop here reads element i
// of all inputs before writing element i of the output and never touches
// another index, so that is safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/ir/literal.h"

namespace trench::oracle {

// The type arithmetic happens in: f32 for the 16-bit floats, the storage
// type otherwise.
template <PrimitiveType T>
struct ComputeTypeOf {
  using type = NativeT<T>;
};
template <>
struct ComputeTypeOf<PrimitiveType::F16> {
  using type = float;
};
template <>
struct ComputeTypeOf<PrimitiveType::BF16> {
  using type = float;
};
template <PrimitiveType T>
using ComputeT = typename ComputeTypeOf<T>::type;

template <PrimitiveType T>
inline constexpr bool kIs16BitFloat =
    T == PrimitiveType::F16 || T == PrimitiveType::BF16;

template <PrimitiveType T>
inline ComputeT<T> Load(NativeT<T> v) {
  if constexpr (kIs16BitFloat<T>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}

// Rounds once (RNE) for the 16-bit floats.
template <PrimitiveType T>
inline NativeT<T> Store(ComputeT<T> v) {
  if constexpr (kIs16BitFloat<T>) {
    return NativeT<T>(v);
  } else {
    return v;
  }
}

// Below this many elements per thread, threads cost more than they save.
// Measured (bench/oracle_vs_numpy.py): a vectorized f32 op streams about
// 4 G elements/s on one core, so a thread only pays for arrays of millions
// of elements; on a busy machine a spawned thread can also wait a whole
// scheduler tick (4 ms), which made a 1M-element chain 20x slower.
inline constexpr int64_t kMinElementsPerThread = 1 << 22;

// Runs body(begin, end) over [0, n) split into contiguous chunks, on up to
// `threads` threads (the calling thread takes the first chunk).
template <typename Body>
void ParallelFor(int64_t n, int threads, const Body& body) {
  const int64_t max_useful = std::max<int64_t>(1, n / kMinElementsPerThread);
  const int64_t t = std::min<int64_t>(std::max(threads, 1), max_useful);
  if (t <= 1) {
    body(int64_t{0}, n);
    return;
  }
  const int64_t chunk = (n + t - 1) / t;
  std::vector<std::thread> workers;
  workers.reserve(t - 1);
  for (int64_t k = 1; k < t; ++k) {
    const int64_t b = k * chunk, e = std::min(n, b + chunk);
    if (b >= e) continue;
    try {
      workers.emplace_back([&body, b, e] { body(b, e); });
    } catch (const std::system_error&) {
      body(b, e);  // No thread available: do this chunk here.
    }
  }
  body(int64_t{0}, std::min(n, chunk));
  for (std::thread& w : workers) w.join();
}

// out[i] = f(x[i]) with storage types In/Out.
template <typename In, typename Out, typename F>
void MapUnary(const Literal& x, Literal* out, int threads, F f) {
  const In* xp = x.data<In>().data();
  Out* op = out->mutable_data<Out>().data();
  ParallelFor(out->element_count(), threads, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) op[i] = f(xp[i]);
  });
}

// out[i] = f(a[i], b[i]).
template <typename A, typename B, typename Out, typename F>
void MapBinary(const Literal& a, const Literal& b, Literal* out, int threads,
               F f) {
  const A* ap = a.data<A>().data();
  const B* bp = b.data<B>().data();
  Out* op = out->mutable_data<Out>().data();
  ParallelFor(out->element_count(), threads, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) op[i] = f(ap[i], bp[i]);
  });
}

// out[i] = f(a[i or 0], b[i or 0], c[i or 0]): operands flagged scalar are
// read at index 0 (the scalar forms of select and clamp). The flags are
// template parameters so each combination gets its own tight loop.
template <bool kAScalar, bool kBScalar, bool kCScalar, typename A, typename B,
          typename C, typename Out, typename F>
void MapTernaryImpl(const Literal& a, const Literal& b, const Literal& c,
                    Literal* out, int threads, F f) {
  const A* ap = a.data<A>().data();
  const B* bp = b.data<B>().data();
  const C* cp = c.data<C>().data();
  Out* op = out->mutable_data<Out>().data();
  ParallelFor(out->element_count(), threads, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      op[i] =
          f(ap[kAScalar ? 0 : i], bp[kBScalar ? 0 : i], cp[kCScalar ? 0 : i]);
    }
  });
}

// Picks the MapTernaryImpl instance for which operands are rank-0.
// REQUIRES: every other operand has the output's dimensions.
template <typename A, typename B, typename C, typename Out, typename F>
void MapTernary(const Literal& a, const Literal& b, const Literal& c,
                Literal* out, int threads, F f) {
  const bool sa = a.shape().rank() == 0;
  const bool sb = b.shape().rank() == 0;
  const bool sc = c.shape().rank() == 0;
  const int key = (sa ? 4 : 0) | (sb ? 2 : 0) | (sc ? 1 : 0);
  switch (key) {
#define TRENCH_TERNARY_CASE(K, X, Y, Z)                              \
  case K:                                                            \
    MapTernaryImpl<X, Y, Z, A, B, C, Out>(a, b, c, out, threads, f); \
    return;
    TRENCH_TERNARY_CASE(0, false, false, false)
    TRENCH_TERNARY_CASE(1, false, false, true)
    TRENCH_TERNARY_CASE(2, false, true, false)
    TRENCH_TERNARY_CASE(3, false, true, true)
    TRENCH_TERNARY_CASE(4, true, false, false)
    TRENCH_TERNARY_CASE(5, true, false, true)
    TRENCH_TERNARY_CASE(6, true, true, false)
    TRENCH_TERNARY_CASE(7, true, true, true)
#undef TRENCH_TERNARY_CASE
  }
}

// Calls f.template operator()<T>() when t is one of the listed kinds of
// array types; returns false (without calling) otherwise. Instantiating
// only the relevant types keeps kernels free of impossible branches.
template <typename F>
bool DispatchFloatType(PrimitiveType t, F&& f) {
  switch (t) {
    case PrimitiveType::F16:
      f.template operator()<PrimitiveType::F16>();
      break;
    case PrimitiveType::BF16:
      f.template operator()<PrimitiveType::BF16>();
      break;
    case PrimitiveType::F32:
      f.template operator()<PrimitiveType::F32>();
      break;
    case PrimitiveType::F64:
      f.template operator()<PrimitiveType::F64>();
      break;
    default:
      return false;
  }
  return true;
}

template <typename F>
bool DispatchIntType(PrimitiveType t, F&& f) {
  switch (t) {
    case PrimitiveType::S8:
      f.template operator()<PrimitiveType::S8>();
      break;
    case PrimitiveType::S16:
      f.template operator()<PrimitiveType::S16>();
      break;
    case PrimitiveType::S32:
      f.template operator()<PrimitiveType::S32>();
      break;
    case PrimitiveType::S64:
      f.template operator()<PrimitiveType::S64>();
      break;
    case PrimitiveType::U8:
      f.template operator()<PrimitiveType::U8>();
      break;
    case PrimitiveType::U16:
      f.template operator()<PrimitiveType::U16>();
      break;
    case PrimitiveType::U32:
      f.template operator()<PrimitiveType::U32>();
      break;
    case PrimitiveType::U64:
      f.template operator()<PrimitiveType::U64>();
      break;
    default:
      return false;
  }
  return true;
}

template <typename F>
bool DispatchComplexType(PrimitiveType t, F&& f) {
  switch (t) {
    case PrimitiveType::C64:
      f.template operator()<PrimitiveType::C64>();
      break;
    case PrimitiveType::C128:
      f.template operator()<PrimitiveType::C128>();
      break;
    default:
      return false;
  }
  return true;
}

// Unsigned type with the width of integer type I, at least as wide as int:
// integer arithmetic wraps in it (no signed-overflow UB, and no promotion of
// u16*u16 to a signed int that could overflow).
template <typename I>
using WrapT = std::make_unsigned_t<decltype(I() + I())>;

}  // namespace trench::oracle
