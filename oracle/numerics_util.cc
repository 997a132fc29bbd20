// Per-type constants and bound-literal helpers of the numerics contract.
#include <algorithm>
#include <cmath>
#include <limits>

#include "oracle/index_util.h"
#include "oracle/numerics_internal.h"

namespace trench::oracle::numerics {

double UnitRoundoff(PrimitiveType t) {
  if (IsComplex(t)) {
    return UnitRoundoff(t == PrimitiveType::C64 ? PrimitiveType::F32
                                                : PrimitiveType::F64);
  }
  if (!IsFloat(t)) return 0;
  return std::ldexp(1.0, -(MantissaBits(t) + 1));
}

double MinSubnormal(PrimitiveType t) {
  if (IsComplex(t)) {
    return MinSubnormal(t == PrimitiveType::C64 ? PrimitiveType::F32
                                                : PrimitiveType::F64);
  }
  if (!IsFloat(t)) return 0;
  const int emin = 2 - (1 << (ExponentBits(t) - 1));  // 1 - bias.
  return std::ldexp(1.0, emin - MantissaBits(t));
}

Literal AbsPlus(const Literal& v, const Literal* e) {
  std::vector<double> x = AsDoubles(v);
  const auto ed = e ? e->data<double>() : std::span<const double>();
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = std::fabs(x[i]) + (e ? ed[i] : 0);
  }
  return F64Array(v.shape().dims(), x);
}

void ClampAbove(Literal& v, double hi) {
  for (double& x : v.mutable_data<double>()) x = std::min(x, hi);
}

void ClampBelow(Literal& v, double lo) {
  for (double& x : v.mutable_data<double>()) x = std::max(x, lo);
}

double MinNormal(PrimitiveType t) {
  if (IsComplex(t)) {
    return MinNormal(t == PrimitiveType::C64 ? PrimitiveType::F32
                                             : PrimitiveType::F64);
  }
  if (!IsFloat(t)) return 0;
  return std::ldexp(1.0, 2 - (1 << (ExponentBits(t) - 1)));
}

double OverflowThreshold(PrimitiveType t) {
  if (t == PrimitiveType::F64 || t == PrimitiveType::C128) {
    return std::numeric_limits<double>::max();
  }
  if (t == PrimitiveType::C64) t = PrimitiveType::F32;
  if (!IsFloat(t)) return kInf;
  const int emax = (1 << (ExponentBits(t) - 1)) - 1;
  // max + ulp(max)/2 = 2^emax * (2 - 2^-p): from there RNE gives inf.
  return std::ldexp(2.0 - std::ldexp(1.0, -(MantissaBits(t) + 1)), emax);
}

double AccumulatorRoundoff(PrimitiveType t) {
  if (t == PrimitiveType::F64 || t == PrimitiveType::C128) {
    return UnitRoundoff(PrimitiveType::F64);
  }
  return UnitRoundoff(PrimitiveType::F32);
}

Shape F64Shape(const Shape& shape) {
  if (shape.IsTuple()) {
    std::vector<Shape> elements;
    for (const Shape& s : shape.tuple_shapes()) elements.push_back(F64Shape(s));
    return Shape::Tuple(std::move(elements));
  }
  if (!shape.IsArray()) return shape;
  Shape out = shape;
  out.set_element_type(PrimitiveType::F64);
  out.clear_layout();
  return out;
}

Literal FilledBound(const Shape& shape, double value) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& s : shape.tuple_shapes()) {
      elements.push_back(FilledBound(s, value));
    }
    return Literal::Tuple(std::move(elements));
  }
  if (!shape.IsArray()) return Literal(shape);
  Literal out(F64Shape(shape));
  if (value != 0) {
    for (double& x : out.mutable_data<double>()) x = value;
  }
  return out;
}

bool AllZero(const Literal& e) {
  if (e.shape().IsTuple()) {
    for (const Literal& c : e.tuple_elements()) {
      if (!AllZero(c)) return false;
    }
    return true;
  }
  if (e.element_type() != PrimitiveType::F64) return true;
  for (double x : e.data<double>()) {
    if (x != 0) return false;
  }
  return true;
}

void MakeUndetermined(Literal& e) {
  if (e.shape().IsTuple()) {
    for (Literal& c : e.mutable_tuple_elements()) MakeUndetermined(c);
    return;
  }
  if (e.element_type() != PrimitiveType::F64) return;
  for (double& x : e.mutable_data<double>()) x = kInf;
}

std::vector<double> AsDoubles(const Literal& lit) {
  std::vector<double> out(lit.element_count());
  DispatchArrayType(lit.element_type(), [&]<PrimitiveType T>() {
    using N = NativeT<T>;
    if constexpr (std::is_same_v<N, c64> || std::is_same_v<N, c128>) {
      const auto d = lit.data<N>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = d[i].real();
    } else {
      const auto d = lit.data<N>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = ToDouble(d[i]);
    }
  });
  return out;
}

Literal F64Array(const std::vector<int64_t>& dims,
                 std::span<const double> values) {
  Literal out = Literal::CreateUninitialized(Shape(PrimitiveType::F64, dims));
  auto d = out.mutable_data<double>();
  std::copy(values.begin(), values.begin() + d.size(), d.begin());
  return out;
}

}  // namespace trench::oracle::numerics
