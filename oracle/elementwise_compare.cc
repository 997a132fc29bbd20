// compare, select and clamp.
//
// compare: floats with type FLOAT (or no type=) use IEEE comparisons, where
// NaN is unordered (every direction but NE is false). TOTALORDER maps each
// float's bits to a signed-magnitude integer key, so that
// -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN and EQ is bit equality
// (XLA's evaluator Compare(): ToSignMagnitude when IsTotalOrder()).
// Integers compare by their own type's signedness, whatever type= says (the
// evaluator ignores it for integers too); SIGNED/UNSIGNED on floats is an
// error. bf16/f16 compare on their f32 values, which is exact.
//
// clamp(lo, x, hi): the first NaN among lo, x, hi (in that order) is the
// result; otherwise std::min(hi, std::max(x, lo)) (XLA's HandleClamp).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "oracle/elementwise.h"
#include "oracle/elementwise_loops.h"

namespace trench::oracle {
namespace {

template <typename X, typename F>
void MapCompare(ComparisonDirection dir, const Literal& a, const Literal& b,
                Literal* out, int threads, F key) {
  auto run = [&](auto cmp) {
    MapBinary<X, X, bool>(a, b, out, threads,
                          [=](X x, X y) { return cmp(key(x), key(y)); });
  };
  switch (dir) {
    case ComparisonDirection::kEq:
      run([](auto x, auto y) { return x == y; });
      break;
    case ComparisonDirection::kNe:
      run([](auto x, auto y) { return x != y; });
      break;
    case ComparisonDirection::kLt:
      run([](auto x, auto y) { return x < y; });
      break;
    case ComparisonDirection::kLe:
      run([](auto x, auto y) { return x <= y; });
      break;
    case ComparisonDirection::kGt:
      run([](auto x, auto y) { return x > y; });
      break;
    case ComparisonDirection::kGe:
      run([](auto x, auto y) { return x >= y; });
      break;
  }
}

// The total-order key of a float's bit pattern: negative values have their
// magnitude bits flipped so larger magnitudes sort lower.
template <typename S>
S SignMagnitudeKey(S bits) {
  using U = std::make_unsigned_t<S>;
  const U magnitude_mask = static_cast<U>(~U(0)) >> 1;
  return bits < 0 ? static_cast<S>(static_cast<U>(bits) ^ magnitude_mask)
                  : bits;
}

template <PrimitiveType T>
void CompareFloat(ComparisonDirection dir, bool total_order, const Literal& a,
                  const Literal& b, Literal* out, int threads) {
  using N = NativeT<T>;
  if (total_order) {
    using S = std::conditional_t<
        sizeof(N) == 2, int16_t,
        std::conditional_t<sizeof(N) == 4, int32_t, int64_t>>;
    MapCompare<N>(dir, a, b, out, threads,
                  [](N v) { return SignMagnitudeKey(std::bit_cast<S>(v)); });
  } else {
    MapCompare<N>(dir, a, b, out, threads, [](N v) { return Load<T>(v); });
  }
}

}  // namespace

Status CompareOp(ComparisonDirection dir, ComparisonType type, const Literal& a,
                 const Literal& b, Literal* out, int threads) {
  const PrimitiveType t = a.element_type();
  if (b.element_type() != t) {
    return InvalidArgument("compare operands have different element types");
  }
  if (t == PrimitiveType::PRED) {
    MapCompare<uint8_t>(dir, a, b, out, threads,
                        [](uint8_t v) { return v != 0 ? 1 : 0; });
    return Status::Ok();
  }
  if (IsFloat(t)) {
    if (type == ComparisonType::kSigned || type == ComparisonType::kUnsigned) {
      return InvalidArgument(std::string("comparison type ") +
                             ComparisonTypeName(type) + " on float type " +
                             std::string(PrimitiveTypeName(t)));
    }
    DispatchFloatType(t, [&]<PrimitiveType T>() {
      CompareFloat<T>(dir, type == ComparisonType::kTotalOrder, a, b, out,
                      threads);
    });
    return Status::Ok();
  }
  if (DispatchIntType(t, [&]<PrimitiveType T>() {
        using N = NativeT<T>;
        MapCompare<N>(dir, a, b, out, threads, [](N v) { return v; });
      })) {
    return Status::Ok();
  }
  // Complex: only equality is defined.
  if (IsComplex(t) &&
      (dir == ComparisonDirection::kEq || dir == ComparisonDirection::kNe)) {
    DispatchComplexType(t, [&]<PrimitiveType T>() {
      using N = NativeT<T>;
      const bool eq = dir == ComparisonDirection::kEq;
      MapBinary<N, N, bool>(a, b, out, threads,
                            [eq](N x, N y) { return (x == y) == eq; });
    });
    return Status::Ok();
  }
  return InvalidArgument(
      std::string("compare ") + ComparisonDirectionName(dir) +
      " does not take element type " + std::string(PrimitiveTypeName(t)));
}

Status SelectOp(const Literal& pred, const Literal& on_true,
                const Literal& on_false, Literal* out, int threads) {
  if (pred.element_type() != PrimitiveType::PRED) {
    return InvalidArgument("select predicate must be pred, got " +
                           std::string(PrimitiveTypeName(pred.element_type())));
  }
  if (on_true.element_type() != out->element_type() ||
      on_false.element_type() != out->element_type()) {
    return InvalidArgument("select branches must have the result type");
  }
  // Selection moves bits: dispatch on the element width only.
  auto run = [&]<typename B>() {
    MapTernary<uint8_t, B, B, B>(
        pred, on_true, on_false, out, threads,
        [](uint8_t p, B t, B f) { return p != 0 ? t : f; });
  };
  struct Bytes16 {
    uint64_t lo, hi;
  };
  switch (ByteWidth(out->element_type())) {
    case 1:
      run.template operator()<uint8_t>();
      break;
    case 2:
      run.template operator()<uint16_t>();
      break;
    case 4:
      run.template operator()<uint32_t>();
      break;
    case 8:
      run.template operator()<uint64_t>();
      break;
    case 16:
      run.template operator()<Bytes16>();
      break;
    default:
      return InvalidArgument("select on a non-array type");
  }
  return Status::Ok();
}

Status ClampOp(const Literal& lo, const Literal& x, const Literal& hi,
               Literal* out, int threads) {
  const PrimitiveType t = x.element_type();
  if (lo.element_type() != t || hi.element_type() != t) {
    return InvalidArgument("clamp operands have different element types");
  }
  const bool is_float = DispatchFloatType(t, [&]<PrimitiveType T>() {
    using N = NativeT<T>;
    using C = ComputeT<T>;
    MapTernary<N, N, N, N>(lo, x, hi, out, threads, [](N l, N v, N h) {
      const C cl = Load<T>(l), cv = Load<T>(v), ch = Load<T>(h);
      if (std::isnan(cl)) return Store<T>(cl);
      if (std::isnan(cv)) return Store<T>(cv);
      if (std::isnan(ch)) return Store<T>(ch);
      return Store<T>(std::min(ch, std::max(cv, cl)));
    });
  });
  if (is_float) return Status::Ok();
  if (DispatchIntType(t, [&]<PrimitiveType T>() {
        using N = NativeT<T>;
        MapTernary<N, N, N, N>(lo, x, hi, out, threads, [](N l, N v, N h) {
          return std::min(h, std::max(v, l));
        });
      })) {
    return Status::Ok();
  }
  if (t == PrimitiveType::PRED) {
    MapTernary<uint8_t, uint8_t, uint8_t, uint8_t>(
        lo, x, hi, out, threads, [](uint8_t l, uint8_t v, uint8_t h) {
          const uint8_t bl = l != 0, bv = v != 0, bh = h != 0;
          return std::min(bh, std::max(bv, bl));
        });
    return Status::Ok();
  }
  return InvalidArgument("clamp does not take element type " +
                         std::string(PrimitiveTypeName(t)));
}

}  // namespace trench::oracle
