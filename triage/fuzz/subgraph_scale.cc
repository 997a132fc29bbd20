// Shape scaling of subgraph modules (see ScaleShapes in subgraph.h).
#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/opcode.h"
#include "compiler/ir/verifier.h"
#include "triage/fuzz/subgraph.h"

namespace trench {
namespace {

// A size f may scale: divisible, and at least kMinScaledSize once scaled.
bool Scalable(int64_t d, int64_t f) {
  return d > 0 && d % f == 0 && d / f >= kMinScaledSize;
}

// The size map of the scheme: d -> d / g(d), with g(d) a power of two
// dividing d. Sizes without an entry in `g` (every size a module holds
// that no reshape group holds, and sizes that are no dim, such as pad
// edges) take the default: for d >= min_dim, f when f may scale d, else
// (`capped`) the largest power of two below f that may, else 1.
struct SizeMap {
  int64_t f = 1;
  int64_t min_dim = kMinScaledDim;
  bool capped = false;
  std::unordered_map<int64_t, int64_t> g;
  int64_t factor(int64_t d) const {
    if (auto it = g.find(d); it != g.end()) return it->second;
    if (d < min_dim) return 1;
    if (!capped) return Scalable(d, f) ? f : 1;
    int64_t p = f;
    while (p > 1 && !Scalable(d, p)) p /= 2;
    return p;
  }
  int64_t operator()(int64_t d) const { return d / factor(d); }
};

// The sizes of a group of consecutive dims that a reshape (or bitcast)
// splits or merges, one side each (size-1 dims left out): their products
// are equal, and a side has more than one dim.
struct ReshapeGroup {
  std::vector<int64_t> a, b;
};

std::vector<ReshapeGroup> ReshapeGroups(const HloModule& m) {
  std::vector<ReshapeGroup> groups;
  for (const HloComputation* c : m.computations()) {
    for (const HloInstruction* r : c->instructions()) {
      if ((r->opcode() != HloOpcode::kReshape &&
           r->opcode() != HloOpcode::kBitcast) ||
          r->operand_count() != 1 || !r->shape().IsArray() ||
          !r->operand(0)->shape().IsArray()) {
        continue;
      }
      const std::vector<int64_t>& a = r->operand(0)->shape().dims();
      const std::vector<int64_t>& b = r->shape().dims();
      size_t i = 0, j = 0;
      while (i < a.size() || j < b.size()) {
        ReshapeGroup g;
        int64_t pa = 1, pb = 1;
        auto take_a = [&] {
          pa *= a[i];
          if (a[i] != 1) g.a.push_back(a[i]);
          ++i;
        };
        auto take_b = [&] {
          pb *= b[j];
          if (b[j] != 1) g.b.push_back(b[j]);
          ++j;
        };
        if (i < a.size()) take_a();
        if (j < b.size()) take_b();
        while (pa != pb && pa > 0 && pb > 0) {
          if (pa < pb && i < a.size()) {
            take_a();
          } else if (pb < pa && j < b.size()) {
            take_b();
          } else {
            break;
          }
        }
        if (g.a.size() > 1 || g.b.size() > 1) groups.push_back(std::move(g));
      }
    }
  }
  return groups;
}

// How often `d` occurs in `side`.
int64_t Count(const std::vector<int64_t>& side, int64_t d) {
  return std::count(side.begin(), side.end(), d);
}

// The size map for f. Balanced: each reshape group is made consistent,
// the products of g over its two sides equal (so that the scaled sides'
// products are equal too). While a group is off by a ratio R, the side
// with the smaller product doubles g of its sizes, largest first, as long
// as the size stays scalable and R allows; then the other side halves g
// of its sizes, smallest first, and such a size never grows again. A size
// on both sides of a group cannot help and is left alone. nullopt when
// the groups are not all consistent after a bounded number of passes.
// Not balanced (the conservative scheme): every size a group holds keeps
// g = 1.
std::optional<SizeMap> MapFor(const std::vector<ReshapeGroup>& groups,
                              int64_t f, int64_t min_dim, bool balanced) {
  SizeMap map;
  map.f = f;
  map.min_dim = min_dim;
  map.capped = min_dim < kMinScaledDim;
  if (!balanced) {
    for (const ReshapeGroup& grp : groups) {
      for (int64_t d : grp.a) map.g[d] = 1;
      for (int64_t d : grp.b) map.g[d] = 1;
    }
    return map;
  }
  std::unordered_set<int64_t> shrunk;  // Halved once: never doubled again.
  for (int pass = 0; pass < 64; ++pass) {
    bool changed = false;
    for (const ReshapeGroup& grp : groups) {
      auto product = [&](const std::vector<int64_t>& side) {
        int64_t p = 1;
        for (int64_t d : side) p *= map.factor(d);
        return p;
      };
      const int64_t pa = product(grp.a), pb = product(grp.b);
      if (pa == pb) continue;
      changed = true;
      std::vector<int64_t> low = pa < pb ? grp.a : grp.b;
      std::vector<int64_t> high = pa < pb ? grp.b : grp.a;
      int64_t r = std::max(pa, pb) / std::min(pa, pb);
      std::sort(low.rbegin(), low.rend());
      std::sort(high.begin(), high.end());
      for (int64_t d : low) {
        const int64_t k = Count(low, d);
        if (Count(high, d) > 0 || shrunk.count(d)) continue;
        while (r >= (int64_t{1} << k) && Scalable(d, map.factor(d) * 2)) {
          map.g[d] = map.factor(d) * 2;
          r >>= k;
        }
      }
      for (int64_t d : high) {
        const int64_t k = Count(high, d);
        if (Count(low, d) > 0) continue;
        while (r >= (int64_t{1} << k) && map.factor(d) > 1) {
          map.g[d] = map.factor(d) / 2;
          shrunk.insert(d);
          r >>= k;
        }
      }
    }
    if (!changed) return map;
  }
  return std::nullopt;
}

Shape ScaleShape(const Shape& s, const SizeMap& map) {
  Shape out = s;
  if (s.IsTuple()) {
    for (Shape& t : out.mutable_tuple_shapes()) t = ScaleShape(t, map);
  } else if (s.IsArray()) {
    for (int64_t i = 0; i < s.rank(); ++i) out.set_dim(i, map(s.dims()[i]));
  }
  return out;
}

// The leading corner of `lit` (an array) in the smaller shape `shape`.
Literal CornerOf(const Literal& lit, const Shape& shape) {
  Literal out(shape);
  const int64_t n = out.element_count();
  const int64_t rank = shape.rank();
  if (n == 0 || rank == 0) return out;
  const int64_t width = ByteWidth(shape.element_type());
  const std::vector<int64_t>& from = lit.shape().dims();
  const std::vector<int64_t>& to = shape.dims();
  const int64_t row = to[rank - 1] * width;
  std::vector<int64_t> index(rank, 0);
  for (int64_t done = 0; done < n; done += to[rank - 1]) {
    int64_t src = 0, dst = 0;
    for (int64_t i = 0; i < rank; ++i) {
      src = src * from[i] + index[i];
      dst = dst * to[i] + index[i];
    }
    std::memcpy(out.mutable_bytes().data() + dst * width,
                lit.bytes().data() + src * width, row);
    for (int64_t i = rank - 2; i >= 0; --i) {
      if (++index[i] < to[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

// Slice and pad attributes of `i` for the scaled shapes (operand and
// result shapes still unscaled here).
void ScaleSliceAndPad(HloInstruction& i, const SizeMap& map) {
  if (i.operand_count() < 1 || !i.operand(0)->shape().IsArray() ||
      !i.shape().IsArray()) {
    return;
  }
  const std::vector<int64_t>& in = i.operand(0)->shape().dims();
  const std::vector<int64_t>& out = i.shape().dims();
  HloAttributes& a = i.mutable_attrs();
  // A slice keeps its stride and takes map(out) elements from the same
  // relative position of the scaled operand dim.
  for (size_t k = 0; k < a.slice.size() && k < in.size() && k < out.size();
       ++k) {
    SliceDim& s = a.slice[k];
    const int64_t d = in[k], d2 = map(in[k]), o2 = map(out[k]);
    if (d2 == d || d <= 0 || o2 <= 0) continue;
    const int64_t extent = (o2 - 1) * s.stride + 1;
    s.start = std::max<int64_t>(0, std::min(s.start * d2 / d, d2 - extent));
    s.limit = s.start + extent;
  }
  // A pad scales its low edge; the high edge makes up map(out).
  for (size_t k = 0; k < a.padding.size() && k < in.size() && k < out.size();
       ++k) {
    PaddingDim& p = a.padding[k];
    const int64_t d2 = map(in[k]), o2 = map(out[k]);
    if (d2 == in[k] && o2 == out[k]) continue;
    p.lo = map(p.lo);
    p.hi = o2 - p.lo - (d2 + std::max<int64_t>(0, d2 - 1) * p.interior);
  }
}

// Rewrites every shape and size-carrying attribute of `c` with `map`.
void ScaleComputation(HloComputation& c, const SizeMap& map) {
  // Attributes first, from the unscaled shapes.
  for (HloInstruction* i : c.instructions()) {
    if (i->opcode() == HloOpcode::kSlice || i->opcode() == HloOpcode::kPad) {
      ScaleSliceAndPad(*i, map);
    }
    HloAttributes& a = i->mutable_attrs();
    for (int64_t& d : a.dynamic_slice_sizes) d = map(d);
    for (int64_t& d : a.gather_slice_sizes) d = map(d);
  }
  std::vector<HloInstruction*> constants;
  for (HloInstruction* i : c.instructions()) {
    const Shape scaled = ScaleShape(i->shape(), map);
    if (i->opcode() == HloOpcode::kConstant && i->has_literal()) {
      // Tuple constants keep their shape (the verifier judges the rest).
      if (i->shape().IsArray() && !(scaled == i->shape())) {
        constants.push_back(i);
      }
      continue;
    }
    i->set_shape(scaled);
  }
  for (HloInstruction* old : constants) {
    const Shape scaled = ScaleShape(old->shape(), map);
    HloInstruction* fresh = c.AddInstruction(HloInstruction::CreateConstant(
        CornerOf(old->literal(), scaled), old->name() + ".scaled"));
    const bool root = c.root_instruction() == old;
    old->ReplaceAllUsesWith(fresh);
    if (root) c.set_root_instruction(fresh);
    if (c.RemoveInstruction(old).ok()) fresh->set_name(old->name());
  }
}

int64_t LargestArray(const HloModule& m) {
  int64_t most = 0;
  for (const HloComputation* c : m.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      ForEachLeafShape(i->shape(), [&](const Shape& s) {
        if (s.IsArray()) most = std::max(most, s.element_count());
      });
    }
  }
  return most;
}

// LargestArray of `m` once scaled by `map`, without scaling it (tuple
// constants keep their shapes, as ScaleComputation leaves them).
int64_t LargestScaledArray(const HloModule& m, const SizeMap& map) {
  int64_t most = 0;
  for (const HloComputation* c : m.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      const bool kept = i->opcode() == HloOpcode::kConstant &&
                        i->has_literal() && !i->shape().IsArray();
      ForEachLeafShape(i->shape(), [&](const Shape& s) {
        if (!s.IsArray()) return;
        int64_t n = 1;
        for (int64_t d : s.dims()) n *= kept ? d : map(d);
        most = std::max(most, n);
      });
    }
  }
  return most;
}

}  // namespace

// Gives each ratio's large size the factor g(small) * ratio; false when
// that factor does not divide it.
bool ApplyRatios(SizeMap& map, const std::vector<fuzz::SizeRatio>& ratios) {
  for (const fuzz::SizeRatio& r : ratios) {
    const int64_t g = map.factor(r.small) * r.ratio;
    if (g < 1 || r.large % g != 0) return false;
    map.g[r.large] = g;
  }
  for (const fuzz::SizeRatio& r : ratios) {
    if (map.factor(r.large) != map.factor(r.small) * r.ratio) return false;
  }
  return true;
}

StatusOr<ScaledModule> ScaleShapes(const HloModule& module,
                                   int64_t max_elements,
                                   const ScaleConstraints& constraints) {
  const bool ratios = !constraints.ratios.empty();
  if (!ratios && LargestArray(module) <= max_elements) {
    std::unique_ptr<HloModule> m = module.Clone();
    if (constraints.check) {
      if (Status c = constraints.check(*m); !c.ok()) {
        return FailedPrecondition("subgraph: " + c.message());
      }
    }
    return ScaledModule{std::move(m), 1};
  }
  const std::vector<ReshapeGroup> groups = ReshapeGroups(module);
  std::string last = "no factor brings every array within the limit";
  // Large sizes only first; when no factor fits that way, small ones too,
  // each by as much of f as it can take.
  for (const int64_t min_dim : {kMinScaledDim, kMinScaledDimLastResort}) {
    for (int64_t f = ratios ? 1 : 2; f <= kMaxScaleFactor; f *= 2) {
      // The balanced scheme first; when the module it makes does not
      // verify (a size relation other than a reshape's, e.g. a concatenate
      // of sizes it scales differently), the conservative one.
      for (const bool balanced : {true, false}) {
        if (!balanced && groups.empty()) break;
        std::optional<SizeMap> chosen = MapFor(groups, f, min_dim, balanced);
        if (!chosen || !ApplyRatios(*chosen, constraints.ratios)) continue;
        const SizeMap& map = *chosen;
        // Factors too mild for the limit are skipped without a copy.
        if (LargestScaledArray(module, map) > max_elements) continue;
        std::unique_ptr<HloModule> m = module.Clone();
        for (HloComputation* c : m->computations()) ScaleComputation(*c, map);
        if (LargestArray(*m) > max_elements) continue;
        Status v = VerifyModule(*m);
        if (v.ok() && constraints.check) v = constraints.check(*m);
        if (!v.ok()) {
          last = "scaled by " + std::to_string(f) + ": " + v.message();
          continue;
        }
        return ScaledModule{std::move(m), f};
      }
    }
  }
  return FailedPrecondition("subgraph: cannot scale shapes: " + last);
}

}  // namespace trench
