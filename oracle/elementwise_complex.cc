// The complex-number ops the oracle supports: real, imag, complex, and plain
// complex arithmetic. Transcendental complex functions are Unimplemented:
// their branch cuts would need XLA's exact formulas to be a trustworthy
// reference.
#include <cmath>
#include <string>

#include "oracle/elementwise.h"
#include "oracle/elementwise_loops.h"

namespace trench::oracle {
namespace {

std::string TypeName(PrimitiveType t) {
  return std::string(PrimitiveTypeName(t));
}

// real/imag of a real float: the value itself and zero (XLA allows both on
// real types).
Status RealImagOfReal(HloOpcode op, const Literal& x, Literal* out,
                      int threads) {
  const bool imag = op == HloOpcode::kImag;
  const bool ok = DispatchFloatType(x.element_type(), [&]<PrimitiveType T>() {
    using N = NativeT<T>;
    MapUnary<N, N>(x, out, threads,
                   [imag](N v) { return imag ? Store<T>(0.0f) : v; });
  });
  if (ok) return Status::Ok();
  return InvalidArgument(std::string(OpcodeName(op)) +
                         " does not take element type " +
                         TypeName(x.element_type()));
}

template <PrimitiveType T>
bool ApplyComplex(HloOpcode op, Operands ops, Literal* out, int threads) {
  using N = NativeT<T>;
  using R = typename N::value_type;
  const Literal& a = *ops[0];
  switch (op) {
    case HloOpcode::kReal:
      MapUnary<N, R>(a, out, threads, [](N v) { return v.real(); });
      return true;
    case HloOpcode::kImag:
      MapUnary<N, R>(a, out, threads, [](N v) { return v.imag(); });
      return true;
    case HloOpcode::kAbs:
      MapUnary<N, R>(a, out, threads, [](N v) { return std::abs(v); });
      return true;
    case HloOpcode::kNegate:
      MapUnary<N, N>(a, out, threads, [](N v) { return -v; });
      return true;
    case HloOpcode::kAdd:
      MapBinary<N, N, N>(a, *ops[1], out, threads,
                         [](N x, N y) { return x + y; });
      return true;
    case HloOpcode::kSubtract:
      MapBinary<N, N, N>(a, *ops[1], out, threads,
                         [](N x, N y) { return x - y; });
      return true;
    case HloOpcode::kMultiply:
      MapBinary<N, N, N>(a, *ops[1], out, threads,
                         [](N x, N y) { return x * y; });
      return true;
    case HloOpcode::kDivide:
      MapBinary<N, N, N>(a, *ops[1], out, threads,
                         [](N x, N y) { return x / y; });
      return true;
    default:
      return false;
  }
}

}  // namespace

Status ComplexOp(HloOpcode op, Operands ops, Literal* out, int threads) {
  const PrimitiveType t = ops[0]->element_type();
  if (op == HloOpcode::kComplex) {
    const PrimitiveType o = out->element_type();
    if (ops[1]->element_type() != t ||
        !((t == PrimitiveType::F32 && o == PrimitiveType::C64) ||
          (t == PrimitiveType::F64 && o == PrimitiveType::C128))) {
      return InvalidArgument(
          "complex takes f32 parts to c64 or f64 parts to "
          "c128, got " +
          TypeName(t) + " -> " + TypeName(o));
    }
    DispatchComplexType(o, [&]<PrimitiveType T>() {
      using N = NativeT<T>;
      using R = typename N::value_type;
      MapBinary<R, R, N>(*ops[0], *ops[1], out, threads,
                         [](R re, R im) { return N(re, im); });
    });
    return Status::Ok();
  }
  if (!IsComplex(t)) {
    if (op == HloOpcode::kReal || op == HloOpcode::kImag) {
      return RealImagOfReal(op, *ops[0], out, threads);
    }
    return Internal("ComplexOp on a real type");
  }
  bool handled = false;
  DispatchComplexType(t, [&]<PrimitiveType T>() {
    handled = ApplyComplex<T>(op, ops, out, threads);
  });
  if (handled) return Status::Ok();
  return Unimplemented(std::string(OpcodeName(op)) + " on " + TypeName(t) +
                       " is not supported by the oracle");
}

}  // namespace trench::oracle
