// Bounds of reductions (reduce, reduce-window, select-and-scatter) and
// sort. The rules are in oracle/numerics_contract.h.
#include <algorithm>
#include <cmath>

#include "oracle/index_util.h"
#include "oracle/numerics_internal.h"

namespace trench::oracle::numerics {
namespace {

// Runs reduce / reduce-window (single input) on f64 arrays with `reducer`.
StatusOr<Literal> ReduceF64(BoundsEvaluator& ev, const HloInstruction& instr,
                            const Literal& in, const Literal& init,
                            HloOpcode reducer) {
  const HloInstruction& clone = ev.F64Clone(instr, reducer);
  const Literal* args[] = {&in, &init};
  if (instr.opcode() == HloOpcode::kReduce) return EvalReduce(clone, args, ev);
  return EvalReduceWindow(clone, args, ev);
}

// Reducers that only pick among their inputs (argmax-style).
bool IsSelectionReducer(const HloComputation& comp) {
  for (const HloInstruction* i : comp.instructions()) {
    switch (i->opcode()) {
      case HloOpcode::kParameter:
      case HloOpcode::kConstant:
      case HloOpcode::kCompare:
      case HloOpcode::kSelect:
      case HloOpcode::kAnd:
      case HloOpcode::kOr:
      case HloOpcode::kNot:
      case HloOpcode::kTuple:
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kMaximum:
      case HloOpcode::kMinimum:
        break;
      default:
        return false;
    }
  }
  return true;
}

// Terms per output element (window elements plus the init).
int64_t TermsPerOutput(const HloInstruction& instr, const Literal& in,
                       const Shape& out) {
  if (instr.opcode() == HloOpcode::kReduceWindow && instr.attrs().window) {
    int64_t n = 1;
    for (const WindowDim& w : *instr.attrs().window)
      n *= std::max<int64_t>(1, w.size);
    return n + 1;
  }
  const int64_t outs = std::max<int64_t>(1, out.element_count());
  return in.element_count() / outs + 1;
}

// Variadic reduce / reduce-window: exact where every input of the window
// is exact (selection reducers), else undetermined.
StatusOr<Literal> VariadicBound(BoundsEvaluator& ev,
                                const HloInstruction& instr, BoundedOps ops,
                                const Literal& y) {
  const size_t n = ops.size() / 2;
  Literal e = FilledBound(y.shape(), 0);
  bool exact = true;
  for (const Bounded* b : ops) exact = exact && AllZero(b->e);
  if (exact) return e;
  if (!IsSelectionReducer(*instr.to_apply()) || !y.shape().IsTuple()) {
    ev.Note("variadic reduction with uncertain inputs");
    MakeUndetermined(e);
    return e;
  }
  // Max over the window of the summed input bounds.
  std::vector<double> sum(ops[0]->v.element_count(), 0);
  double init = 0;
  for (size_t k = 0; k < n; ++k) {
    const auto d = ops[k]->e.data<double>();
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += d[i];
    init += ops[n + k]->e.data<double>()[0];
  }
  std::unique_ptr<HloInstruction> clone = instr.CloneWithOperands({}, "");
  clone->set_shape(F64Shape(y.shape().tuple_shape(0)));
  clone->set_called_computation(
      0, const_cast<HloComputation*>(&ev.F64Reducer(HloOpcode::kMaximum)));
  const Literal in = F64Array(ops[0]->v.shape().dims(), sum);
  Literal init_lit(Shape(PrimitiveType::F64, {}));
  init_lit.mutable_data<double>()[0] = init;
  const Literal* args[] = {&in, &init_lit};
  StatusOr<Literal> m = instr.opcode() == HloOpcode::kReduce
                            ? EvalReduce(*clone, args, ev)
                            : EvalReduceWindow(*clone, args, ev);
  if (!m.ok()) return m.status();
  const auto md = m->data<double>();
  bool any = false;
  for (Literal& leaf : e.mutable_tuple_elements()) {
    auto d = leaf.mutable_data<double>();
    for (size_t i = 0; i < d.size() && i < md.size(); ++i) {
      if (md[i] > 0) d[i] = kInf, any = true;
    }
  }
  if (any) ev.Note("argmax-style reduction with uncertain inputs");
  return e;
}

StatusOr<Literal> SelectAndScatterBound(BoundsEvaluator& ev,
                                        const HloInstruction& instr,
                                        BoundedOps ops, const Literal& y) {
  Literal e = FilledBound(y.shape(), 0);
  bool exact = true;
  for (const Bounded* b : ops) exact = exact && AllZero(b->e);
  if (!exact) {
    ev.Note("select-and-scatter with uncertain inputs");
    MakeUndetermined(e);
    return e;
  }
  const PrimitiveType t = y.element_type();
  if (!IsFloat(t)) return e;
  // Up to W sources (W = window size) add into one element, in any order.
  int64_t w = 1;
  if (instr.attrs().window) {
    for (const WindowDim& d : *instr.attrs().window)
      w *= std::max<int64_t>(1, d.size);
  }
  double max_source = 0;
  for (double s : AsDoubles(ops[1]->v))
    max_source = std::max(max_source, std::fabs(s));
  const double init = std::fabs(AsDoubles(ops[2]->v)[0]);
  const std::vector<double> yd = AsDoubles(y);
  auto d = e.mutable_data<double>();
  for (size_t i = 0; i < d.size(); ++i) {
    d[i] = (w + 1) * AccumulatorRoundoff(t) * (w * max_source + init) +
           2 * UnitRoundoff(t) * std::fabs(yd[i]) + MinSubnormal(t);
  }
  return e;
}

}  // namespace

StatusOr<Literal> ReduceBound(BoundsEvaluator& ev, const HloInstruction& instr,
                              BoundedOps ops, const Literal& y,
                              bool across_devices) {
  if (instr.opcode() == HloOpcode::kSelectAndScatter) {
    return SelectAndScatterBound(ev, instr, ops, y);
  }
  if (ops.size() != 2 || !y.shape().IsArray()) {
    return VariadicBound(ev, instr, ops, y);
  }
  const PrimitiveType t = y.element_type();
  const Literal& x = ops[0]->v;
  const Literal& ex = ops[0]->e;
  const Literal& init = ops[1]->v;
  const Literal& einit = ops[1]->e;
  const bool exact_in = AllZero(ex) && AllZero(einit);
  const ReducerKind kind = ClassifyReducer(*instr.to_apply(), t);
  // Across devices the order is unspecified (XLA): a computation that is
  // not a known commutative one (one that returns an argument, say) may
  // give any device's contribution first.
  if (across_devices &&
      (kind == ReducerKind::kNone || kind == ReducerKind::kAssign)) {
    return FilledBound(y.shape(), kInf);
  }
  if (!IsFloat(t)) {
    if (exact_in) return FilledBound(y.shape(), 0);
    ASSIGN_OR_RETURN(Literal e,
                     ReduceF64(ev, instr, ex, einit, HloOpcode::kMaximum));
    for (double& d : e.mutable_data<double>()) d = d > 0 ? kInf : 0;
    return e;
  }
  const double u = UnitRoundoff(t), dsub = MinSubnormal(t);
  const double ua = across_devices ? std::max(u, AccumulatorRoundoff(t))
                                   : AccumulatorRoundoff(t);
  const double terms = static_cast<double>(TermsPerOutput(instr, x, y.shape()));
  const std::vector<double> yd = AsDoubles(y);
  switch (kind) {
    case ReducerKind::kMax:
    case ReducerKind::kMin: {
      Literal e = FilledBound(y.shape(), 0);
      if (!exact_in) {
        ASSIGN_OR_RETURN(e,
                         ReduceF64(ev, instr, ex, einit, HloOpcode::kMaximum));
      }
      // Which of the window's zeros (+0, -0) a min/max returns depends on
      // the order: such zeros have an unspecified sign.
      const ZeroSigns zx = ZeroSignIndicators(*ops[0]);
      const ZeroSigns zi = ZeroSignIndicators(*ops[1]);
      if (!MayMixZeroSigns(zx, zi)) {
        ClearZeroSignMarks(y, e);
        return e;
      }
      ASSIGN_OR_RETURN(Literal pos, ReduceF64(ev, instr, zx.pos, zi.pos,
                                              HloOpcode::kMaximum));
      ASSIGN_OR_RETURN(Literal neg, ReduceF64(ev, instr, zx.neg, zi.neg,
                                              HloOpcode::kMaximum));
      ASSIGN_OR_RETURN(
          Literal marked,
          ReduceF64(ev, instr, zx.marked, zi.marked, HloOpcode::kMaximum));
      MarkCombinedZeros(y, pos, neg, marked, e);
      return e;
    }
    case ReducerKind::kAdd: {
      Literal e = FilledBound(y.shape(), 0);
      if (!exact_in) {
        ASSIGN_OR_RETURN(e, ReduceF64(ev, instr, ex, einit, HloOpcode::kAdd));
      }
      ASSIGN_OR_RETURN(Literal mag,
                       ReduceF64(ev, instr, AbsPlus(x, nullptr),
                                 AbsPlus(init, nullptr), HloOpcode::kAdd));
      auto d = e.mutable_data<double>();
      const auto m = mag.data<double>();
      for (size_t i = 0; i < d.size(); ++i) {
        if (!std::isfinite(yd[i])) {
          d[i] = std::isinf(d[i]) ? kInf : 0;
          continue;
        }
        d[i] += terms * ua * m[i] + 2 * u * std::fabs(yd[i]) + dsub;
        // Partial sums of another order may overflow although this sum
        // does not: possible once sum |x_i| reaches the overflow threshold.
        if (m[i] >= OverflowThreshold(t)) d[i] = kInf;
      }
      return e;
    }
    case ReducerKind::kMul: {
      ASSIGN_OR_RETURN(Literal p0,
                       ReduceF64(ev, instr, AbsPlus(x, nullptr),
                                 AbsPlus(init, nullptr), HloOpcode::kMultiply));
      Literal p1 = p0;
      if (!exact_in) {
        ASSIGN_OR_RETURN(
            p1, ReduceF64(ev, instr, AbsPlus(x, &ex), AbsPlus(init, &einit),
                          HloOpcode::kMultiply));
      }
      // Partial products of another order may overflow, or leave the
      // normal range, although the whole product does not: the largest
      // partial product of any order is the product of the factors above
      // 1, the smallest that of the factors below 1.
      Literal hi_x = AbsPlus(x, exact_in ? nullptr : &ex);
      Literal hi_i = AbsPlus(init, exact_in ? nullptr : &einit);
      ClampBelow(hi_x, 1);
      ClampBelow(hi_i, 1);
      ASSIGN_OR_RETURN(Literal big,
                       ReduceF64(ev, instr, hi_x, hi_i, HloOpcode::kMultiply));
      Literal lo_x = AbsPlus(x, nullptr), lo_i = AbsPlus(init, nullptr);
      ClampAbove(lo_x, 1);
      ClampAbove(lo_i, 1);
      ASSIGN_OR_RETURN(Literal small,
                       ReduceF64(ev, instr, lo_x, lo_i, HloOpcode::kMultiply));
      Literal e = FilledBound(y.shape(), 0);
      auto d = e.mutable_data<double>();
      const auto a = p0.data<double>(), b = p1.data<double>();
      const auto bg = big.data<double>(), sm = small.data<double>();
      for (size_t i = 0; i < d.size(); ++i) {
        if (bg[i] >= OverflowThreshold(t) ||
            (sm[i] > 0 && sm[i] < MinNormal(t) && a[i] != 0)) {
          d[i] = kInf;  // The order decides.
          continue;
        }
        if (!std::isfinite(yd[i])) {
          d[i] = std::isfinite(b[i]) && a[i] == b[i] ? 0 : kInf;
          continue;
        }
        // Products may be rounded to the reducer's type at every step (XLA's
        // evaluator and the oracle's nominal value do so; a compiler may
        // too, or keep f32): both the nominal and the compiled value lie
        // within terms * max(u, ua) of the exact product.
        d[i] = (b[i] - a[i]) + 2 * terms * std::max(u, ua) * b[i] +
               2 * u * std::fabs(yd[i]) + dsub;
        if (!std::isfinite(d[i]) || b[i] >= OverflowThreshold(t)) d[i] = kInf;
      }
      return e;
    }
    default: {
      Literal e = FilledBound(y.shape(), 0);
      if (!exact_in || IsFloat(t)) {
        ev.Note("reduction with an unclassified float reducer");
        MakeUndetermined(e);
      }
      return e;
    }
  }
}

}  // namespace trench::oracle::numerics
