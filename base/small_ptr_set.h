// SmallPtrSet: a set of pointers that keeps its first few elements in
// place and looks them up by a linear scan, and only past that moves them
// into a hash set. For the many small sets the compiler builds per
// candidate (a fusion's members, the values a walk has seen), this makes
// no heap allocation at all and touches one cache line or a few, where a
// node-based set allocates per element.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <unordered_set>

namespace trench {

template <typename T, size_t kInline = 32>
class SmallPtrSet {
 public:
  SmallPtrSet() = default;
  template <typename It>
  SmallPtrSet(It first, It last) {
    for (; first != last; ++first) insert(*first);
  }

  // Adds `p`; true when it was not there yet.
  bool insert(T p) {
    if (big_.empty()) {
      if (std::find(small_.begin(), small_.begin() + n_, p) !=
          small_.begin() + n_) {
        return false;
      }
      if (n_ < kInline) {
        small_[n_++] = p;
        return true;
      }
      big_.reserve(2 * kInline);
      big_.insert(small_.begin(), small_.begin() + n_);
      n_ = 0;
    }
    return big_.insert(p).second;
  }

  bool contains(T p) const {
    if (big_.empty()) {
      return std::find(small_.begin(), small_.begin() + n_, p) !=
             small_.begin() + n_;
    }
    return big_.count(p) > 0;
  }
  size_t count(T p) const { return contains(p) ? 1 : 0; }
  size_t size() const { return big_.empty() ? n_ : big_.size(); }
  bool empty() const { return size() == 0; }

  // Calls f(p) for every element, in no particular order.
  template <typename F>
  void ForEach(F&& f) const {
    if (big_.empty()) {
      for (size_t i = 0; i < n_; ++i) f(small_[i]);
    } else {
      for (T p : big_) f(p);
    }
  }

 private:
  std::array<T, kInline> small_{};
  size_t n_ = 0;  // Elements in small_ (0 once they moved to big_).
  std::unordered_set<T> big_;
};

}  // namespace trench
