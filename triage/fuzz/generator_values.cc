// The generator's state: types, shapes, operand selection, guards and
// called computations (generator_internal.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "triage/fuzz/generator_internal.h"
#include "triage/fuzz/size_boundaries.h"

namespace trench::fuzz::internal {
namespace {

using P = PrimitiveType;

double MaxFinite(P t) {
  switch (t) {
    case P::F16:
      return 65504;
    case P::BF16:
      return 3.3895313892515355e38;
    case P::F32:
    case P::C64:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}

double TypeMax(P t) {
  if (t == P::PRED) return 1;
  if (IsSigned(t)) return std::ldexp(1.0, BitWidth(t) - 1);
  if (IsUnsigned(t)) return std::ldexp(1.0, BitWidth(t)) - 1;
  return std::numeric_limits<double>::infinity();
}

P RealPart(P t) { return t == P::C64 ? P::F32 : t == P::C128 ? P::F64 : t; }

}  // namespace

double Limit(P t) {
  switch (t) {
    case P::F16:
      return 1e4;
    case P::BF16:
    case P::F32:
    case P::C64:
      return 1e30;
    case P::F64:
    case P::C128:
      return 1e200;
    default:
      return std::numeric_limits<double>::infinity();
  }
}

double InputBound(P t) {
  if (t == P::PRED) return 1;
  if (IsSigned(t)) return 8;
  if (IsUnsigned(t)) return 15;
  return 4;
}

Gen::Gen(uint64_t seed, const GeneratorOptions& options)
    : rng(seed ^ 0x6a09e667f3bcc909ull),
      opt(options),
      pb("fuzz_" + std::to_string(seed)),
      dtypes(options.dtypes.empty() ? AllDtypes() : options.dtypes) {
  std::vector<int64_t> bounds = opt.size_boundaries;
  if (bounds.empty()) {
    for (const ElementBoundary& b : DefaultBoundaries()) {
      bounds.push_back(b.elements);
    }
  }
  for (int64_t d : BoundaryDims(bounds, opt.max_elements)) {
    (d <= 129 ? boundary_dims_small : boundary_dims_large).push_back(d);
  }
  special = rng.Chance(opt.special_values);
  if (special && rng.Chance(0.5)) {
    // Half of the special-value programs compute in real floats only.
    std::vector<P> floats;
    for (P t : dtypes) {
      if (IsFloat(t)) floats.push_back(t);
    }
    if (!floats.empty()) dtypes = floats;
  }
}

bool Gen::Allowed(P t) const {
  return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end();
}

std::optional<P> Gen::PickType(const std::function<bool(P)>& f) {
  std::vector<P> ok;
  for (P t : dtypes) {
    if (f(t)) ok.push_back(t);
  }
  if (ok.empty()) return std::nullopt;
  return rng.Pick(ok);
}

int64_t Gen::PickDim() {
  if (rng.Chance(opt.stress_probability)) {
    // Around a tiling / VMEM boundary; the large ones less often (they
    // make large arrays, and PickDims keeps within max_elements).
    if (!boundary_dims_large.empty() &&
        (boundary_dims_small.empty() || rng.Chance(0.3))) {
      return rng.Pick(boundary_dims_large);
    }
    if (!boundary_dims_small.empty()) return rng.Pick(boundary_dims_small);
  }
  return rng.Uniform(1, 5);
}

std::vector<int64_t> Gen::PickDims(int rank, int64_t max_elements) {
  std::vector<int64_t> dims;
  int64_t product = 1;
  for (int i = 0; i < rank; ++i) {
    int64_t d = PickDim();
    for (int tries = 0; tries < 4 && product * d > max_elements; ++tries) {
      d = PickDim();
    }
    if (product * d > max_elements)
      d = std::max<int64_t>(1, max_elements / product);
    product *= d;
    dims.push_back(d);
  }
  return dims;
}

// Long rows: around multiples of the 1024-element (8x128) chunk.
const std::vector<int64_t> kLongRows = {1024, 1025, 1100, 1151, 1152, 1153,
                                        2047, 2048, 2049, 2175, 2900};

std::vector<int64_t> Gen::FreshDims(int rank, int64_t max_elements) {
  std::vector<int64_t> dims;
  if (rank >= 1 && max_elements >= 1024 &&
      rng.Chance(opt.long_row_probability)) {
    const int64_t hi = std::min<int64_t>(3000, max_elements);
    int64_t row = rng.Chance(0.4) ? rng.Pick(kLongRows) : rng.Uniform(1024, hi);
    row = std::min(row, hi);
    int64_t budget = max_elements / row;
    for (int i = 0; i + 1 < rank; ++i) {
      const int64_t d = rng.Uniform(1, std::clamp<int64_t>(budget, 1, 4));
      budget /= d;
      dims.push_back(d);
    }
    dims.push_back(row);
  } else {
    dims = PickDims(rank, max_elements);
  }
  if (rank >= 1 && rng.Chance(opt.zero_dim_probability)) {
    dims[rng.Uniform(0, rank - 1)] = 0;
  }
  return dims;
}

Shape Gen::MakeShape(P t, std::vector<int64_t> dims) {
  Shape s(t, dims);
  const int64_t rank = s.rank();
  if (rank >= 2 && rng.Chance(opt.layout_probability)) {
    std::vector<int64_t> m2m(rank);
    std::iota(m2m.begin(), m2m.end(), 0);
    for (int64_t i = rank - 1; i > 0; --i) {
      std::swap(m2m[i], m2m[rng.Uniform(0, i)]);
    }
    std::vector<int64_t> def(rank);
    for (int64_t i = 0; i < rank; ++i) def[i] = rank - 1 - i;
    if (m2m != def) s.set_layout(Layout{m2m, ""});
  }
  return s;
}

Shape Gen::Like(const Value& v, std::optional<P> t) {
  return MakeShape(t.value_or(v.shape.element_type()), v.shape.dims());
}

Value Gen::Emit(const Shape& shape, std::string_view op,
                const std::vector<Value>& operands, std::string_view attrs,
                double bound, bool pool) {
  std::vector<std::string> names;
  for (const Value& v : operands) {
    names.push_back(v.name);
    for (size_t i = 0; i < ctx->pool.size(); ++i) {
      if (ctx->pool[i].name == v.name) ++ctx->uses[i];
    }
  }
  if (shape.IsArray()) {
    bound = std::min(bound, TypeMax(shape.element_type()));
    if (std::isnan(bound)) bound = std::numeric_limits<double>::infinity();
  }
  Value v = ctx->builder->Add(shape, op, names, attrs, bound);
  if (pool && shape.IsArray()) {
    ctx->pool.push_back(v);
    ctx->uses.push_back(0);
  }
  return v;
}

void Gen::Reserve(const Value& v) {
  for (size_t i = 0; i < ctx->pool.size(); ++i) {
    if (ctx->pool[i].name != v.name) continue;
    ctx->pool.erase(ctx->pool.begin() + i);
    ctx->uses.erase(ctx->uses.begin() + i);
    break;
  }
  ctx->outputs.push_back(v);
}

bool Gen::SameOperand() {
  return rng.Chance(opt.same_operand_probability * (special ? 2 : 1));
}

Value Gen::NoNaN(const Value& v) {
  const P t = v.shape.element_type();
  if (!special || !IsFloat(t)) return v;
  Value eq =
      Emit(Like(v, P::PRED), "compare", {v, v}, "direction=EQ", 1, false);
  Value zero = Splat(t, v.shape.dims(), 0);
  return Emit(Like(v), "select", {eq, v, zero}, "", v.bound);
}

Value Gen::Finite(const Value& v) {
  const P t = v.shape.element_type();
  if (!special || !IsFloat(t)) return v;
  Value ok = Emit(Like(v, P::PRED), "is-finite", {v}, "", 1, false);
  Value zero = Splat(t, v.shape.dims(), 0);
  return Emit(Like(v), "select", {ok, v, zero}, "", v.bound);
}

Value Gen::Param(const Shape& shape, bool maybe_edge) {
  const P t = shape.element_type();
  double bound = InputBound(t);
  std::vector<InterestingValue> edge;
  if (maybe_edge && ctx->can_add_params && rng.Chance(opt.edge_inputs)) {
    edge = EdgeValues(t, false);
    for (const InterestingValue& v : edge) bound = std::max(bound, v.magnitude);
  }
  Value v = ctx->builder->AddParameter(shape, bound);
  if (!edge.empty()) {
    edge_params.push_back({ctx->builder->num_parameters() - 1, edge});
  }
  ctx->pool.push_back(v);
  ctx->uses.push_back(0);
  return v;
}

Value Gen::Constant(P t, double v) { return Splat(t, {}, v); }

Value Gen::Splat(P t, const std::vector<int64_t>& dims, double v) {
  if (IsInteger(t)) {
    v = std::clamp(v, IsSigned(t) ? -TypeMax(t) : 0.0, TypeMax(t) - 1);
  }
  // Constant text goes where operands go: Add prints it inside the parens.
  Value c = ctx->builder->Add(Shape(t, {}), "constant", {ScalarText(t, v)}, "",
                              std::fabs(v));
  if (dims.empty()) return c;
  return Emit(MakeShape(t, dims), "broadcast", {c}, "dimensions={}",
              std::fabs(v), false);
}

std::optional<Value> Gen::PickValue(
    const std::function<bool(const Value&)>& f) {
  std::vector<size_t> ok, unused;
  for (size_t i = 0; i < ctx->pool.size(); ++i) {
    if (!f(ctx->pool[i])) continue;
    ok.push_back(i);
    if (ctx->uses[i] == 0) unused.push_back(i);
  }
  if (ok.empty()) return std::nullopt;
  if (!unused.empty() && rng.Chance(0.6)) return ctx->pool[rng.Pick(unused)];
  return ctx->pool[rng.Pick(ok)];
}

Value Gen::Operand(P t, const std::vector<int64_t>& dims) {
  if (rng.Chance(0.85)) {
    if (auto v = PickValue([&](const Value& v) {
          return v.shape.element_type() == t && v.shape.dims() == dims;
        })) {
      return *v;
    }
  }
  if (rng.Chance(0.6)) {
    if (auto v = PickValue([&](const Value& v) {
          return v.shape.dims() == dims &&
                 !(IsComplex(v.shape.element_type()) && !IsComplex(t));
        })) {
      return Convert(*v, t);
    }
  }
  if (ctx->can_add_params && rng.Chance(0.7)) return Param(MakeShape(t, dims));
  Shape target(t, dims);
  if (auto v = PickValue([&](const Value& v) {
        return v.shape.element_count() == target.element_count() &&
               !(IsComplex(v.shape.element_type()) && !IsComplex(t));
      })) {
    Value r = Emit(MakeShape(v->shape.element_type(), dims), "reshape", {*v},
                   "", v->bound);
    return Convert(r, t);
  }
  if (auto v = PickValue([&](const Value& v) {
        return v.shape.rank() == 0 &&
               !(IsComplex(v.shape.element_type()) && !IsComplex(t));
      })) {
    Value c = Convert(*v, t);
    return Emit(MakeShape(t, dims), "broadcast", {c}, "dimensions={}", c.bound);
  }
  return Splat(t, dims,
               static_cast<double>(rng.Uniform(-3, 3)) *
                   (IsUnsigned(t) || t == P::PRED ? -1 : 1));
}

std::optional<Value> Gen::AnyOperand(const std::function<bool(P)>& f) {
  if (rng.Chance(0.85)) {
    if (auto v = PickValue(
            [&](const Value& v) { return f(v.shape.element_type()); })) {
      return v;
    }
  }
  auto t = PickType(f);
  if (!t) return std::nullopt;
  if (auto v = PickValue([&](const Value&) { return true; })) {
    if (rng.Chance(0.5)) return Operand(*t, v->shape.dims());
  }
  return Operand(*t, PickDims());
}

Value Gen::IndexScalar() {
  static const std::vector<P> kIndex = {P::S32, P::S64, P::U32, P::S8,
                                        P::U8,  P::S16, P::U16, P::U64};
  const P t = rng.Chance(0.6) ? P::S32 : rng.Pick(kIndex);
  if (ctx->can_add_params && rng.Chance(0.6)) return Param(Shape(t, {}));
  return Splat(t, {}, static_cast<double>(rng.Uniform(0, 300)));
}

Value Gen::Tame(const Value& v, double b) {
  const P t = v.shape.element_type();
  if (opt.allow_nonfinite || t == P::PRED || !(v.bound > b)) return v;
  if (IsComplex(t)) {
    const P r = RealPart(t);
    Value re = Tame(Unary("real", v, v.bound, r), b);
    Value im = Tame(Unary("imag", v, v.bound, r), b);
    return Binary("complex", re, im, b);
  }
  if (IsFloat(t)) b = std::min(b, MaxFinite(t) / 2);
  if (IsInteger(t)) b = std::min(b, TypeMax(t) / 2);
  if (IsFloat(t) && b >= 1) b = std::ldexp(1.0, static_cast<int>(std::log2(b)));
  const double lo = IsUnsigned(t) ? 0 : -b;
  const bool scalar = rng.Chance(0.3);
  const std::vector<int64_t> dims =
      scalar ? std::vector<int64_t>{} : v.shape.dims();
  Value l = Splat(t, dims, lo), h = Splat(t, dims, b);
  return Emit(Like(v), "clamp", {l, v, h}, "", b);
}

Value Gen::Convert(const Value& in, P t, bool saturate) {
  Value v = in;
  P from = v.shape.element_type();
  if (from == t) return v;
  if (IsComplex(from) && !IsComplex(t)) {
    v = Unary(rng.Chance(0.5) ? "real" : "imag", v, v.bound, RealPart(from));
    from = v.shape.element_type();
    if (from == t) return v;
  }
  if (saturate && (IsInteger(t) || NonfiniteOk())) {
    // Integers: wrapped or saturated, anywhere in the type's range.
    const double bound = !IsInteger(t) && v.bound <= Limit(t)
                             ? v.bound
                             : std::numeric_limits<double>::infinity();
    return Emit(Like(v, t), "convert", {v}, "", bound);
  }
  if (!opt.allow_nonfinite) {
    if (IsFloat(from) && IsInteger(t)) {
      // In-range values only: out-of-range float->int is not defined the
      // same way everywhere.
      double r = std::ldexp(1.0, BitWidth(t) - (IsSigned(t) ? 2 : 1));
      r = std::min(r, std::ldexp(1.0, 15));
      if (v.bound > r || IsUnsigned(t)) {
        const double lo = IsUnsigned(t) ? 0 : -r;
        Value l = Splat(from, v.shape.dims(), lo);
        Value h = Splat(from, v.shape.dims(), r);
        v = Emit(Like(v), "clamp", {l, v, h}, "", r);
      }
    } else if ((IsFloat(t) || IsComplex(t)) && v.bound > Limit(t)) {
      v = Tame(v, Limit(t));
    }
  }
  // Signed -> unsigned wraps negative values to huge ones.
  const double bound = IsSigned(from) && IsUnsigned(t) ? TypeMax(t) : v.bound;
  return Emit(Like(v, t), "convert", {v}, "", bound);
}

Value Gen::Unary(std::string_view op, const Value& v, double bound,
                 std::optional<P> out, std::string_view attrs) {
  return Emit(Like(v, out), op, {v}, attrs, bound);
}

Value Gen::Binary(std::string_view op, const Value& a, const Value& b,
                  double bound, std::string_view attrs) {
  P t = a.shape.element_type();
  if (op == "complex") t = t == P::F64 ? P::C128 : P::C64;
  if (op == "compare") t = P::PRED;
  return Emit(Like(a, t), op, {a, b}, attrs, bound);
}

std::unique_ptr<Gen::BodyScope> Gen::BeginBody(std::string_view prefix) {
  auto scope = std::make_unique<BodyScope>();
  scope->builder = pb.NewComputation(prefix);
  scope->context.builder = scope->builder.get();
  scope->saved = ctx;
  ctx = &scope->context;
  ++depth;
  return scope;
}

std::vector<Value> Gen::BodyParams(const std::vector<Shape>& params,
                                   double bound) {
  std::vector<Value> out;
  for (const Shape& s : params) {
    if (!s.IsTuple()) {
      out.push_back(Param(s));
      out.back().bound = ctx->pool.back().bound = bound;
      continue;
    }
    Value t = ctx->builder->AddParameter(s, bound);
    for (int64_t i = 0; i < s.tuple_size(); ++i) {
      out.push_back(Emit(s.tuple_shape(i), "get-tuple-element", {t},
                         "index=" + std::to_string(i), bound));
    }
  }
  return out;
}

void Gen::BodyOps() {
  for (int k = 0; k < opt.body_instructions; ++k) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      if (EmitElementwise(*this, rng.Pick(internal::BodyOps()))) break;
    }
  }
  // Loop bodies, branches and callees compute more than elementwise ops;
  // the compiler's fusion pass leaves them as they are.
  if (!loop_fusion_body && rng.Chance(0.5)) EmitNormalize(*this);
}

