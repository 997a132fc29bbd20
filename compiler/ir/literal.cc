#include "compiler/ir/literal.h"

#include <cassert>
#include <cmath>
#include <sstream>

namespace trench {

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) tuple_.emplace_back(s);
  } else if (shape.IsArray()) {
    bytes_.assign(static_cast<size_t>(shape.byte_size()), 0);
  }
}

Literal Literal::CreateUninitialized(const Shape& shape) {
  if (!shape.IsArray()) return Literal(shape);
  Literal lit;
  lit.shape_ = shape;
  lit.bytes_.resize(static_cast<size_t>(shape.byte_size()));
  return lit;
}

Literal Literal::Tuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  for (const Literal& e : elements) shapes.push_back(e.shape());
  Literal lit;
  lit.shape_ = Shape::Tuple(std::move(shapes));
  lit.tuple_ = std::move(elements);
  return lit;
}

void Literal::set_layout(const std::optional<Layout>& layout) {
  if (layout) {
    shape_.set_layout(*layout);
  } else {
    shape_.clear_layout();
  }
}

double Literal::GetAsDouble(int64_t i) const {
  return DispatchArrayType(element_type(), [&]<PrimitiveType T>() -> double {
    using N = NativeT<T>;
    N v = data<N>()[i];
    if constexpr (T == PrimitiveType::C64 || T == PrimitiveType::C128) {
      return static_cast<double>(v.real());
    } else {
      return static_cast<double>(
          static_cast<std::conditional_t<
              T == PrimitiveType::F16 || T == PrimitiveType::BF16, float, N>>(
              v));
    }
  });
}

namespace {

// Float to integer as XLA's convert does: NaN -> 0, saturate at the ends.
template <typename I>
I SaturatingFromDouble(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) {
    return std::numeric_limits<I>::min();
  }
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) {
    return std::numeric_limits<I>::max();
  }
  return static_cast<I>(v);
}

}  // namespace

void Literal::SetFromDouble(int64_t i, double v) {
  DispatchArrayType(element_type(), [&]<PrimitiveType T>() {
    using N = NativeT<T>;
    N& dst = mutable_data<N>()[i];
    if constexpr (T == PrimitiveType::PRED) {
      dst = v != 0;
    } else if constexpr (T == PrimitiveType::F16) {
      dst = f16::FromBits(F64ToF16Bits(v));
    } else if constexpr (T == PrimitiveType::BF16) {
      dst = bf16::FromBits(F64ToBf16Bits(v));
    } else if constexpr (T == PrimitiveType::C64 || T == PrimitiveType::C128) {
      dst = N(static_cast<typename N::value_type>(v), 0);
    } else if constexpr (std::is_floating_point_v<N>) {
      dst = static_cast<N>(v);
    } else {
      dst = SaturatingFromDouble<N>(v);
    }
  });
}

int64_t Literal::GetAsInt64(int64_t i) const {
  return DispatchArrayType(element_type(), [&]<PrimitiveType T>() -> int64_t {
    using N = NativeT<T>;
    if constexpr (std::is_integral_v<N>) {
      return static_cast<int64_t>(data<N>()[i]);
    } else {
      return static_cast<int64_t>(GetAsDouble(i));
    }
  });
}

void Literal::SetFromInt64(int64_t i, int64_t v) {
  DispatchArrayType(element_type(), [&]<PrimitiveType T>() {
    using N = NativeT<T>;
    if constexpr (T == PrimitiveType::PRED) {
      mutable_data<N>()[i] = v != 0;
    } else if constexpr (std::is_integral_v<N>) {
      mutable_data<N>()[i] = static_cast<N>(v);  // Wraps, as XLA's convert.
    } else {
      SetFromDouble(i, static_cast<double>(v));
    }
  });
}

int64_t Literal::LinearIndex(std::span<const int64_t> index) const {
  int64_t linear = 0;
  const auto& dims = shape_.dims();
  assert(index.size() == dims.size());
  for (size_t d = 0; d < dims.size(); ++d) linear = linear * dims[d] + index[d];
  return linear;
}

std::vector<const Literal*> Literal::Leaves() const {
  std::vector<const Literal*> out;
  if (!shape_.IsTuple()) {
    out.push_back(this);
    return out;
  }
  for (const Literal& e : tuple_) {
    for (const Literal* l : e.Leaves()) out.push_back(l);
  }
  return out;
}

bool Literal::operator==(const Literal& o) const {
  if (!shape_.Compatible(o.shape_)) return false;
  if (shape_.IsTuple()) return tuple_ == o.tuple_;
  return bytes_ == o.bytes_;
}

std::string Literal::Summary(int64_t max_elements) const {
  std::ostringstream os;
  os << shape_.ToString(false);
  if (shape_.IsTuple()) {
    os << " (";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      os << (i ? ", " : "") << tuple_[i].Summary(max_elements);
    }
    os << ")";
    return os.str();
  }
  if (!shape_.IsArray()) return os.str();
  os << " {";
  const int64_t n = element_count();
  for (int64_t i = 0; i < n && i < max_elements; ++i) {
    os << (i ? ", " : "");
    if (IsInteger(element_type()) || element_type() == PrimitiveType::PRED) {
      if (element_type() == PrimitiveType::U64) {
        os << static_cast<uint64_t>(GetAsInt64(i));
      } else {
        os << GetAsInt64(i);
      }
    } else {
      os << GetAsDouble(i);
    }
  }
  if (n > max_elements) os << ", ...";
  os << "}";
  return os.str();
}

}  // namespace trench
