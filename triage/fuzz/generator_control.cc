// Control flow, called computations, tuples and constants.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "triage/fuzz/generator_internal.h"

namespace trench::fuzz::internal {
namespace {

using O = HloOpcode;
using P = PrimitiveType;

// 1-2 pool values (body depth limited: called computations nest at most
// twice).
std::vector<Value> Operands(Gen& g, int max_count) {
  std::vector<Value> out;
  const int n = static_cast<int>(g.rng.Uniform(1, max_count));
  for (int i = 0; i < n; ++i) {
    if (auto v = g.PickValue([](const Value&) { return true; })) {
      out.push_back(*v);
    }
  }
  return out;
}

double MaxBound(const std::vector<Value>& v, double floor) {
  double b = floor;
  for (const Value& x : v) {
    if (IsFloat(x.shape.element_type()) || IsComplex(x.shape.element_type())) {
      b = std::max(b, x.bound);
    }
  }
  return b;
}

std::vector<Shape> Shapes(const std::vector<Value>& v) {
  std::vector<Shape> s;
  for (const Value& x : v) s.push_back(x.shape);
  return s;
}

// Unpacks a tuple value into the pool.
void Unpack(Gen& g, const Value& tuple, const std::vector<Shape>& shapes,
            size_t first, double bound) {
  for (size_t i = first; i < shapes.size(); ++i) {
    g.Emit(shapes[i], "get-tuple-element", {tuple},
           "index=" + std::to_string(i), bound);
  }
}

// Elements tamed to a common bound (keeps loop states bounded).
std::vector<Value> Tamed(Gen& g, std::vector<Value> v, double* bound) {
  *bound = std::min(MaxBound(v, 1), 1e3);
  for (Value& x : v) x = g.Tame(x, *bound);
  return v;
}

bool EmitWhile(Gen& g) {
  double b = 0;
  std::vector<Value> state = Tamed(g, Operands(g, 2), &b);
  if (state.empty()) return false;
  const Shape counter(P::S32, {});
  std::vector<Shape> shapes = {counter};
  for (const Value& v : state) shapes.push_back(v.shape);
  const Shape tuple = Shape::Tuple(shapes);
  // Condition: i < trip count.
  auto cs = g.BeginBody("cond");
  std::vector<Value> cp = g.BodyParams({tuple}, b);
  Value n = g.Constant(P::S32, static_cast<double>(g.rng.Uniform(0, 4)));
  Value lt = g.Emit(Shape(P::PRED, {}), "compare", {cp[0], n}, "direction=LT",
                    1, false);
  const std::string cond = g.EndBody(*cs, {lt}, false);
  // Body: i + 1 and random ops on the state, bounded by b.
  auto bs = g.BeginBody("body");
  std::vector<Value> bp = g.BodyParams({tuple}, b);
  Value one = g.Constant(P::S32, 1);
  Value next = g.Emit(counter, "add", {bp[0], one}, "", 0, false);
  g.BodyOps();
  std::vector<Value> outs = {next};
  for (size_t i = 1; i < shapes.size(); ++i)
    outs.push_back(g.Result(shapes[i], b));
  const std::string body = g.EndBody(*bs, outs, true);
  std::vector<Value> init = {g.Constant(P::S32, 0)};
  init.insert(init.end(), state.begin(), state.end());
  Value t = g.Emit(tuple, "tuple", init, "", b, false);
  Value w = g.Emit(tuple, "while", {t}, "condition=" + cond + ", body=" + body,
                   b, false);
  Unpack(g, w, shapes, 1, b);
  return true;
}

bool EmitConditional(Gen& g) {
  double b = 0;
  std::vector<Value> ops = Tamed(g, Operands(g, 2), &b);
  if (ops.empty()) return false;
  // The branches' result: the shapes of some operands (maybe all).
  std::vector<Shape> results = {g.Like(ops[0])};
  if (ops.size() > 1 && g.rng.Chance(0.5)) results.push_back(g.Like(ops[1]));
  const bool tuple_arg = ops.size() > 1 || g.rng.Chance(0.3);
  Value arg = ops[0];
  if (tuple_arg)
    arg = g.Emit(Shape::Tuple(Shapes(ops)), "tuple", ops, "", b, false);
  const bool tuple_root = results.size() > 1 || g.rng.Chance(0.3);
  const bool by_pred = g.rng.Chance(0.4);
  const int n = by_pred ? 2 : static_cast<int>(g.rng.Uniform(1, 3));
  std::vector<std::string> branches;
  for (int i = 0; i < n; ++i) {
    branches.push_back(g.Body("branch", {arg.shape}, results, b, tuple_root));
  }
  Value k = by_pred ? g.Operand(P::PRED, {}) : g.Operand(P::S32, {});
  std::vector<Value> operands = {k};
  for (int i = 0; i < n; ++i) operands.push_back(arg);
  std::string attrs;
  if (by_pred) {
    attrs = "true_computation=" + branches[0] +
            ", false_computation=" + branches[1];
  } else {
    attrs = "branch_computations={";
    for (int i = 0; i < n; ++i) attrs += (i ? ", " : "") + branches[i];
    attrs += "}";
  }
  if (!tuple_root) {
    g.Emit(results[0], "conditional", operands, attrs, b);
    return true;
  }
  Value c =
      g.Emit(Shape::Tuple(results), "conditional", operands, attrs, b, false);
  Unpack(g, c, results, 0, b);
  return true;
}

bool EmitCallLike(Gen& g, O op) {
  double b = 0;
  std::vector<Value> ops = Tamed(g, Operands(g, 2), &b);
  if (ops.empty()) return false;
  if (op == O::kMap) {
    // map over same-dims operands with a scalar computation.
    const P t = ops[0].shape.element_type();
    Value y = g.Operand(t, ops[0].shape.dims());
    y = g.Tame(y, b);
    const Shape s(t, {});
    const std::string f = g.Body("mapped", {s, s}, {s}, b, false);
    std::vector<int64_t> dims(ops[0].shape.rank());
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int64_t>(i);
    g.Emit(g.Like(ops[0]), "map", {ops[0], y},
           "dimensions=" + ListText(dims) + ", to_apply=" + f, b);
    return true;
  }
  std::vector<Shape> params = Shapes(ops);
  std::vector<Shape> results;
  if (op == O::kFusion) {
    // A loop fusion: elementwise on one iteration space.
    const Value& x = ops[0];
    for (Value& v : ops) {
      if (v.shape.dims() != x.shape.dims())
        v = g.Operand(v.shape.element_type(), x.shape.dims());
    }
    params = Shapes(ops);
    results = {g.Like(x)};
  } else {
    results = {g.Like(ops[0])};
    if (g.rng.Chance(0.4)) results.push_back(g.Like(ops.back()));
  }
  const bool tuple_root = results.size() > 1;
  g.loop_fusion_body = op == O::kFusion;
  const std::string f = g.Body(op == O::kFusion ? "fused" : "callee", params,
                               results, b, tuple_root);
  g.loop_fusion_body = false;
  const std::string attrs =
      op == O::kFusion ? "kind=kLoop, calls=" + f : "to_apply=" + f;
  const char* name = op == O::kFusion ? "fusion" : "call";
  if (!tuple_root) {
    g.Emit(results[0], name, ops, attrs, b);
    return true;
  }
  Value c = g.Emit(Shape::Tuple(results), name, ops, attrs, b, false);
  Unpack(g, c, results, 0, b);
  return true;
}

bool EmitTuple(Gen& g, O op) {
  std::vector<Value> ops = Operands(g, 3);
  if (ops.empty()) return false;
  const std::vector<Shape> shapes = Shapes(ops);
  Value t = g.Emit(Shape::Tuple(shapes), "tuple", ops, "", 0, false);
  if (op == O::kOptimizationBarrier) {
    t = g.Emit(Shape::Tuple(shapes), "opt-barrier", {t}, "", 0, false);
  }
  const int64_t k = g.rng.Uniform(0, ops.size() - 1);
  g.Emit(shapes[k], "get-tuple-element", {t}, "index=" + std::to_string(k),
         ops[k].bound);
  return true;
}

std::string Element(Gen& g, P t, double* bound) {
  if (t == P::PRED) return g.rng.Chance(0.5) ? "true" : "false";
  if (IsInteger(t)) {
    const int64_t v =
        IsUnsigned(t) ? g.rng.Uniform(0, 15) : g.rng.Uniform(-8, 7);
    *bound = std::max(*bound, std::fabs(static_cast<double>(v)));
    return std::to_string(v);
  }
  auto real = [&] {
    const double v = static_cast<double>(g.rng.Uniform(-400, 400)) / 100;
    *bound = std::max(*bound, std::fabs(v));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return std::string(buf);
  };
  if (IsComplex(t)) return "(" + real() + ", " + real() + ")";
  return real();
}

std::string LiteralText(Gen& g, P t, const std::vector<int64_t>& dims, size_t d,
                        double* bound) {
  if (d == dims.size()) return Element(g, t, bound);
  std::string s = "{";
  for (int64_t i = 0; i < dims[d]; ++i) {
    if (i) s += ", ";
    s += LiteralText(g, t, dims, d + 1, bound);
  }
  return s + "}";
}

bool EmitConstant(Gen& g) {
  auto t = g.PickType([](P) { return true; });
  std::vector<int64_t> dims = g.PickDims(
      static_cast<int>(g.rng.Uniform(0, std::min(g.opt.max_rank, 3))), 64);
  double bound = 0;
  std::string text;
  std::vector<InterestingValue> edge;
  if (g.rng.Chance(g.opt.edge_constants)) edge = g.EdgeValues(*t, false);
  if (!edge.empty()) {
    // Interesting values where constant folding and the algebraic
    // simplifier see them.
    text = EdgeLiteralText(g, *t, dims, edge);
    for (const InterestingValue& v : edge) bound = std::max(bound, v.magnitude);
    if (*t == P::PRED) bound = 1;
  } else {
    text = LiteralText(g, *t, dims, 0, &bound);
  }
  Value c =
      g.ctx->builder->Add(g.MakeShape(*t, dims), "constant", {text}, "", bound);
  g.ctx->pool.push_back(c);
  g.ctx->uses.push_back(0);
  return true;
}

}  // namespace

bool EmitControl(Gen& g, HloOpcode op) {
  if (op == O::kConstant) return EmitConstant(g);
  if (op == O::kTuple || op == O::kGetTupleElement ||
      op == O::kOptimizationBarrier) {
    return EmitTuple(g, op);
  }
  if (g.depth >= 2) return false;
  switch (op) {
    case O::kWhile:
      return EmitWhile(g);
    case O::kConditional:
      return EmitConditional(g);
    case O::kCall:
    case O::kMap:
    case O::kFusion:
      return EmitCallLike(g, op);
    default:
      return false;
  }
}

}  // namespace trench::fuzz::internal
