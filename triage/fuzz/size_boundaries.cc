// The size boundaries registry expanded into extents (size_boundaries.h).
#include "triage/fuzz/size_boundaries.h"

#include <algorithm>

namespace trench::fuzz {

const std::vector<SizeBoundary>& SizeBoundaries() {
  static const auto* v = new std::vector<SizeBoundary>{
#define X(e, name, value, unit, source) {name, value, SizeUnit::unit, source},
#include "triage/fuzz/size_boundaries.def"
#undef X
  };
  return *v;
}

const std::vector<ElementBoundary>& DefaultBoundaries() {
  static const auto* v = [] {
    auto* out = new std::vector<ElementBoundary>;
    auto add = [&](std::string name, int64_t n) {
      if (n < 1) return;
      for (const ElementBoundary& b : *out) {
        if (b.elements == n) return;
      }
      out->push_back({std::move(name), n});
    };
    for (const SizeBoundary& b : SizeBoundaries()) {
      if (b.unit == SizeUnit::kElements) {
        add(std::string(b.name), b.value);
        continue;
      }
      for (int bytes : {4, 2, 1, 8}) {
        add(std::string(b.name) + "/" + std::to_string(bytes), b.value / bytes);
      }
    }
    return out;
  }();
  return *v;
}

std::vector<int64_t> BoundaryDims(const std::vector<int64_t>& boundaries,
                                  int64_t max_extent) {
  std::vector<int64_t> out;
  for (int64_t b : boundaries) {
    for (int64_t k = 1; k <= 3; ++k) {
      for (int64_t d = k * b - 1; d <= k * b + 1; ++d) {
        if (d >= 1 && d <= max_extent) out.push_back(d);
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> NearBoundary(int64_t d,
                                      const std::vector<ElementBoundary>& bs) {
  std::vector<std::string> out;
  auto is_boundary = [&](int64_t v) {
    for (const ElementBoundary& b : bs) {
      if (b.elements == v) return true;
    }
    return false;
  };
  for (const ElementBoundary& b : bs) {
    for (int64_t k = 1; k <= 3; ++k) {
      const int64_t off = d - k * b.elements;
      if (off < -1 || off > 1) continue;
      // 2 * 32 is reported as 64 when 64 is a boundary of its own.
      if (k > 1 && is_boundary(k * b.elements)) continue;
      std::string s = k == 1 ? b.name : std::to_string(k) + "*" + b.name;
      if (off < 0) s += "-1";
      if (off > 0) s += "+1";
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace trench::fuzz
