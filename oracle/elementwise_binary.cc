// Binary arithmetic and bit ops. Semantics are XLA's evaluator's
// (xla/hlo/evaluator/hlo_evaluator_typed_visitor.h, HandleDivide,
// HandleRemainder, HandleMaximum, HandlePower, HandleShift*):
// - integers wrap; x / 0 is -1 for signed and all-ones (the max) for
//   unsigned; INT_MIN / -1 = INT_MIN; x % 0 = x; INT_MIN % -1 = 0.
// - maximum/minimum return the first NaN operand (lhs first); otherwise
//   std::max/std::min, so max(-0, +0) is the lhs -0, and min likewise.
// - power: 1^y = 1 and x^0 = 1 for every type; a negative integer
//   exponent gives 1 when the base is 1 and 0 otherwise (so (-1)^-1 = 0,
//   as XLA); other integer powers wrap.
// - shift amounts are read as unsigned; amounts >= the bit width give 0
//   for shift-left and shift-right-logical and the sign fill (0 or -1) for
//   shift-right-arithmetic.
#include <algorithm>
#include <cmath>
#include <string>

#include "oracle/elementwise.h"
#include "oracle/elementwise_loops.h"

namespace trench::oracle {
namespace {

template <PrimitiveType T, typename F>
void MapFloat2(const Literal& a, const Literal& b, Literal* out, int threads,
               F f) {
  using N = NativeT<T>;
  MapBinary<N, N, N>(a, b, out, threads, [f](N x, N y) {
    return Store<T>(f(Load<T>(x), Load<T>(y)));
  });
}

template <PrimitiveType T>
bool ApplyFloat(HloOpcode op, const Literal& a, const Literal& b, Literal* out,
                int threads) {
  using C = ComputeT<T>;
  switch (op) {
    case HloOpcode::kAdd:
      MapFloat2<T>(a, b, out, threads, [](C x, C y) { return x + y; });
      return true;
    case HloOpcode::kSubtract:
      MapFloat2<T>(a, b, out, threads, [](C x, C y) { return x - y; });
      return true;
    case HloOpcode::kMultiply:
      MapFloat2<T>(a, b, out, threads, [](C x, C y) { return x * y; });
      return true;
    case HloOpcode::kDivide:
      MapFloat2<T>(a, b, out, threads, [](C x, C y) { return x / y; });
      return true;
    case HloOpcode::kRemainder:
      MapFloat2<T>(a, b, out, threads,
                   [](C x, C y) { return std::fmod(x, y); });
      return true;
    case HloOpcode::kMaximum:
      MapFloat2<T>(a, b, out, threads, [](C x, C y) {
        if (std::isnan(x)) return x;
        if (std::isnan(y)) return y;
        return std::max(x, y);
      });
      return true;
    case HloOpcode::kMinimum:
      MapFloat2<T>(a, b, out, threads, [](C x, C y) {
        if (std::isnan(x)) return x;
        if (std::isnan(y)) return y;
        return std::min(x, y);
      });
      return true;
    case HloOpcode::kPower:
      MapFloat2<T>(a, b, out, threads, [](C x, C y) {
        if (x == C(1) || y == C(0)) return C(1);
        return static_cast<C>(std::pow(x, y));
      });
      return true;
    case HloOpcode::kAtan2:
      MapFloat2<T>(a, b, out, threads,
                   [](C x, C y) { return std::atan2(x, y); });
      return true;
    default:
      return false;
  }
}

// base^exponent modulo 2^N by binary exponentiation. XLA's IPow takes an
// int exponent; this keeps all 64 bits (they agree below 2^31).
template <typename W>
W WrappingPow(W base, uint64_t exponent) {
  W result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = static_cast<W>(result * base);
    base = static_cast<W>(base * base);
    exponent >>= 1;
  }
  return result;
}

template <PrimitiveType T>
bool ApplyInt(HloOpcode op, const Literal& a, const Literal& b, Literal* out,
              int threads) {
  using N = NativeT<T>;
  using U = std::make_unsigned_t<N>;
  using W = WrapT<N>;
  constexpr U kBits = sizeof(N) * 8;
  auto map = [&](auto f) { MapBinary<N, N, N>(a, b, out, threads, f); };
  switch (op) {
    case HloOpcode::kAdd:
      map([](N x, N y) { return static_cast<N>(W(x) + W(y)); });
      return true;
    case HloOpcode::kSubtract:
      map([](N x, N y) { return static_cast<N>(W(x) - W(y)); });
      return true;
    case HloOpcode::kMultiply:
      map([](N x, N y) { return static_cast<N>(W(x) * W(y)); });
      return true;
    case HloOpcode::kDivide:
      map([](N x, N y) -> N {
        if (y == 0) return std::is_signed_v<N> ? N(-1) : N(~U(0));
        if constexpr (std::is_signed_v<N>) {
          if (y == N(-1) && x == std::numeric_limits<N>::min()) return x;
        }
        return static_cast<N>(x / y);
      });
      return true;
    case HloOpcode::kRemainder:
      map([](N x, N y) -> N {
        if (y == 0) return x;
        if constexpr (std::is_signed_v<N>) {
          if (y == N(-1)) return 0;  // Also INT_MIN % -1, which is UB in C++.
        }
        return static_cast<N>(x % y);
      });
      return true;
    case HloOpcode::kMaximum:
      map([](N x, N y) { return std::max(x, y); });
      return true;
    case HloOpcode::kMinimum:
      map([](N x, N y) { return std::min(x, y); });
      return true;
    case HloOpcode::kPower:
      map([](N x, N y) -> N {
        if (x == N(1) || y == N(0)) return 1;
        if constexpr (std::is_signed_v<N>) {
          if (y < 0) return 0;  // The base is not 1 here.
        }
        return static_cast<N>(
            WrappingPow<W>(static_cast<W>(x), static_cast<uint64_t>(y)));
      });
      return true;
    case HloOpcode::kAnd:
      map([](N x, N y) { return static_cast<N>(x & y); });
      return true;
    case HloOpcode::kOr:
      map([](N x, N y) { return static_cast<N>(x | y); });
      return true;
    case HloOpcode::kXor:
      map([](N x, N y) { return static_cast<N>(x ^ y); });
      return true;
    case HloOpcode::kShiftLeft:
      map([](N x, N y) -> N {
        if (static_cast<U>(y) >= kBits) return 0;
        return static_cast<N>(static_cast<W>(static_cast<U>(x)) << y);
      });
      return true;
    case HloOpcode::kShiftRightLogical:
      map([](N x, N y) -> N {
        if (static_cast<U>(y) >= kBits) return 0;
        return static_cast<N>(static_cast<U>(x) >> y);
      });
      return true;
    case HloOpcode::kShiftRightArithmetic:
      map([](N x, N y) -> N {
        using S = std::make_signed_t<N>;
        const S sx = static_cast<S>(x);
        if (static_cast<U>(y) >= kBits) return static_cast<N>(sx < 0 ? -1 : 0);
        return static_cast<N>(sx >> static_cast<U>(y));
      });
      return true;
    default:
      return false;
  }
}

// pred as bool (bytes read as != 0): the logical forms XLA's evaluator
// gets from bool arithmetic (add = or, multiply = and, max = or, min = and).
bool ApplyPred(HloOpcode op, const Literal& a, const Literal& b, Literal* out,
               int threads) {
  auto map = [&](auto f) {
    MapBinary<uint8_t, uint8_t, uint8_t>(
        a, b, out, threads,
        [f](uint8_t x, uint8_t y) -> uint8_t { return f(x != 0, y != 0); });
  };
  switch (op) {
    case HloOpcode::kAnd:
    case HloOpcode::kMultiply:
    case HloOpcode::kMinimum:
      map([](bool x, bool y) { return x && y; });
      return true;
    case HloOpcode::kOr:
    case HloOpcode::kAdd:
    case HloOpcode::kMaximum:
      map([](bool x, bool y) { return x || y; });
      return true;
    case HloOpcode::kXor:
      map([](bool x, bool y) { return x != y; });
      return true;
    case HloOpcode::kPower:
      map([](bool x, bool y) { return x || !y; });
      return true;
    default:
      return false;
  }
}

}  // namespace

Status BinaryOp(HloOpcode op, const Literal& a, const Literal& b, Literal* out,
                int threads) {
  const PrimitiveType t = a.element_type();
  bool handled = false;
  if (t == PrimitiveType::PRED) {
    handled = ApplyPred(op, a, b, out, threads);
  } else if (!DispatchFloatType(t, [&]<PrimitiveType T>() {
               handled = ApplyFloat<T>(op, a, b, out, threads);
             })) {
    DispatchIntType(t, [&]<PrimitiveType T>() {
      handled = ApplyInt<T>(op, a, b, out, threads);
    });
  }
  if (handled) return Status::Ok();
  return InvalidArgument(std::string(OpcodeName(op)) +
                         " does not take element type " +
                         std::string(PrimitiveTypeName(t)));
}

}  // namespace trench::oracle
