// Unary float math. Semantics follow XLA's HloEvaluatorTypedVisitor
// (xla/hlo/evaluator/hlo_evaluator_typed_visitor.h): each op is the C++
// <cmath> function in the compute type (f32 for bf16/f16, rounded once on
// store).
#include <cmath>
#include <string>

#include "oracle/elementwise.h"
#include "oracle/elementwise_loops.h"

namespace trench::oracle {
namespace {

template <PrimitiveType T, typename F>
void MapFloat(const Literal& x, Literal* out, int threads, F f) {
  using N = NativeT<T>;
  MapUnary<N, N>(x, out, threads, [f](N v) { return Store<T>(f(Load<T>(v))); });
}

// Returns false when `op` is not a float unary op handled here.
template <PrimitiveType T>
bool Apply(HloOpcode op, const Literal& x, Literal* out, int threads) {
  using C = ComputeT<T>;
  switch (op) {
    case HloOpcode::kAbs:
      MapFloat<T>(x, out, threads, [](C v) { return std::abs(v); });
      return true;
    case HloOpcode::kNegate:
      MapFloat<T>(x, out, threads, [](C v) { return -v; });
      return true;
    case HloOpcode::kSign:
      // sign(+-0) = +-0 and sign(NaN) = NaN (XLA's HandleSign).
      MapFloat<T>(x, out, threads, [](C v) {
        return std::isnan(v) ? v : std::copysign(v != C(0) ? C(1) : C(0), v);
      });
      return true;
    case HloOpcode::kFloor:
      MapFloat<T>(x, out, threads, [](C v) { return std::floor(v); });
      return true;
    case HloOpcode::kCeil:
      MapFloat<T>(x, out, threads, [](C v) { return std::ceil(v); });
      return true;
    case HloOpcode::kRoundNearestAfz:
      // Halfway cases away from zero: std::round.
      MapFloat<T>(x, out, threads, [](C v) { return std::round(v); });
      return true;
    case HloOpcode::kRoundNearestEven:
      // XLA uses std::nearbyint and checks the mode is FE_TONEAREST (the
      // default, which nothing here changes).
      MapFloat<T>(x, out, threads, [](C v) { return std::nearbyint(v); });
      return true;
    case HloOpcode::kExp:
      MapFloat<T>(x, out, threads, [](C v) { return std::exp(v); });
      return true;
    case HloOpcode::kExpm1:
      MapFloat<T>(x, out, threads, [](C v) { return std::expm1(v); });
      return true;
    case HloOpcode::kLog:
      MapFloat<T>(x, out, threads, [](C v) { return std::log(v); });
      return true;
    case HloOpcode::kLog1p:
      MapFloat<T>(x, out, threads, [](C v) { return std::log1p(v); });
      return true;
    case HloOpcode::kSqrt:
      MapFloat<T>(x, out, threads, [](C v) { return std::sqrt(v); });
      return true;
    case HloOpcode::kRsqrt:
      MapFloat<T>(x, out, threads, [](C v) { return C(1) / std::sqrt(v); });
      return true;
    case HloOpcode::kCbrt:
      MapFloat<T>(x, out, threads, [](C v) { return std::cbrt(v); });
      return true;
    case HloOpcode::kTanh:
      MapFloat<T>(x, out, threads, [](C v) { return std::tanh(v); });
      return true;
    case HloOpcode::kLogistic:
      // 1 / (1 + exp(-x)), as XLA's HandleLogistic.
      MapFloat<T>(x, out, threads,
                  [](C v) { return C(1) / (C(1) + std::exp(-v)); });
      return true;
    case HloOpcode::kSin:
      MapFloat<T>(x, out, threads, [](C v) { return std::sin(v); });
      return true;
    case HloOpcode::kCos:
      MapFloat<T>(x, out, threads, [](C v) { return std::cos(v); });
      return true;
    case HloOpcode::kTan:
      MapFloat<T>(x, out, threads, [](C v) { return std::tan(v); });
      return true;
    case HloOpcode::kErf:
      MapFloat<T>(x, out, threads, [](C v) { return std::erf(v); });
      return true;
    case HloOpcode::kIsFinite:
      MapUnary<NativeT<T>, bool>(x, out, threads, [](NativeT<T> v) {
        return static_cast<bool>(std::isfinite(Load<T>(v)));
      });
      return true;
    default:
      return false;
  }
}

}  // namespace

Status UnaryFloat(HloOpcode op, const Literal& x, Literal* out, int threads) {
  bool handled = false;
  const bool is_float = DispatchFloatType(
      x.element_type(),
      [&]<PrimitiveType T>() { handled = Apply<T>(op, x, out, threads); });
  if (is_float && handled) return Status::Ok();
  return InvalidArgument(std::string(OpcodeName(op)) +
                         " does not take element type " +
                         std::string(PrimitiveTypeName(x.element_type())));
}

}  // namespace trench::oracle
