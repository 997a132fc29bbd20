// Data movement and indexing ops: shapes and attributes drawn so that every
// result is well formed (XLA's operation semantics).
#include <algorithm>
#include <numeric>

#include "triage/fuzz/generator_internal.h"

namespace trench::fuzz::internal {
namespace {

using O = HloOpcode;
using P = PrimitiveType;

int64_t Product(const std::vector<int64_t>& d) {
  int64_t p = 1;
  for (int64_t x : d) p *= x;
  return p;
}

// A sorted random subset of [0, n) of size k.
std::vector<int64_t> Subset(Rng& rng, int64_t n, int64_t k) {
  std::vector<int64_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  for (int64_t i = n - 1; i > 0; --i) std::swap(all[i], all[rng.Uniform(0, i)]);
  all.resize(k);
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<int64_t> Permutation(Rng& rng, int64_t n) {
  std::vector<int64_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[rng.Uniform(0, i)]);
  return p;
}

std::optional<Value> ArrayOperand(Gen& g, int min_rank) {
  return g.PickValue(
      [&](const Value& v) { return v.shape.rank() >= min_rank; });
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

// Dims with the same element count as `dims`: adjacent dims merged,
// a dim split at a divisor, size-1 dims inserted or removed.
std::vector<int64_t> Refactor(Gen& g, std::vector<int64_t> dims) {
  const int steps = static_cast<int>(g.rng.Uniform(1, 3));
  for (int s = 0; s < steps; ++s) {
    const int kind = static_cast<int>(g.rng.Uniform(0, 3));
    if (kind == 0 && dims.size() >= 2) {
      const int64_t i = g.rng.Uniform(0, dims.size() - 2);
      dims[i] *= dims[i + 1];
      dims.erase(dims.begin() + i + 1);
    } else if (kind == 1 && !dims.empty() &&
               static_cast<int>(dims.size()) < g.opt.max_rank) {
      const int64_t i = g.rng.Uniform(0, dims.size() - 1);
      std::vector<int64_t> divisors;
      for (int64_t d = 2; d < dims[i] && d <= 512; ++d) {
        if (dims[i] % d == 0) divisors.push_back(d);
      }
      if (divisors.empty()) continue;
      const int64_t a = g.rng.Pick(divisors);
      dims[i] /= a;
      dims.insert(dims.begin() + i, a);
    } else if (kind == 2 && static_cast<int>(dims.size()) < g.opt.max_rank) {
      dims.insert(dims.begin() + g.rng.Uniform(0, dims.size()), 1);
    } else {
      auto it = std::find(dims.begin(), dims.end(), 1);
      if (it != dims.end()) dims.erase(it);
    }
  }
  return dims;
}

P PickIndexType(Gen& g) {
  static const std::vector<P> kIndex = {P::S32, P::S64, P::U32, P::S8,
                                        P::U8,  P::S16, P::U16, P::U64};
  return g.rng.Chance(0.5) ? P::S32 : g.rng.Pick(kIndex);
}

// n scalar start indices of one index type.
std::vector<Value> StartIndices(Gen& g, int64_t n) {
  const P t = PickIndexType(g);
  std::vector<Value> out;
  for (int64_t i = 0; i < n; ++i) {
    if (g.ctx->can_add_params && g.rng.Chance(0.6)) {
      out.push_back(g.Param(Shape(t, {})));
    } else {
      out.push_back(g.Splat(t, {}, static_cast<double>(g.rng.Uniform(0, 200))));
    }
  }
  return out;
}

std::vector<int64_t> SizesWithin(Gen& g, const std::vector<int64_t>& dims) {
  std::vector<int64_t> s;
  for (int64_t d : dims)
    s.push_back(g.rng.Chance(0.3) || d == 0 ? d : g.rng.Uniform(1, d));
  return s;
}

bool EmitBroadcast(Gen& g) {
  auto x = g.PickValue(
      [&](const Value& v) { return v.shape.rank() < g.opt.max_rank; });
  if (!x) return false;
  const int64_t rank = x->shape.rank();
  const int64_t out_rank = g.rng.Uniform(
      rank + (rank == 0 ? 1 : 0), std::min<int64_t>(g.opt.max_rank, rank + 2));
  std::vector<int64_t> pos = Subset(g.rng, out_rank, rank);
  std::vector<int64_t> out(out_rank, -1);
  for (int64_t i = 0; i < rank; ++i) out[pos[i]] = x->shape.dim(i);
  int64_t budget =
      g.opt.max_elements / std::max<int64_t>(1, x->shape.element_count());
  for (int64_t& d : out) {
    if (d != -1) continue;
    d = g.PickDim();
    if (d > budget) d = std::max<int64_t>(1, std::min<int64_t>(budget, 3));
    budget /= d;
  }
  g.Emit(g.MakeShape(x->shape.element_type(), out), "broadcast", {*x},
         "dimensions=" + ListText(pos), x->bound);
  return true;
}

bool EmitDataMovementOp(Gen& g, O op) {
  switch (op) {
    case O::kBroadcast:
      return EmitBroadcast(g);
    case O::kReshape:
    case O::kBitcast: {
      auto x = g.PickValue([&](const Value& v) {
        return op == O::kReshape || !v.shape.has_layout();
      });
      if (!x) return false;
      Shape s(x->shape.element_type(), Refactor(g, x->shape.dims()));
      if (op == O::kReshape) s = g.MakeShape(s.element_type(), s.dims());
      g.Emit(s, OpcodeName(op), {*x}, "", x->bound);
      return true;
    }
    case O::kTranspose: {
      auto x = ArrayOperand(g, 2);
      if (!x) return false;
      std::vector<int64_t> perm = Permutation(g.rng, x->shape.rank());
      std::vector<int64_t> out;
      for (int64_t p : perm) out.push_back(x->shape.dim(p));
      g.Emit(g.MakeShape(x->shape.element_type(), out), "transpose", {*x},
             "dimensions=" + ListText(perm), x->bound);
      return true;
    }
    case O::kSlice: {
      auto x = ArrayOperand(g, 1);
      if (!x) return false;
      std::vector<std::string> parts;
      std::vector<int64_t> out;
      for (int64_t d : x->shape.dims()) {
        const int64_t start =
            g.rng.Chance(0.3) || d == 0 ? 0 : g.rng.Uniform(0, d - 1);
        const int64_t limit =
            g.rng.Chance(0.3) || d == 0 ? d : g.rng.Uniform(start + 1, d);
        const int64_t stride = g.rng.Chance(0.7) ? 1 : g.rng.Uniform(2, 4);
        parts.push_back("[" + std::to_string(start) + ":" +
                        std::to_string(limit) + ":" + std::to_string(stride) +
                        "]");
        out.push_back((limit - start + stride - 1) / stride);
      }
      g.Emit(g.MakeShape(x->shape.element_type(), out), "slice", {*x},
             "slice={" + Join(parts, ", ") + "}", x->bound);
      return true;
    }
    case O::kConcatenate: {
      auto x = ArrayOperand(g, 1);
      if (!x) return false;
      const int64_t k = g.rng.Uniform(0, x->shape.rank() - 1);
      std::vector<Value> ops = {*x};
      std::vector<int64_t> out = x->shape.dims();
      const int n = static_cast<int>(g.rng.Uniform(1, 2));
      int64_t rest = 1;
      for (int64_t d = 0; d < x->shape.rank(); ++d) {
        if (d != k) rest *= x->shape.dim(d);
      }
      for (int i = 0; i < n; ++i) {
        std::vector<int64_t> dims = x->shape.dims();
        dims[k] = g.rng.Chance(0.3) ? x->shape.dim(k) : g.PickDim();
        if ((out[k] + dims[k]) * rest > g.opt.max_elements) dims[k] = 1;
        out[k] += dims[k];
        ops.push_back(g.Operand(x->shape.element_type(), dims));
      }
      double b = 0;
      for (const Value& v : ops) b = std::max(b, v.bound);
      g.Emit(g.MakeShape(x->shape.element_type(), out), "concatenate", ops,
             "dimensions={" + std::to_string(k) + "}", b);
      return true;
    }
    case O::kPad: {
      auto x = ArrayOperand(g, 1);
      if (!x) return false;
      const P t = x->shape.element_type();
      std::vector<std::string> parts;
      std::vector<int64_t> out;
      int64_t total = 1;
      for (int64_t d : x->shape.dims()) {
        int64_t lo = g.rng.Uniform(-(d - 1) / 2, 4),
                hi = g.rng.Uniform(-(d - 1) / 2, 4);
        int64_t interior = g.rng.Chance(0.2) && d > 1 ? g.rng.Uniform(1, 2) : 0;
        int64_t o = lo + hi + d + (d - 1) * interior;
        if (o < 1 || total * o > g.opt.max_elements)
          lo = hi = interior = 0, o = d;
        total *= o;
        parts.push_back(std::to_string(lo) + "_" + std::to_string(hi) + "_" +
                        std::to_string(interior));
        out.push_back(o);
      }
      Value v = g.Splat(t, {}, t == P::PRED ? 1 : g.rng.Uniform(-2, 2));
      g.Emit(g.MakeShape(t, out), "pad", {*x, v}, "padding=" + Join(parts, "x"),
             std::max(x->bound, 2.0));
      return true;
    }
    case O::kReverse: {
      auto x = ArrayOperand(g, 1);
      if (!x) return false;
      const int64_t r = x->shape.rank();
      g.Emit(g.Like(*x), "reverse", {*x},
             "dimensions=" + ListText(Subset(g.rng, r, g.rng.Uniform(1, r))),
             x->bound);
      return true;
    }
    case O::kIota: {
      auto t = g.PickType([](P t) { return t != P::PRED && !IsComplex(t); });
      if (!t) return false;
      std::vector<int64_t> dims = g.FreshDims(
          static_cast<int>(g.rng.Uniform(1, std::max(1, g.opt.max_rank))),
          g.opt.max_elements);
      const int64_t k = g.rng.Uniform(0, dims.size() - 1);
      const int64_t cap = (*t == P::S8) ? 127 : (*t == P::U8) ? 255 : 1 << 20;
      dims[k] = std::min(dims[k], cap);
      g.Emit(g.MakeShape(*t, dims), "iota", {},
             "iota_dimension=" + std::to_string(k),
             static_cast<double>(dims[k]));
      return true;
    }
    case O::kDynamicSlice:
    case O::kDynamicUpdateSlice: {
      auto x = ArrayOperand(g, 1);
      if (!x) return false;
      std::vector<int64_t> sizes = SizesWithin(g, x->shape.dims());
      std::vector<Value> idx = StartIndices(g, x->shape.rank());
      if (op == O::kDynamicSlice) {
        std::vector<Value> ops = {*x};
        ops.insert(ops.end(), idx.begin(), idx.end());
        g.Emit(g.MakeShape(x->shape.element_type(), sizes), "dynamic-slice",
               ops, "dynamic_slice_sizes=" + ListText(sizes), x->bound);
      } else {
        Value u = g.Operand(x->shape.element_type(), sizes);
        std::vector<Value> ops = {*x, u};
        ops.insert(ops.end(), idx.begin(), idx.end());
        g.Emit(g.Like(*x), "dynamic-update-slice", ops, "",
               std::max(x->bound, u.bound));
      }
      return true;
    }
    default:
      return false;
  }
}

// Gather and scatter share the index set-up: `m` indexed operand dims, an
// index array of batch dims plus the index vector dim.
struct IndexPlan {
  std::vector<int64_t>
      index_map;  // start_index_map / scatter_dims_to_operand_dims
  std::vector<int64_t>
      collapsed;               // collapsed_slice_dims / inserted_window_dims
  std::vector<int64_t> sizes;  // slice sizes / window sizes per operand dim
  std::vector<int64_t> batch;  // index batch dims
  int64_t index_vector_dim = 0;
  Value indices;
};

IndexPlan PlanIndices(Gen& g, const Value& x) {
  IndexPlan p;
  const int64_t r = x.shape.rank();
  std::vector<int64_t> perm = Permutation(g.rng, r);
  perm.resize(g.rng.Uniform(1, r));
  p.index_map = perm;
  p.sizes = SizesWithin(g, x.shape.dims());
  for (int64_t d : p.index_map) {
    if (g.rng.Chance(0.5)) p.sizes[d] = 1;
    if (p.sizes[d] == 1 && g.rng.Chance(0.7)) p.collapsed.push_back(d);
  }
  std::sort(p.collapsed.begin(), p.collapsed.end());
  const int64_t nb = g.rng.Uniform(0, 2);
  for (int64_t i = 0; i < nb; ++i) {
    p.batch.push_back(g.rng.Chance(0.5) ? g.rng.Uniform(1, 9) : g.PickDim());
  }
  // Shrink the largest batch dim (a boundary extent may exceed 512 alone).
  while (Product(p.batch) > 512) {
    int64_t& d = *std::max_element(p.batch.begin(), p.batch.end());
    d = 1 + d / 4;
  }
  std::vector<int64_t> idims = p.batch;
  const int64_t m = p.index_map.size();
  if (m == 1 && g.rng.Chance(0.3)) {
    p.index_vector_dim = nb;  // Implicit trailing 1.
  } else {
    p.index_vector_dim = g.rng.Uniform(0, nb);
    idims.insert(idims.begin() + p.index_vector_dim, m);
  }
  p.indices = g.Operand(PickIndexType(g), idims);
  return p;
}

// Output dims: batch dims and window dims, window dims at `window_pos`.
std::vector<int64_t> Interleave(Gen& g, const std::vector<int64_t>& batch,
                                const std::vector<int64_t>& window,
                                std::vector<int64_t>* window_pos) {
  const int64_t n = batch.size() + window.size();
  *window_pos = Subset(g.rng, n, window.size());
  std::vector<int64_t> out(n);
  size_t b = 0, w = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (w < window_pos->size() && (*window_pos)[w] == i)
      out[i] = window[w++];
    else
      out[i] = batch[b++];
  }
  return out;
}

}  // namespace

bool EmitDataMovement(Gen& g, HloOpcode op) {
  return EmitDataMovementOp(g, op);
}

bool EmitIndexing(Gen& g, HloOpcode op) {
  auto x = g.PickValue([&](const Value& v) {
    return v.shape.rank() >= 1 && v.shape.element_count() > 0 &&
           (op == O::kGather || !IsComplex(v.shape.element_type()));
  });
  if (!x) return false;
  IndexPlan p = PlanIndices(g, *x);
  std::vector<int64_t> window;  // Non-collapsed slice sizes, in order.
  for (int64_t d = 0; d < x->shape.rank(); ++d) {
    if (!std::binary_search(p.collapsed.begin(), p.collapsed.end(), d)) {
      window.push_back(p.sizes[d]);
    }
  }
  std::vector<int64_t> window_pos;
  std::vector<int64_t> out = Interleave(g, p.batch, window, &window_pos);
  if (Product(out) > g.opt.max_elements) return false;
  const std::string common =
      "index_vector_dim=" + std::to_string(p.index_vector_dim);
  const P t = x->shape.element_type();
  if (op == O::kGather) {
    g.Emit(g.MakeShape(t, out), "gather", {*x, p.indices},
           "offset_dims=" + ListText(window_pos) +
               ", collapsed_slice_dims=" + ListText(p.collapsed) +
               ", start_index_map=" + ListText(p.index_map) + ", " + common +
               ", slice_sizes=" + ListText(p.sizes),
           x->bound);
    return true;
  }
  // Scatter: updates of the gather's output shape, combined with a
  // commutative op (duplicate indices give the same result in any order,
  // up to float reassociation).
  std::vector<std::string> combiners = {"maximum", "minimum"};
  if (t == P::PRED)
    combiners = {"or", "and"};
  else
    combiners.push_back("add");
  const std::string comb = g.rng.Pick(combiners);
  Value u = g.Operand(t, out);
  const double n = static_cast<double>(Product(p.batch));
  if (comb == "add") u = g.Tame(u, Limit(t) / (4 * n));
  g.Emit(g.Like(*x), "scatter", {*x, p.indices, u},
         "update_window_dims=" + ListText(window_pos) +
             ", inserted_window_dims=" + ListText(p.collapsed) +
             ", scatter_dims_to_operand_dims=" + ListText(p.index_map) + ", " +
             common + ", to_apply=" + g.pb.ScalarBinary(t, comb),
         comb == "add" ? x->bound + n * u.bound : std::max(x->bound, u.bound));
  return true;
}

}  // namespace trench::fuzz::internal
