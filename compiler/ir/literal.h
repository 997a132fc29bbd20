// Literal: a value of a Shape. Arrays are dense, stored in logical row-major
// order (last dimension fastest) whatever the shape's layout says; the
// layout is kept on the shape as metadata. Tuples hold child literals.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/ir/shape.h"

namespace trench {

// An allocator whose construct() default-initializes, so that resizing a
// byte vector does not zero it (used for buffers about to be overwritten).
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

class Literal {
 public:
  Literal() : shape_(Shape::Tuple({})) {}  // The empty tuple.
  // A zero-filled literal of `shape` (tuples get zero-filled children).
  explicit Literal(const Shape& shape);
  static Literal Tuple(std::vector<Literal> elements);
  // Like Literal(shape) but array bytes are left uninitialized (no zeroing
  // pass over memory). REQUIRES: the caller writes every element before
  // anything reads it.
  static Literal CreateUninitialized(const Shape& shape);

  const Shape& shape() const { return shape_; }
  PrimitiveType element_type() const { return shape_.element_type(); }
  int64_t element_count() const { return shape_.element_count(); }
  // Replaces the layout on this literal's shape (data order is unchanged).
  void set_layout(const std::optional<Layout>& layout);

  // Typed views of array data. REQUIRES: sizeof(T) matches the element
  // type's storage (checked with assert).
  template <typename T>
  std::span<const T> data() const {
    return {reinterpret_cast<const T*>(bytes_.data()),
            bytes_.size() / sizeof(T)};
  }
  template <typename T>
  std::span<T> mutable_data() {
    return {reinterpret_cast<T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }
  template <typename T>
  T Get(std::span<const int64_t> index) const {
    return data<T>()[LinearIndex(index)];
  }
  template <typename T>
  void Set(std::span<const int64_t> index, T v) {
    mutable_data<T>()[LinearIndex(index)] = v;
  }
  // Raw bytes of an array literal.
  std::span<const uint8_t> bytes() const { return bytes_; }
  std::span<uint8_t> mutable_bytes() { return bytes_; }

  // Element i (linear, row-major) as a double / written from a double, for
  // any real array type: integers convert exactly where they fit, floats
  // round to nearest even, pred is 0/1. Complex uses the real part.
  double GetAsDouble(int64_t i) const;
  void SetFromDouble(int64_t i, double v);
  // Element i of an integer or pred array as int64 (u64 wraps).
  int64_t GetAsInt64(int64_t i) const;
  void SetFromInt64(int64_t i, int64_t v);

  int64_t LinearIndex(std::span<const int64_t> index) const;

  // Tuples.
  const std::vector<Literal>& tuple_elements() const { return tuple_; }
  std::vector<Literal>& mutable_tuple_elements() { return tuple_; }
  const Literal& tuple_element(int64_t i) const { return tuple_[i]; }
  // Flattened leaves in tuple order; an array literal is its own leaf.
  std::vector<const Literal*> Leaves() const;

  // Bitwise equality of data with compatible shapes (layouts ignored).
  // NaNs compare equal when their bits are equal.
  bool operator==(const Literal& o) const;

  // A short human-readable form: shape and up to `max_elements` values.
  std::string Summary(int64_t max_elements = 16) const;

 private:
  Shape shape_;
  std::vector<uint8_t, DefaultInitAllocator<uint8_t>> bytes_;
  std::vector<Literal> tuple_;
};

}  // namespace trench
