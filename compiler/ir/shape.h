// Shapes: an element type with dimensions and an optional layout, or a tuple
// of shapes. Printed and parsed in XLA's syntax: f32[2,3]{1,0}, s32[<=8],
// (f32[], pred[4]), token[].
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/ir/dtype.h"

namespace trench {

// Physical order of dimensions, XLA style: minor_to_major[0] is the fastest
// varying dimension. Anything after ':' in the text (tiling T(8,128),
// element size, memory space S(1), ...) is kept verbatim in `tail`.
struct Layout {
  std::vector<int64_t> minor_to_major;
  std::string tail;  // Without the ':'; empty when absent.

  bool operator==(const Layout&) const = default;
  std::string ToString() const;  // "{1,0}" or "{1,0:T(8,128)}".
};

class Shape {
 public:
  Shape() = default;  // An empty tuple.
  // An array shape with no layout. REQUIRES: IsArrayType(t) or TOKEN.
  Shape(PrimitiveType t, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token() { return Shape(PrimitiveType::TOKEN, {}); }

  PrimitiveType element_type() const { return type_; }
  void set_element_type(PrimitiveType t) { type_ = t; }
  bool IsTuple() const { return type_ == PrimitiveType::TUPLE; }
  bool IsToken() const { return type_ == PrimitiveType::TOKEN; }
  bool IsArray() const { return IsArrayType(type_); }

  // Array shapes.
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t dim(int64_t i) const { return dims_[i]; }
  void set_dim(int64_t i, int64_t v) { dims_[i] = v; }
  // True when dim i is a bound (<=N) rather than a static size. An
  // unbounded dynamic dimension (`?`) has size -1.
  bool is_dynamic_dim(int64_t i) const {
    return !dynamic_.empty() && dynamic_[i];
  }
  void set_dynamic_dim(int64_t i, bool dynamic);
  bool is_dynamic() const;
  // Product of dims (1 for rank 0). 0 for tuples, tokens and shapes with
  // an unbounded (-1) dim; saturates at INT64_MAX instead of overflowing.
  // Callers that allocate must bound it first.
  int64_t element_count() const;
  // element_count() * element width, saturating like element_count().
  int64_t byte_size() const;

  const std::optional<Layout>& layout() const { return layout_; }
  bool has_layout() const { return layout_.has_value(); }
  void set_layout(Layout l) { layout_ = std::move(l); }
  void clear_layout();  // Recursively for tuples.
  // minor_to_major of the layout, or the default {rank-1, ..., 0}.
  std::vector<int64_t> minor_to_major() const;

  // Tuple shapes.
  const std::vector<Shape>& tuple_shapes() const { return tuple_; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_; }
  const Shape& tuple_shape(int64_t i) const { return tuple_[i]; }
  int64_t tuple_size() const { return static_cast<int64_t>(tuple_.size()); }

  // Same types, dims, dynamic bounds and layouts (recursively).
  bool operator==(const Shape& o) const = default;
  // Same types and dims; layouts ignored.
  bool Compatible(const Shape& o) const;
  // Same dims and dynamic flags, layouts ignored (types may differ).
  bool SameDimensions(const Shape& o) const;

  // "f32[2,3]{1,0}". With print_layout false, layouts are omitted.
  std::string ToString(bool print_layout = true) const;

  // Row-major strides in elements of the array shape.
  std::vector<int64_t> RowMajorStrides() const;

 private:
  PrimitiveType type_ = PrimitiveType::TUPLE;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;  // Empty, or one flag per dim.
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_;
};

// Visits every array (leaf) subshape in flattened tuple order.
void ForEachLeafShape(const Shape& shape,
                      const std::function<void(const Shape&)>& f);
// Number of leaves in flattened order (1 for an array).
int64_t LeafCount(const Shape& shape);

}  // namespace trench
