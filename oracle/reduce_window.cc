// reduce-window: N inputs, N scalar inits, a window per dimension with
// size, stride, low/high padding, base (lhs) dilation and window (rhs)
// dilation.
//
// For output position o and window position k in dimension d the input
// coordinate is (o*stride - pad_lo + k*window_dilation) / base_dilation when
// that division is exact and the result lies inside the input; padding and
// dilation holes contribute nothing (the accumulator keeps its value), as in
// XLA's evaluator (hlo_evaluator_typed_visitor.h, IterateThroughWindow).
// Window positions are visited in row-major order. Recognised single-op
// reducers run typed (float add in f64, rounded once; see reduce.cc).
#include <algorithm>

#include "oracle/index_util.h"
#include "oracle/kernels.h"

namespace trench::oracle {
namespace {

template <typename N>
void ReduceWindowFast(ReducerKind kind, const Literal& in, N init,
                      const WindowPlan& plan, Literal& out) {
  const N* x = in.data<N>().data();
  std::span<N> o = out.mutable_data<N>();
  const bool add_f64 = !std::is_integral_v<N> && kind == ReducerKind::kAdd;
  plan.ForEachOutput([&](int64_t oi, std::span<const int64_t> offsets) {
    if (add_f64) {
      double acc = ToDouble(init);
      for (int64_t off : offsets) acc += ToDouble(x[off]);
      o[oi] = FromDouble<N>(acc);
    } else {
      N acc = init;
      for (int64_t off : offsets) acc = ApplyReducer(kind, acc, x[off]);
      o[oi] = acc;
    }
  });
}

}  // namespace

StatusOr<Literal> EvalReduceWindow(const HloInstruction& instr, Operands ops,
                                   CallContext& ctx) {
  ASSIGN_OR_RETURN(const ReduceOperands split,
                   SplitReduceOperands(instr, ops, "reduce-window"));
  const size_t n = split.inputs.size();
  Operands inputs = split.inputs, inits = split.inits;
  const std::vector<int64_t>& dims = inputs[0]->shape().dims();
  const Shape& rs = instr.shape();
  std::vector<Shape> leaf_shapes;
  if (rs.IsTuple()) {
    if (rs.tuple_size() != static_cast<int64_t>(n)) {
      return Invalid(instr, "result tuple size differs from the input count");
    }
    leaf_shapes = rs.tuple_shapes();
  } else if (n == 1) {
    leaf_shapes.push_back(rs);
  } else {
    return Invalid(instr, "variadic reduce-window must return a tuple");
  }
  if (!leaf_shapes[0].IsArray()) {
    return Invalid(instr, "result is not an array");
  }
  ASSIGN_OR_RETURN(WindowPlan plan,
                   WindowPlan::Make(instr, dims, leaf_shapes[0].dims()));
  for (size_t i = 0; i < n; ++i) {
    const Shape& s = leaf_shapes[i];
    if (!s.IsArray() || s.dims() != plan.output_dims() ||
        s.element_type() != inits[i]->element_type()) {
      return Invalid(
          instr, "result " + std::to_string(i) + " is " + s.ToString(false) +
                     ", expected " +
                     std::string(PrimitiveTypeName(inits[i]->element_type())) +
                     DimsToString(plan.output_dims()));
    }
  }
  std::vector<Literal> results;
  for (const Shape& s : leaf_shapes) results.emplace_back(s);

  const PrimitiveType t = inputs[0]->element_type();
  const ReducerKind kind =
      n == 1 && inits[0]->element_type() == t && !IsComplex(t)
          ? ClassifyReducer(*instr.to_apply(), t)
          : ReducerKind::kNone;
  if (kind != ReducerKind::kNone && kind != ReducerKind::kAssign) {
    DispatchArrayType(t, [&]<PrimitiveType T>() {
      using N = NativeT<T>;
      if constexpr (T != PrimitiveType::C64 && T != PrimitiveType::C128) {
        ReduceWindowFast<N>(kind, *inputs[0], inits[0]->data<N>()[0], plan,
                            results[0]);
      }
    });
  } else {
    std::vector<Literal> acc, vals, returned;
    std::vector<PrimitiveType> types;
    std::vector<const Literal*> args;
    for (size_t i = 0; i < n; ++i) {
      acc.push_back(MakeScalar(inits[i]->element_type()));
      vals.push_back(MakeScalar(inputs[i]->element_type()));
      types.push_back(inits[i]->element_type());
    }
    for (Literal& a : acc) args.push_back(&a);
    for (Literal& v : vals) args.push_back(&v);
    const HloComputation& comp = *instr.to_apply();
    Status status;
    plan.ForEachOutput([&](int64_t oi, std::span<const int64_t> offsets) {
      if (!status.ok()) return;
      for (size_t i = 0; i < n; ++i) LoadScalar(*inits[i], 0, acc[i]);
      for (int64_t off : offsets) {
        for (size_t i = 0; i < n; ++i) LoadScalar(*inputs[i], off, vals[i]);
        status = CallScalars(ctx, comp, args, types, &returned);
        if (!status.ok()) return;
        for (size_t i = 0; i < n; ++i) acc[i] = std::move(returned[i]);
      }
      for (size_t i = 0; i < n; ++i) StoreScalar(acc[i], results[i], oi);
    });
    RETURN_IF_ERROR(status);
  }
  if (!rs.IsTuple()) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

}  // namespace trench::oracle
