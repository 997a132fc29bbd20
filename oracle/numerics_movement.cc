// Bounds of data movement ops: the op itself applied to the bound arrays
// (an F64 copy of the instruction), with indices from the nominal values.
// Scatter also bounds its combiner (overwrite, add, max, min).
#include <cmath>

#include "oracle/index_util.h"
#include "oracle/numerics_internal.h"

namespace trench::oracle::numerics {
namespace {

// Runs the F64 copy of `instr` (reducer replaced by `reducer`) on `args`.
StatusOr<Literal> RunF64(BoundsEvaluator& ev, const HloInstruction& instr,
                         std::span<const Literal* const> args,
                         HloOpcode reducer = HloOpcode::kAfterAll) {
  const HloInstruction& clone = ev.F64Clone(instr, reducer);
  switch (instr.opcode()) {
    case HloOpcode::kBroadcast:
      return EvalBroadcast(clone, args);
    case HloOpcode::kReshape:
      return EvalReshape(clone, args);
    case HloOpcode::kBitcast:  // The clone has no operand to say its layout.
      if (instr.operand_count() != 1) {
        return InvalidArgument(instr.name() + ": bitcast takes one operand");
      }
      return EvalBitcast(clone, args, &instr.operand(0)->shape());
    case HloOpcode::kTranspose:
      return EvalTranspose(clone, args);
    case HloOpcode::kSlice:
      return EvalSlice(clone, args);
    case HloOpcode::kDynamicSlice:
      return EvalDynamicSlice(clone, args);
    case HloOpcode::kDynamicUpdateSlice:
      return EvalDynamicUpdateSlice(clone, args);
    case HloOpcode::kConcatenate:
      return EvalConcatenate(clone, args);
    case HloOpcode::kPad:
      return EvalPad(clone, args);
    case HloOpcode::kReverse:
      return EvalReverse(clone, args);
    case HloOpcode::kGather:
      return EvalGather(clone, args);
    case HloOpcode::kScatter:
      return EvalScatter(clone, args, ev);
    default:
      return Unimplemented("no bound rule for " +
                           std::string(OpcodeName(instr.opcode())));
  }
}

// Whether the operands from `first` on (indices) are all exact.
bool IndicesExact(BoundedOps ops, size_t first) {
  for (size_t k = first; k < ops.size(); ++k) {
    if (!AllZero(ops[k]->e)) return false;
  }
  return true;
}

Literal Abs(const Literal& v) {
  std::vector<double> x = AsDoubles(v);
  for (double& d : x) d = std::fabs(d);
  return F64Array(v.shape().dims(), x);
}

Literal Filled(const Shape& shape, double value) {
  Literal out(F64Shape(shape));
  for (double& d : out.mutable_data<double>()) d = value;
  return out;
}

StatusOr<Literal> ScatterBound(BoundsEvaluator& ev, const HloInstruction& instr,
                               BoundedOps ops, const Literal& y) {
  if (ops.size() != 3 || !y.shape().IsArray() ||
      instr.called_computations().empty()) {
    // Variadic scatter: exact only if everything is exact integers.
    Literal e = FilledBound(y.shape(), 0);
    bool exact = true;
    for (const Bounded* b : ops) exact = exact && AllZero(b->e);
    if (!exact ||
        IsFloat(y.shape().IsTuple() ? y.tuple_element(0).element_type()
                                    : y.element_type())) {
      ev.Note("variadic scatter");
      MakeUndetermined(e);
    }
    return e;
  }
  const PrimitiveType t = y.element_type();
  if (!AllZero(ops[1]->e)) {
    ev.Note("scatter with undetermined indices");
    return FilledBound(y.shape(), kInf);
  }
  const ReducerKind kind = ClassifyReducer(*instr.to_apply(), t);
  const Literal* idx = &ops[1]->v;
  // How many updates land on each element (order among them is free).
  const Literal zeros = Filled(ops[0]->v.shape(), 0);
  const Literal ones = Filled(ops[2]->v.shape(), 1);
  const Literal* count_args[] = {&zeros, idx, &ones};
  ASSIGN_OR_RETURN(Literal counts,
                   RunF64(ev, instr, count_args, HloOpcode::kAdd));
  const auto cnt = counts.data<double>();
  Literal e;
  switch (kind) {
    case ReducerKind::kAssign:
    case ReducerKind::kMax:
    case ReducerKind::kMin: {
      const Literal* args[] = {&ops[0]->e, idx, &ops[2]->e};
      const HloOpcode r = kind == ReducerKind::kAssign ? HloOpcode::kParameter
                                                       : HloOpcode::kMaximum;
      ASSIGN_OR_RETURN(e, RunF64(ev, instr, args, r));
      if (kind != ReducerKind::kAssign && IsFloat(t)) {
        // Updates combine in any order: which zero (+0, -0) a min/max
        // keeps is unspecified.
        const ZeroSigns zo = ZeroSignIndicators(*ops[0]);
        const ZeroSigns zu = ZeroSignIndicators(*ops[2]);
        if (MayMixZeroSigns(zo, zu)) {
          const Literal* pa[] = {&zo.pos, idx, &zu.pos};
          const Literal* na[] = {&zo.neg, idx, &zu.neg};
          const Literal* ma[] = {&zo.marked, idx, &zu.marked};
          ASSIGN_OR_RETURN(Literal pos, RunF64(ev, instr, pa, r));
          ASSIGN_OR_RETURN(Literal neg, RunF64(ev, instr, na, r));
          ASSIGN_OR_RETURN(Literal marked, RunF64(ev, instr, ma, r));
          MarkCombinedZeros(y, pos, neg, marked, e);
        } else {
          ClearZeroSignMarks(y, e);
        }
      }
      if (kind == ReducerKind::kAssign) {
        // Several updates of one element: which one wins is unspecified
        // unless they are all equal; be conservative.
        auto d = e.mutable_data<double>();
        bool noted = false;
        for (size_t i = 0; i < d.size(); ++i) {
          if (cnt[i] > 1) {
            d[i] = kInf;
            if (!noted) ev.Note("scatter overwrite of one element twice");
            noted = true;
          }
        }
      }
      break;
    }
    case ReducerKind::kAdd: {
      const Literal* args[] = {&ops[0]->e, idx, &ops[2]->e};
      ASSIGN_OR_RETURN(e, RunF64(ev, instr, args, HloOpcode::kAdd));
      if (IsFloat(t)) {
        const Literal ao = Abs(ops[0]->v), au = Abs(ops[2]->v);
        const Literal* abs_args[] = {&ao, idx, &au};
        ASSIGN_OR_RETURN(Literal mag,
                         RunF64(ev, instr, abs_args, HloOpcode::kAdd));
        const double ua = AccumulatorRoundoff(t), u = UnitRoundoff(t),
                     dsub = MinSubnormal(t);
        const std::vector<double> yd = AsDoubles(y);
        auto d = e.mutable_data<double>();
        const auto m = mag.data<double>();
        for (size_t i = 0; i < d.size(); ++i) {
          if (cnt[i] == 0) continue;
          d[i] += (cnt[i] + 1) * ua * m[i] + 2 * u * std::fabs(yd[i]) + dsub;
        }
      }
      break;
    }
    default: {
      // Elements no update reaches keep the operand's bound.
      e = ops[0]->e;
      bool exact = AllZero(ops[0]->e) && AllZero(ops[2]->e) && !IsFloat(t);
      auto d = e.mutable_data<double>();
      for (size_t i = 0; i < d.size(); ++i) {
        if (cnt[i] > 0 && !exact) d[i] = kInf;
      }
      if (!exact) ev.Note("scatter with an unclassified combiner");
      break;
    }
  }
  if (!IsFloat(t)) {
    for (double& d : e.mutable_data<double>()) d = d > 0 ? kInf : 0;
  }
  return e;
}

}  // namespace

StatusOr<Literal> MovementBound(BoundsEvaluator& ev,
                                const HloInstruction& instr, BoundedOps ops,
                                const Literal& y) {
  std::vector<const Literal*> args;
  const HloOpcode op = instr.opcode();
  switch (op) {
    case HloOpcode::kCopy:
      if (ops[0]->v.element_type() != y.element_type()) {
        return ElementwiseBound(ev, instr, ops, y);
      }
      return ops[0]->e;
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kReverse:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
      for (const Bounded* b : ops) args.push_back(&b->e);
      return RunF64(ev, instr, args);
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kGather: {
      if (ops.empty()) return InvalidArgument("missing operands");
      if (!IndicesExact(ops, 1)) {
        ev.Note(std::string(OpcodeName(op)) + " with undetermined indices");
        return FilledBound(y.shape(), kInf);
      }
      args.push_back(&ops[0]->e);
      for (size_t k = 1; k < ops.size(); ++k) args.push_back(&ops[k]->v);
      return RunF64(ev, instr, args);
    }
    case HloOpcode::kDynamicUpdateSlice: {
      if (ops.size() < 2) return InvalidArgument("missing operands");
      if (!IndicesExact(ops, 2)) {
        ev.Note("dynamic-update-slice with undetermined indices");
        return FilledBound(y.shape(), kInf);
      }
      args.push_back(&ops[0]->e);
      args.push_back(&ops[1]->e);
      for (size_t k = 2; k < ops.size(); ++k) args.push_back(&ops[k]->v);
      return RunF64(ev, instr, args);
    }
    case HloOpcode::kScatter:
      return ScatterBound(ev, instr, ops, y);
    default:
      return Unimplemented("no bound rule for " + std::string(OpcodeName(op)));
  }
}

}  // namespace trench::oracle::numerics
