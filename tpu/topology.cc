#include "tpu/topology.h"

#include <cstdlib>

namespace trench::tpu {
namespace {

// Distance between two coordinates on a ring of `n`.
int RingDistance(int a, int b, int n) {
  const int d = std::abs(a - b);
  return d < n - d ? d : n - d;
}

}  // namespace

StatusOr<Topology> Topology::ForChips(int chips) {
  if (chips < 1 || chips > kMaxSliceChips) {
    return InvalidArgument("a slice has 1.." + std::to_string(kMaxSliceChips) +
                           " chips, got " + std::to_string(chips));
  }
  if (chips == 4) return Topology(2, 2);
  if (chips == 8) return Topology(2, 4);
  return Topology(1, chips);
}

int Topology::Hops(int a, int b) const {
  return RingDistance(a / cols_, b / cols_, rows_) +
         RingDistance(a % cols_, b % cols_, cols_);
}

std::vector<int> Topology::Neighbors(int chip) const {
  std::vector<int> out;
  for (int c = 0; c < chips(); ++c) {
    if (Hops(chip, c) == 1) out.push_back(c);
  }
  return out;
}

std::string Topology::ToString() const {
  if (chips() == 1) return "single chip";
  if (rows_ == 1) return "ring of " + std::to_string(cols_);
  return std::to_string(rows_) + "x" + std::to_string(cols_) + " torus";
}

}  // namespace trench::tpu
