#include "compiler/ir/shape.h"

#include <limits>
#include <numeric>

namespace trench {

std::string Layout::ToString() const {
  std::string s = "{";
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(minor_to_major[i]);
  }
  if (!tail.empty()) s += ":" + tail;
  return s + "}";
}

Shape::Shape(PrimitiveType t, std::vector<int64_t> dims)
    : type_(t), dims_(std::move(dims)) {}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.type_ = PrimitiveType::TUPLE;
  s.tuple_ = std::move(elements);
  return s;
}

void Shape::set_dynamic_dim(int64_t i, bool dynamic) {
  if (dynamic_.empty()) {
    if (!dynamic) return;
    dynamic_.assign(dims_.size(), false);
  }
  dynamic_[i] = dynamic;
  if (!is_dynamic()) dynamic_.clear();  // Keep one canonical form.
}

bool Shape::is_dynamic() const {
  for (bool d : dynamic_) {
    if (d) return true;
  }
  return false;
}

int64_t Shape::element_count() const {
  if (!IsArray()) return 0;
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d <= 0) return 0;
    if (__builtin_mul_overflow(n, d, &n)) {
      return std::numeric_limits<int64_t>::max();
    }
  }
  return n;
}

int64_t Shape::byte_size() const {
  int64_t bytes;
  if (__builtin_mul_overflow(element_count(), int64_t{ByteWidth(type_)},
                             &bytes)) {
    return std::numeric_limits<int64_t>::max();
  }
  return bytes;
}

void Shape::clear_layout() {
  layout_.reset();
  for (Shape& s : tuple_) s.clear_layout();
}

std::vector<int64_t> Shape::minor_to_major() const {
  if (layout_ && layout_->minor_to_major.size() == dims_.size()) {
    return layout_->minor_to_major;
  }
  std::vector<int64_t> m(dims_.size());
  for (size_t i = 0; i < m.size(); ++i) m[i] = rank() - 1 - i;
  return m;
}

bool Shape::Compatible(const Shape& o) const {
  if (type_ != o.type_) return false;
  if (IsTuple()) {
    if (tuple_.size() != o.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].Compatible(o.tuple_[i])) return false;
    }
    return true;
  }
  return SameDimensions(o);
}

bool Shape::SameDimensions(const Shape& o) const {
  return dims_ == o.dims_ && dynamic_ == o.dynamic_;
}

std::string Shape::ToString(bool print_layout) const {
  if (IsTuple()) {
    std::string s = "(";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i) s += ", ";
      s += tuple_[i].ToString(print_layout);
    }
    return s + ")";
  }
  std::string s(PrimitiveTypeName(type_));
  s += "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    if (is_dynamic_dim(i) && dims_[i] < 0) {
      s += "?";  // Unbounded dynamic dimension.
      continue;
    }
    if (is_dynamic_dim(i)) s += "<=";
    s += std::to_string(dims_[i]);
  }
  s += "]";
  if (print_layout && layout_ && IsArray()) s += layout_->ToString();
  return s;
}

std::vector<int64_t> Shape::RowMajorStrides() const {
  std::vector<int64_t> strides(dims_.size(), 1);
  for (int64_t i = rank() - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims_[i + 1];
  }
  return strides;
}

void ForEachLeafShape(const Shape& shape,
                      const std::function<void(const Shape&)>& f) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) ForEachLeafShape(s, f);
  } else {
    f(shape);
  }
}

int64_t LeafCount(const Shape& shape) {
  int64_t n = 0;
  ForEachLeafShape(shape, [&](const Shape&) { ++n; });
  return n;
}

}  // namespace trench
