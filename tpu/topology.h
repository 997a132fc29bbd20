// The slice's interconnect topology: which chips are linked and how many
// hops apart two chips are. A slice of N chips (1..kMaxSliceChips) is a
// torus of rows x cols: 4 chips are a 2x2 torus, 8 a 2x4 torus, any other
// N a ring (a 1xN torus; one chip has no links). Chip i sits at row
// i / cols, column i % cols. Messages take a shortest path, wrapping
// around in each dimension.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace trench::tpu {

inline constexpr int kMaxSliceChips = 8;

class Topology {
 public:
  // InvalidArgument unless 1 <= chips <= kMaxSliceChips.
  static StatusOr<Topology> ForChips(int chips);

  int chips() const { return rows_ * cols_; }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  // Links on the shortest path from `a` to `b` (0 when a == b).
  // REQUIRES: both in [0, chips()).
  int Hops(int a, int b) const;
  // The chips one hop from `chip`, ascending, each once.
  std::vector<int> Neighbors(int chip) const;
  // "single chip", "ring of 3", "2x2 torus".
  std::string ToString() const;

 private:
  Topology(int rows, int cols) : rows_(rows), cols_(cols) {}
  int rows_;
  int cols_;
};

}  // namespace trench::tpu
