// Reductions, sort and contractions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "triage/fuzz/generator_internal.h"

namespace trench::fuzz::internal {

using O = HloOpcode;
using P = PrimitiveType;

std::string PickReducer(Gen& g, P t) {
  std::vector<std::string> ops;
  if (t == P::PRED)
    ops = {"and", "or", "maximum", "minimum"};
  else if (IsComplex(t))
    ops = {"add"};
  else if (IsFloat(t))
    ops = {"add", "add", "maximum", "minimum", "multiply"};
  else
    ops = {"add", "maximum", "minimum", "multiply", "and", "or", "xor"};
  return g.rng.Pick(ops);
}

// Tames x for `op` combining n elements.
Value TameFor(Gen& g, const Value& x, const std::string& op, double n) {
  const double lim = Limit(x.shape.element_type());
  if (op == "add") return g.Tame(x, lim / (2 * n));
  if (op == "multiply")
    return g.Tame(x, std::max(1.0, std::pow(lim, 1 / n) / 2));
  return x;
}

double BoundAfter(const std::string& op, double b, double n) {
  if (op == "add") return b * n;
  if (op == "multiply") return std::pow(std::max(b, 1.0), n);
  return b;
}

namespace {

int64_t Product(const std::vector<int64_t>& d) {
  int64_t p = 1;
  for (int64_t x : d) p *= x;
  return p;
}

std::vector<int64_t> Shuffled(Rng& rng, std::vector<int64_t> v) {
  for (int64_t i = static_cast<int64_t>(v.size()) - 1; i > 0; --i) {
    std::swap(v[i], v[rng.Uniform(0, i)]);
  }
  return v;
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

double Lowest(P t) {
  if (t == P::PRED) return 0;
  if (IsSigned(t)) return -std::ldexp(1.0, BitWidth(t) - 1);
  if (IsUnsigned(t)) return 0;
  if (t == P::F16) return -65504;
  if (t == P::BF16) return -3.3895313892515355e38;
  if (t == P::F32) return -std::numeric_limits<float>::max();
  return -std::numeric_limits<double>::max();
}

// Text of the identity of `op` on type t (max: -inf for floats, unless
// `finite`, then the lowest finite value).
std::string InitText(const std::string& op, P t, bool finite) {
  const bool fl = IsFloat(t);
  if (op == "add" || op == "or" || op == "xor") return ScalarText(t, 0);
  if (op == "multiply") return ScalarText(t, 1);
  if (op == "and")
    return t == P::PRED ? "true"
           : IsSigned(t)
               ? "-1"
               : std::to_string(IsUnsigned(t) && BitWidth(t) == 64
                                    ? ~uint64_t{0}
                                    : (uint64_t{1} << BitWidth(t)) - 1);
  const bool max = op == "maximum";
  if (t == P::PRED) return max ? "false" : "true";
  if (fl && !finite) return max ? "-inf" : "inf";
  if (IsUnsigned(t) && !max) {
    return std::to_string(BitWidth(t) == 64 ? ~uint64_t{0}
                                            : (uint64_t{1} << BitWidth(t)) - 1);
  }
  if (IsSigned(t)) {
    const int64_t lo = BitWidth(t) == 64 ? std::numeric_limits<int64_t>::min()
                                         : -(int64_t{1} << (BitWidth(t) - 1));
    return std::to_string(max ? lo : -(lo + 1));
  }
  return ScalarText(t, max ? Lowest(t) : -Lowest(t));
}

Value Init(Gen& g, P t, const std::string& text) {
  return g.ctx->builder->Add(Shape(t, {}), "constant", {text}, "", 0);
}

// The argmax/argmin reducer on (value t, index s32), ties to the lower
// index, so that any reduction order gives the same result.
std::string ArgReducer(Gen& g, P t, bool max) {
  auto scope = g.BeginBody(max ? "argmax" : "argmin");
  Shape st(t, {}), si(P::S32, {});
  std::vector<Value> p = g.BodyParams({st, si, st, si}, 0);
  Value better = g.Emit(Shape(P::PRED, {}), "compare", {p[0], p[2]},
                        max ? "direction=GT" : "direction=LT", 1, false);
  Value eq = g.Emit(Shape(P::PRED, {}), "compare", {p[0], p[2]}, "direction=EQ",
                    1, false);
  Value lower = g.Emit(Shape(P::PRED, {}), "compare", {p[1], p[3]},
                       "direction=LT", 1, false);
  Value tie = g.Emit(Shape(P::PRED, {}), "and", {eq, lower}, "", 1, false);
  Value pick = g.Emit(Shape(P::PRED, {}), "or", {better, tie}, "", 1, false);
  Value v = g.Emit(st, "select", {pick, p[0], p[2]}, "", 0, false);
  Value i = g.Emit(si, "select", {pick, p[1], p[3]}, "", 0, false);
  return g.EndBody(*scope, {v, i}, true);
}

// The argmax/argmin reduce of x along one of `dims` (ties to the lower
// index); its two results go to the pool.
void EmitArgReduce(Gen& g, const Value& x_in,
                   const std::vector<int64_t>& dims) {
  // NaN makes the comparisons of the reducer order-dependent.
  const Value x = g.NoNaN(x_in);
  const P t = x.shape.element_type();
  const int64_t r = x.shape.rank();
  const int64_t k = g.rng.Pick(dims);
  std::vector<int64_t> out1;
  for (int64_t d = 0; d < r; ++d) {
    if (d != k) out1.push_back(x.shape.dim(d));
  }
  Value idx = g.Emit(g.MakeShape(P::S32, x.shape.dims()), "iota", {},
                     "iota_dimension=" + std::to_string(k),
                     static_cast<double>(x.shape.dim(k)));
  const bool max = g.rng.Chance(0.5);
  const std::string red = ArgReducer(g, t, max);
  // An empty row gives the init: keep it finite.
  const bool finite = x.shape.dim(k) == 0 && !g.opt.allow_nonfinite;
  Value i0 = Init(g, t, InitText(max ? "maximum" : "minimum", t, finite));
  Value i1 = Init(g, P::S32, "2147483647");
  Shape s0 = g.MakeShape(t, out1), s1 = g.MakeShape(P::S32, out1);
  Value tup = g.Emit(Shape::Tuple({s0, s1}), "reduce", {x, idx, i0, i1},
                     "dimensions={" + std::to_string(k) + "}, to_apply=" + red,
                     0, false);
  g.Emit(s0, "get-tuple-element", {tup}, "index=0",
         finite ? -Lowest(t) : x.bound);
  g.Emit(s1, "get-tuple-element", {tup}, "index=1",
         finite ? 2147483647.0 : static_cast<double>(x.shape.dim(k)));
}

// x sliced to one element along each of `dims` and reshaped to the other
// dims (the reduce result's shape). REQUIRES: those dims are not empty.
Value PickAlong(Gen& g, const Value& x, const std::vector<int64_t>& dims,
                const std::vector<int64_t>& out) {
  std::string parts;
  std::vector<int64_t> sliced;
  for (int64_t d = 0; d < x.shape.rank(); ++d) {
    int64_t lo = 0, hi = x.shape.dim(d);
    if (std::binary_search(dims.begin(), dims.end(), d)) {
      lo = g.rng.Chance(0.5) ? 0 : g.rng.Uniform(0, hi - 1);
      hi = lo + 1;
    }
    parts += std::string(d ? ", " : "") + "[" + std::to_string(lo) + ":" +
             std::to_string(hi) + "]";
    sliced.push_back(hi - lo);
  }
  Value s = g.Emit(g.MakeShape(x.shape.element_type(), sliced), "slice", {x},
                   "slice={" + parts + "}", x.bound);
  return g.Emit(g.MakeShape(x.shape.element_type(), out), "reshape", {s}, "",
                x.bound);
}

bool EmitReduce(Gen& g) {
  std::optional<Value> x;
  if (g.ctx->can_add_params && g.opt.max_rank >= 1 && g.rng.Chance(0.25)) {
    // A reduction of a program input (loss sums, norms of weights).
    const P t = g.rng.Pick(g.dtypes);
    x = g.Param(g.MakeShape(t, g.FreshDims(static_cast<int>(g.rng.Uniform(
                                               1, std::max(1, g.opt.max_rank))),
                                           g.opt.max_elements)));
  } else {
    x = g.PickValue([](const Value& v) { return v.shape.rank() >= 1; });
  }
  if (!x) return false;
  const P t = x->shape.element_type();
  const int64_t r = x->shape.rank();
  std::vector<int64_t> dims = Shuffled(g.rng, Iota(r));
  dims.resize(g.rng.Uniform(1, r));
  if (g.rng.Chance(0.5)) {
    // Most real reductions run over the minor dims (softmax, norms).
    std::iota(dims.begin(), dims.end(), r - static_cast<int64_t>(dims.size()));
  }
  std::sort(dims.begin(), dims.end());
  std::vector<int64_t> out;
  double n = 1;
  for (int64_t d = 0; d < r; ++d) {
    if (std::binary_search(dims.begin(), dims.end(), d))
      n *= x->shape.dim(d);
    else
      out.push_back(x->shape.dim(d));
  }
  if (!IsComplex(t) && g.rng.Chance(0.25)) {  // Variadic: arg-max/min.
    EmitArgReduce(g, *x, dims);
    return true;
  }
  // Multi-output fusion opportunity (entry only: siblings become outputs):
  // the reduce reads an elementwise op of x, and siblings read x too.
  const bool siblings =
      g.ctx->can_add_params && g.rng.Chance(g.opt.sibling_probability);
  Value src = *x;
  if (siblings && g.rng.Chance(0.7)) {
    if (auto e = ElementwiseOn(g, src)) {
      if (e->shape.element_type() == t) x = e;
    }
  }
  const std::string op = PickReducer(g, t);
  Value in = TameFor(g, *x, op, n);
  // An empty reduction gives the init: keep it finite.
  const bool finite = n == 0 && !g.opt.allow_nonfinite;
  Value init = Init(g, t, InitText(op, t, finite));
  double bound = BoundAfter(op, in.bound, n);
  if (finite && (op == "maximum" || op == "minimum")) bound = -Lowest(t);
  Value red = g.Emit(
      g.MakeShape(t, out), "reduce", {in, init},
      "dimensions=" + ListText(dims) + ", to_apply=" + g.pb.ScalarBinary(t, op),
      bound);
  if (!siblings) return true;
  if (g.rng.Chance(0.5)) g.Reserve(red);
  // A sibling of the reduce input's shape.
  if (g.rng.Chance(0.6)) {
    if (auto e = ElementwiseOn(g, src)) g.Reserve(*e);
  }
  // A sibling of the reduce result's shape, computed from x.
  if (n > 0 && g.rng.Chance(0.7)) {
    if (auto e = ElementwiseOn(g, PickAlong(g, src, dims, out))) g.Reserve(*e);
  }
  return true;
}

}  // namespace

bool EmitNormalize(Gen& g) {
  auto x = g.PickValue([](const Value& v) {
    const P t = v.shape.element_type();
    return v.shape.rank() >= 1 && v.shape.element_count() > 0 &&
           !IsComplex(t) && t != P::PRED;
  });
  if (!x) return false;
  const P t = x->shape.element_type();
  const int64_t r = x->shape.rank();
  const int64_t k = g.rng.Uniform(1, r);
  std::vector<int64_t> dims, out, kept;
  double n = 1;
  for (int64_t d = 0; d < r; ++d) {
    if (d >= r - k) {
      dims.push_back(d);
      n *= x->shape.dim(d);
    } else {
      out.push_back(x->shape.dim(d));
      kept.push_back(d);
    }
  }
  static const std::vector<std::string> kOps = {"add", "maximum", "minimum"};
  const std::string op = g.rng.Pick(kOps);
  Value in = TameFor(g, *x, op, n);
  Value init = Init(g, t, InitText(op, t, false));
  Value red = g.Emit(
      g.MakeShape(t, out), "reduce", {in, init},
      "dimensions=" + ListText(dims) + ", to_apply=" + g.pb.ScalarBinary(t, op),
      BoundAfter(op, in.bound, n));
  Value bc = g.Emit(g.Like(*x), "broadcast", {red},
                    "dimensions=" + ListText(kept), red.bound);
  const double lim = Limit(t);
  Value a = g.Tame(*x, lim / 2), b = g.Tame(bc, lim / 2);
  g.Binary("subtract", a, b, IsUnsigned(t) ? 1e300 : a.bound + b.bound);
  return true;
}

namespace {

// A random window over `dims`; `out` receives the windowed output dims.
// Dilations only when allow_dilation. Returns the window text.
std::string MakeWindow(Gen& g, const std::vector<int64_t>& dims,
                       bool allow_dilation, std::vector<int64_t>* out,
                       bool* padded, int64_t* count) {
  std::string size, stride, pad, ld, rd;
  bool any_ld = false, any_rd = false;
  *padded = false;
  *count = 1;
  out->clear();
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    int64_t s =
        g.rng.Chance(0.2) ? 1 : g.rng.Uniform(1, std::min<int64_t>(d, 4));
    int64_t st = g.rng.Chance(0.5) ? 1 : g.rng.Uniform(1, 3);
    int64_t lo = g.rng.Chance(0.6) ? 0 : g.rng.Uniform(0, s - 1);
    int64_t hi = g.rng.Chance(0.6) ? 0 : g.rng.Uniform(0, s - 1);
    int64_t bd = allow_dilation && g.rng.Chance(0.1) ? 2 : 1;
    int64_t wd = allow_dilation && g.rng.Chance(0.1) ? 2 : 1;
    const int64_t padded_size = (d - 1) * bd + 1 + lo + hi;
    if (padded_size < (s - 1) * wd + 1) wd = 1, s = 1;
    const int64_t o = (padded_size - ((s - 1) * wd + 1)) / st + 1;
    out->push_back(o);
    *padded |= lo > 0 || hi > 0 || bd > 1;
    *count *= s;
    any_ld |= bd > 1;
    any_rd |= wd > 1;
    const char* x = i ? "x" : "";
    size += x + std::to_string(s);
    stride += x + std::to_string(st);
    pad += x + std::to_string(lo) + "_" + std::to_string(hi);
    ld += x + std::to_string(bd);
    rd += x + std::to_string(wd);
  }
  std::string w = "size=" + size + " stride=" + stride + " pad=" + pad;
  if (any_ld) w += " lhs_dilate=" + ld;
  if (any_rd) w += " rhs_dilate=" + rd;
  return "window={" + w + "}";
}

bool EmitReduceWindow(Gen& g, bool select_and_scatter) {
  auto x = g.PickValue([&](const Value& v) {
    const P t = v.shape.element_type();
    return v.shape.rank() >= 1 && v.shape.element_count() > 0 &&
           !IsComplex(t) && (!select_and_scatter || t != P::PRED);
  });
  if (!x) return false;
  // select-and-scatter's GE/LE selection with NaN depends on the scan.
  if (select_and_scatter) x = g.NoNaN(*x);
  const P t = x->shape.element_type();
  std::vector<int64_t> out;
  bool padded = false;
  int64_t count = 1;
  const std::string window = MakeWindow(g, x->shape.dims(), !select_and_scatter,
                                        &out, &padded, &count);
  if (select_and_scatter) {
    Value src = g.Operand(t, out);
    src = TameFor(g, src, "add", static_cast<double>(count));
    auto scope = g.BeginBody("select");
    std::vector<Value> p = g.BodyParams({Shape(t, {}), Shape(t, {})}, 0);
    Value c =
        g.Emit(Shape(P::PRED, {}), "compare", {p[0], p[1]},
               g.rng.Chance(0.5) ? "direction=GE" : "direction=LE", 1, false);
    const std::string sel = g.EndBody(*scope, {c}, false);
    Value init = Init(g, t, ScalarText(t, 0));
    g.Emit(
        g.Like(*x), "select-and-scatter", {*x, src, init},
        window + ", select=" + sel + ", scatter=" + g.pb.ScalarBinary(t, "add"),
        src.bound * count);
    return true;
  }
  std::string op = PickReducer(g, t);
  if (op == "multiply") op = "add";
  Value in = TameFor(g, *x, op, static_cast<double>(count));
  // A window lying wholly in padding yields the init value: keep it finite.
  const bool finite = padded && !g.opt.allow_nonfinite;
  Value init = Init(g, t, InitText(op, t, finite));
  double bound = BoundAfter(op, in.bound, static_cast<double>(count));
  if (finite && (op == "maximum" || op == "minimum")) bound = -Lowest(t);
  g.Emit(g.MakeShape(t, out), "reduce-window", {in, init},
         window + ", to_apply=" + g.pb.ScalarBinary(t, op), bound);
  return true;
}

bool EmitSort(Gen& g) {
  auto x = g.PickValue([](const Value& v) {
    return v.shape.rank() >= 1 && !IsComplex(v.shape.element_type());
  });
  if (!x) return false;
  const int64_t n = g.rng.Uniform(1, 3);
  // Comparisons with NaN are no strict weak order.
  std::vector<Value> ops = {g.NoNaN(*x)};
  for (int64_t i = 1; i < n; ++i) {
    auto t = g.PickType([](P) { return true; });
    ops.push_back(g.Operand(*t, x->shape.dims()));
  }
  std::vector<Shape> scalars;
  for (const Value& v : ops) {
    scalars.push_back(Shape(v.shape.element_type(), {}));
    scalars.push_back(Shape(v.shape.element_type(), {}));
  }
  auto scope = g.BeginBody("compare");
  std::vector<Value> p = g.BodyParams(scalars, 0);
  std::string attrs = g.rng.Chance(0.5) ? "direction=LT" : "direction=GT";
  if (IsFloat(x->shape.element_type()) && g.rng.Chance(0.3))
    attrs += ", type=TOTALORDER";
  Value c =
      g.Emit(Shape(P::PRED, {}), "compare", {p[0], p[1]}, attrs, 1, false);
  const std::string cmp = g.EndBody(*scope, {c}, false);
  const int64_t dim = g.rng.Uniform(0, x->shape.rank() - 1);
  // Ties keep their order unless only one integer key is sorted (then ties
  // are identical values, -0.0/+0.0 aside for floats).
  const bool stable =
      n > 1 || !IsInteger(x->shape.element_type()) || g.rng.Chance(0.5);
  std::string sattrs = "dimensions={" + std::to_string(dim) + "}";
  if (stable) sattrs += ", is_stable=true";
  sattrs += ", to_apply=" + cmp;
  if (n == 1) {
    g.Emit(g.Like(*x), "sort", ops, sattrs, x->bound);
    return true;
  }
  std::vector<Shape> shapes;
  for (const Value& v : ops) shapes.push_back(g.Like(v));
  Value tup = g.Emit(Shape::Tuple(shapes), "sort", ops, sattrs, 0, false);
  for (int64_t i = 0; i < n; ++i) {
    g.Emit(shapes[i], "get-tuple-element", {tup}, "index=" + std::to_string(i),
           ops[i].bound);
  }
  return true;
}

const char* kPrecisions[] = {"default", "high", "highest"};

std::string Precision(Gen& g) {
  if (g.rng.Chance(0.3)) return "";
  return std::string(", operand_precision={") +
         kPrecisions[g.rng.Uniform(0, 2)] + "," +
         kPrecisions[g.rng.Uniform(0, 2)] + "}";
}

bool ContractionType(P t) { return t != P::PRED && !IsComplex(t); }

bool EmitDot(Gen& g) {
  auto a = g.PickValue([](const Value& v) {
    return v.shape.rank() >= 1 && v.shape.rank() <= 3 &&
           ContractionType(v.shape.element_type());
  });
  if (!a) return false;
  const P t = a->shape.element_type();
  const int64_t r = a->shape.rank();
  std::vector<int64_t> roles =
      Shuffled(g.rng, Iota(r));  // dims in random order
  std::vector<int64_t> lc = {roles[0]}, lb, lf;
  for (int64_t i = 1; i < r; ++i) {
    if (lb.empty() && g.rng.Chance(0.3))
      lb.push_back(roles[i]);
    else if (g.rng.Chance(0.2))
      lc.push_back(roles[i]);
    else
      lf.push_back(roles[i]);
  }
  std::sort(lf.begin(), lf.end());
  // rhs: batch, contracting and 0-1 free dims, in a random order.
  std::vector<int64_t> rdims;
  for (int64_t d : lb) rdims.push_back(a->shape.dim(d));
  for (int64_t d : lc) rdims.push_back(a->shape.dim(d));
  int64_t out_count = 1;
  for (int64_t d : lb) out_count *= a->shape.dim(d);
  for (int64_t d : lf) out_count *= a->shape.dim(d);
  const bool rfree = g.rng.Chance(0.8);
  int64_t fsize = g.PickDim();
  if (out_count * fsize > g.opt.max_elements) fsize = 1;
  if (rfree) rdims.push_back(fsize), out_count *= fsize;
  if (out_count > g.opt.max_elements || Product(rdims) > g.opt.max_elements)
    return false;
  std::vector<int64_t> order = Shuffled(g.rng, Iota(rdims.size()));
  std::vector<int64_t> rshape(rdims.size());
  std::vector<int64_t> pos(rdims.size());  // logical role i -> rhs dim
  for (size_t i = 0; i < order.size(); ++i)
    rshape[order[i]] = rdims[i], pos[i] = order[i];
  std::vector<int64_t> rb(pos.begin(), pos.begin() + lb.size());
  std::vector<int64_t> rc(pos.begin() + lb.size(),
                          pos.begin() + lb.size() + lc.size());
  double k = 1;
  for (int64_t d : lc) k *= a->shape.dim(d);
  // Finite operands even in special-value programs: the matrix unit's
  // multi-pass f32 modes split inf into bf16 parts (inf - inf = NaN), and
  // whether a padded zero times inf contributes NaN is the backend's
  // choice (XLA does not specify either).
  Value lhs = g.Finite(*a), rhs = g.Finite(g.Operand(t, rshape));
  const double cap = std::sqrt(Limit(t) / (2 * k));
  lhs = g.Tame(lhs, cap);
  rhs = g.Tame(rhs, cap);
  std::vector<int64_t> out;
  for (int64_t d : lb) out.push_back(a->shape.dim(d));
  for (int64_t d : lf) out.push_back(a->shape.dim(d));
  if (rfree) out.push_back(fsize);
  std::string attrs;
  if (!lb.empty()) {
    attrs += "lhs_batch_dims=" + ListText(lb) +
             ", rhs_batch_dims=" + ListText(rb) + ", ";
  }
  attrs += "lhs_contracting_dims=" + ListText(lc) +
           ", rhs_contracting_dims=" + ListText(rc) + Precision(g);
  g.Emit(g.MakeShape(t, out), "dot", {lhs, rhs}, attrs,
         lhs.bound * rhs.bound * k);
  return true;
}

bool EmitConvolution(Gen& g) {
  auto t = g.PickType([](P t) { return ContractionType(t); });
  if (!t) return false;
  const int ns = static_cast<int>(g.rng.Uniform(1, 2));
  const int64_t groups = g.rng.Chance(0.2) ? g.rng.Uniform(2, 3) : 1;
  const int64_t b = g.rng.Uniform(1, 3);
  const int64_t cin =
      groups * (g.rng.Chance(0.5) ? g.rng.Uniform(1, 4) : g.PickDim() % 16 + 1);
  const int64_t cout = groups * g.rng.Uniform(1, 8);
  std::vector<int64_t> in, ker, out;
  std::string size, stride, pad, ld, rd;
  bool any_ld = false, any_rd = false;
  for (int i = 0; i < ns; ++i) {
    const int64_t d = std::min<int64_t>(g.PickDim(), 64);
    int64_t k = g.rng.Uniform(1, std::min<int64_t>(d, 3));
    const int64_t st = g.rng.Uniform(1, 2), lo = g.rng.Uniform(0, k - 1),
                  hi = g.rng.Uniform(0, k - 1);
    const int64_t bd = g.rng.Chance(0.1) ? 2 : 1;
    int64_t wd = g.rng.Chance(0.1) ? 2 : 1;
    const int64_t padded = (d - 1) * bd + 1 + lo + hi;
    if (padded < (k - 1) * wd + 1) k = 1, wd = 1;
    in.push_back(d);
    ker.push_back(k);
    out.push_back((padded - ((k - 1) * wd + 1)) / st + 1);
    any_ld |= bd > 1;
    any_rd |= wd > 1;
    const char* x = i ? "x" : "";
    size += x + std::to_string(k);
    stride += x + std::to_string(st);
    pad += x + std::to_string(lo) + "_" + std::to_string(hi);
    ld += x + std::to_string(bd);
    rd += x + std::to_string(wd);
  }
  // Labels: position of each role in each operand.
  std::vector<char> lhs_l = {'b', 'f'}, ker_l = {'i', 'o'}, out_l = {'b', 'f'};
  for (int i = 0; i < ns; ++i) {
    lhs_l.push_back('0' + i), ker_l.push_back('0' + i),
        out_l.push_back('0' + i);
  }
  auto shuffle = [&](std::vector<char> v) {
    for (int64_t i = static_cast<int64_t>(v.size()) - 1; i > 0; --i) {
      std::swap(v[i], v[g.rng.Uniform(0, i)]);
    }
    return v;
  };
  lhs_l = shuffle(lhs_l), ker_l = shuffle(ker_l), out_l = shuffle(out_l);
  auto dims_of = [&](const std::vector<char>& labels, int64_t bsize,
                     int64_t fsize, const std::vector<int64_t>& spatial,
                     char bl, char fl) {
    std::vector<int64_t> d;
    for (char c : labels) {
      d.push_back(c == bl ? bsize : c == fl ? fsize : spatial[c - '0']);
    }
    return d;
  };
  std::vector<int64_t> lhs_d = dims_of(lhs_l, b, cin, in, 'b', 'f');
  std::vector<int64_t> ker_d =
      dims_of(ker_l, cin / groups, cout, ker, 'i', 'o');
  std::vector<int64_t> out_d = dims_of(out_l, b, cout, out, 'b', 'f');
  if (Product(lhs_d) > g.opt.max_elements ||
      Product(out_d) > g.opt.max_elements) {
    return false;
  }
  double k = static_cast<double>(cin / groups * Product(ker));
  const double cap = std::sqrt(Limit(*t) / (2 * k));
  // Finite operands (see EmitDot).
  Value lhs = g.Tame(g.Finite(g.Operand(*t, lhs_d)), cap);
  Value rhs = g.Tame(g.Finite(g.Operand(*t, ker_d)), cap);
  std::string w = "size=" + size + " stride=" + stride + " pad=" + pad;
  if (any_ld) w += " lhs_dilate=" + ld;
  if (any_rd) w += " rhs_dilate=" + rd;
  std::string attrs = "window={" + w + "}, dim_labels=" +
                      std::string(lhs_l.begin(), lhs_l.end()) + "_" +
                      std::string(ker_l.begin(), ker_l.end()) + "->" +
                      std::string(out_l.begin(), out_l.end());
  if (groups > 1) attrs += ", feature_group_count=" + std::to_string(groups);
  attrs += Precision(g);
  g.Emit(g.MakeShape(*t, out_d), "convolution", {lhs, rhs}, attrs,
         lhs.bound * rhs.bound * k);
  return true;
}

}  // namespace

bool EmitReduction(Gen& g, HloOpcode op) {
  switch (op) {
    case O::kReduce:
      return EmitReduce(g);
    case O::kReduceWindow:
      return EmitReduceWindow(g, false);
    case O::kSelectAndScatter:
      return EmitReduceWindow(g, true);
    case O::kSort:
      return EmitSort(g);
    default:
      return false;
  }
}

bool EmitContraction(Gen& g, HloOpcode op) {
  return op == O::kDot ? EmitDot(g) : EmitConvolution(g);
}

}  // namespace trench::fuzz::internal
