// Interesting values in generated programs (GeneratorOptions::edge_*):
// edge operands, edge literals and the inputs of edge parameters.
#include <algorithm>

#include "triage/fuzz/generator_internal.h"

namespace trench::fuzz::internal {
namespace {

using P = PrimitiveType;

double MaxMagnitude(P t, const std::vector<InterestingValue>& values) {
  if (t == P::PRED) return 1;
  double b = 0;
  for (const InterestingValue& v : values) b = std::max(b, v.magnitude);
  return b;
}

bool IsZero(const InterestingValue& v) { return v.finite && v.value == 0; }

std::string ElementsText(Gen& g, P t, const std::vector<int64_t>& dims,
                         size_t d, const std::vector<InterestingValue>& v) {
  if (d == dims.size()) return InterestingText(t, g.rng.Pick(v));
  std::string s = "{";
  for (int64_t i = 0; i < dims[d]; ++i) {
    if (i) s += ", ";
    s += ElementsText(g, t, dims, d + 1, v);
  }
  return s + "}";
}

}  // namespace

std::vector<InterestingValue> Gen::EdgeValues(P t, bool nonzero) {
  std::vector<InterestingValue> all = InterestingValuesOf(t, !NonfiniteOk());
  if (nonzero) {
    all.erase(std::remove_if(all.begin(), all.end(), IsZero), all.end());
  }
  std::vector<InterestingValue> out;
  if (all.empty()) return out;
  std::vector<InterestingValue> nonfinite;
  for (const InterestingValue& v : all) {
    if (!v.finite) nonfinite.push_back(v);
  }
  const int n = static_cast<int>(rng.Uniform(1, 4));
  for (int i = 0; i < n; ++i) {
    // Programs about special values are few (special_values): there, a
    // value is inf or NaN half of the time.
    const bool nf = !nonfinite.empty() && special && rng.Chance(0.5);
    out.push_back(rng.Pick(nf ? nonfinite : all));
  }
  return out;
}

std::string EdgeLiteralText(Gen& g, P t, const std::vector<int64_t>& dims,
                            const std::vector<InterestingValue>& values) {
  return ElementsText(g, t, dims, 0, values);
}

Value Gen::EdgeOperand(P t, const std::vector<int64_t>& dims, bool nonzero) {
  std::vector<InterestingValue> values = EdgeValues(t, nonzero);
  if (values.empty()) return Operand(t, dims);
  const double bound = MaxMagnitude(t, values);
  const Shape s = MakeShape(t, dims);
  const double r = rng.Real();
  if (ctx->can_add_params && r < 0.4) {
    // Out of constant folding's reach: the values arrive at run time.
    Value p = Param(s, false);
    p.bound = ctx->pool.back().bound = bound;
    edge_params.push_back({ctx->builder->num_parameters() - 1, values});
    return p;
  }
  Value c;
  if (s.element_count() >= 1 && s.element_count() <= 16 && rng.Chance(0.7)) {
    c = ctx->builder->Add(s, "constant",
                          {EdgeLiteralText(*this, t, dims, values)}, "", bound);
  } else {
    const InterestingValue& v = values[0];
    Value k =
        ctx->builder->Add(Shape(t, {}), "constant", {InterestingText(t, v)}, "",
                          MaxMagnitude(t, {v}));
    c = dims.empty()
            ? k
            : Emit(s, "broadcast", {k}, "dimensions={}", k.bound, false);
  }
  if (r > 0.7 && depth == 0) {
    // Hidden from constant folding and the algebraic simplifier, which do
    // not look through an optimization barrier.
    const Shape tuple = Shape::Tuple({c.shape});
    Value tu = Emit(tuple, "tuple", {c}, "", c.bound, false);
    Value ob = Emit(tuple, "opt-barrier", {tu}, "", c.bound, false);
    c = Emit(c.shape, "get-tuple-element", {ob}, "index=0", c.bound, false);
  }
  ctx->pool.push_back(c);
  ctx->uses.push_back(0);
  return c;
}

std::vector<int64_t> FillEdgeInputs(const Gen& g, uint64_t seed,
                                    std::vector<Literal>& inputs) {
  Rng rng(seed ^ 0x3c6ef372fe94f82bull);
  static const std::vector<double> kDensity = {0.05, 0.3, 1.0};
  std::vector<int64_t> out;
  for (const Gen::EdgeParam& p : g.edge_params) {
    if (p.number < 0 || p.number >= static_cast<int64_t>(inputs.size())) {
      continue;
    }
    Literal& l = inputs[p.number];
    if (!l.shape().IsArray() || l.element_count() == 0) continue;
    const int64_t n = l.element_count();
    const double density = rng.Pick(kDensity);
    StoreInteresting(l, rng.Uniform(0, n - 1), rng.Pick(p.values));
    for (int64_t k = 0; k < n; ++k) {
      if (rng.Chance(density)) StoreInteresting(l, k, rng.Pick(p.values));
    }
    out.push_back(p.number);
  }
  return out;
}

}  // namespace trench::fuzz::internal