std::string Gen::EndBody(BodyScope& scope, const std::vector<Value>& outs,
                         bool tuple_root) {
  if (outs.size() == 1 && !tuple_root) {
    scope.builder->SetRoot(outs[0].name);
  } else {
    std::vector<Shape> shapes;
    for (const Value& v : outs) shapes.push_back(v.shape);
    Value t = Emit(Shape::Tuple(shapes), "tuple", outs, "", 0, false);
    scope.builder->SetRoot(t.name);
  }
  --depth;
  ctx = scope.saved;
  pb.Finish(*scope.builder);
  return scope.builder->name();
}

Value Gen::Result(const Shape& s, double bound) {
  Value v = Tame(Operand(s.element_type(), s.dims()), bound);
  // The result carries the declared layout.
  if (v.shape != s) v = Emit(s, "copy", {v}, "", v.bound);
  return v;
}

std::string Gen::Body(std::string_view prefix, const std::vector<Shape>& params,
                      const std::vector<Shape>& results, double bound,
                      bool tuple_root) {
  auto scope = BeginBody(prefix);
  BodyParams(params, bound);
  BodyOps();
  std::vector<Value> outs;
  for (const Shape& s : results) outs.push_back(Result(s, bound));
  return EndBody(*scope, outs, tuple_root);
}

}  // namespace trench::fuzz::internal
