// Unary integer and bit ops. Integer arithmetic wraps (two's complement),
// as XLA's evaluator does through ToArithmeticSafeType: abs(INT_MIN) and
// negate(INT_MIN) are INT_MIN.
#include <bit>
#include <string>

#include "oracle/elementwise.h"
#include "oracle/elementwise_loops.h"

namespace trench::oracle {
namespace {

template <PrimitiveType T>
bool ApplyInt(HloOpcode op, const Literal& x, Literal* out, int threads) {
  using N = NativeT<T>;
  using U = std::make_unsigned_t<N>;
  using W = WrapT<N>;
  switch (op) {
    case HloOpcode::kAbs:
      MapUnary<N, N>(x, out, threads, [](N v) {
        if constexpr (std::is_signed_v<N>) {
          return v < 0 ? static_cast<N>(W(0) - static_cast<W>(v)) : v;
        } else {
          return v;
        }
      });
      return true;
    case HloOpcode::kNegate:
      MapUnary<N, N>(x, out, threads, [](N v) {
        return static_cast<N>(W(0) - static_cast<W>(v));
      });
      return true;
    case HloOpcode::kSign:
      MapUnary<N, N>(x, out, threads, [](N v) {
        return static_cast<N>((N(0) < v) - (v < N(0)));
      });
      return true;
    case HloOpcode::kNot:
      MapUnary<N, N>(x, out, threads, [](N v) { return static_cast<N>(~v); });
      return true;
    case HloOpcode::kClz:
      // Counts within the element's own width (XLA's HandleClz works on
      // the unsigned type of the same width).
      MapUnary<N, N>(x, out, threads, [](N v) {
        return static_cast<N>(std::countl_zero(static_cast<U>(v)));
      });
      return true;
    case HloOpcode::kPopulationCount:
      MapUnary<N, N>(x, out, threads, [](N v) {
        return static_cast<N>(std::popcount(static_cast<U>(v)));
      });
      return true;
    default:
      return false;
  }
}

}  // namespace

Status UnaryInt(HloOpcode op, const Literal& x, Literal* out, int threads) {
  if (x.element_type() == PrimitiveType::PRED && op == HloOpcode::kNot) {
    // Logical not; storage is read as bytes so any nonzero byte is true.
    MapUnary<uint8_t, uint8_t>(x, out, threads,
                               [](uint8_t v) -> uint8_t { return v == 0; });
    return Status::Ok();
  }
  bool handled = false;
  const bool is_int = DispatchIntType(x.element_type(), [&]<PrimitiveType T>() {
    handled = ApplyInt<T>(op, x, out, threads);
  });
  if (is_int && handled) return Status::Ok();
  return InvalidArgument(std::string(OpcodeName(op)) +
                         " does not take element type " +
                         std::string(PrimitiveTypeName(x.element_type())));
}

}  // namespace trench::oracle
