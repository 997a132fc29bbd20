// Tiling and VMEM-block boundaries of the code generator, as dimension
// extents for the generator (size_boundaries.def lists them with the
// target constant each comes from).
//
// BoundaryDims(boundaries, max_extent) expands boundaries (in elements)
// into the extents b - 1, b, b + 1 for b, 2b and 3b, those within
// [1, max_extent], sorted and unique. DefaultBoundaries() is the
// registry's list in elements (byte boundaries divided by 1, 2, 4 and 8).
// NearBoundary(d, boundaries) names which boundaries an extent is next to
// (for the feature histogram): "lanes-1", "lanes", "lanes+1", "2*lanes+1"...
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trench::fuzz {

enum class SizeUnit { kElements, kBytes };

struct SizeBoundary {
  std::string_view name;
  int64_t value;
  SizeUnit unit;
  std::string_view source;
};

// The registry, in order.
const std::vector<SizeBoundary>& SizeBoundaries();

// A boundary in elements with the name to report it under ("dma_run/4" is
// kDmaRun for 4-byte elements).
struct ElementBoundary {
  std::string name;
  int64_t elements;
};

// The registry's boundaries in elements (see the file comment); unique by
// value (the first name wins).
const std::vector<ElementBoundary>& DefaultBoundaries();

// Extents b-1, b, b+1 for b in {k * boundary : k = 1, 2, 3} within
// [1, max_extent], sorted, unique.
std::vector<int64_t> BoundaryDims(const std::vector<int64_t>& boundaries,
                                  int64_t max_extent);

// The labels of the boundaries extent d is next to: "<name><off>" for the
// multiple k = 1 ("lanes-1", "lanes", "lanes+1") and "<k>*<name><off>"
// for k = 2, 3 (unless k * boundary is a boundary itself). Empty when
// none.
std::vector<std::string> NearBoundary(int64_t d,
                                      const std::vector<ElementBoundary>& bs);

}  // namespace trench::fuzz
