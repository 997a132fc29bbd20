// select-and-scatter(operand, source, init) with select= and scatter=.
//
// Follows XLA's evaluator (hlo_evaluator_typed_visitor.h,
// HandleSelectAndScatter): the result starts as init everywhere. For each
// source element (row-major) the window over the operand is scanned in
// row-major order, skipping padding; the first valid element is the
// initial choice and each later element replaces it when
// select(chosen, current) is false. Then result[chosen] =
// scatter(source_value, result[chosen]) -- source first. A window with no
// valid element scatters nothing.
#include "oracle/index_util.h"
#include "oracle/kernels.h"

namespace trench::oracle {

StatusOr<Literal> EvalSelectAndScatter(const HloInstruction& instr,
                                       Operands ops, CallContext& ctx) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 3));
  const Literal& operand = *ops[0];
  const Literal& source = *ops[1];
  const Literal& init = *ops[2];
  if (instr.called_computations().size() != 2) {
    return Invalid(instr, "select-and-scatter needs select= and scatter=");
  }
  const HloComputation& select = *instr.called_computations()[0];
  const HloComputation& scatter = *instr.called_computations()[1];
  RETURN_IF_ERROR(CheckScalar(instr, init, "init value"));
  const PrimitiveType t = operand.element_type();
  if (source.element_type() != t || init.element_type() != t ||
      instr.shape().element_type() != t) {
    return Invalid(instr, "operand, source, init and result types differ");
  }
  ASSIGN_OR_RETURN(
      WindowPlan plan,
      WindowPlan::Make(instr, operand.shape().dims(), source.shape().dims()));
  RETURN_IF_ERROR(CheckResultDims(instr, operand.shape().dims()));
  Literal result(instr.shape());
  FillElements(result.mutable_bytes().data(), result.element_count(),
               init.bytes().data(), ByteWidth(t));

  Literal chosen = MakeScalar(t), current = MakeScalar(t);
  Literal src = MakeScalar(t), dst = MakeScalar(t);
  const Literal* select_args[] = {&chosen, &current};
  const Literal* scatter_args[] = {&src, &dst};
  const PrimitiveType pred[] = {PrimitiveType::PRED};
  const PrimitiveType same[] = {t};
  std::vector<Literal> returned;
  Status status;
  plan.ForEachOutput([&](int64_t si, std::span<const int64_t> offsets) {
    if (!status.ok() || offsets.empty()) return;
    int64_t best = offsets[0];
    LoadScalar(operand, best, chosen);
    for (size_t i = 1; i < offsets.size(); ++i) {
      LoadScalar(operand, offsets[i], current);
      status = CallScalars(ctx, select, select_args, pred, &returned);
      if (!status.ok()) return;
      if (!returned[0].data<bool>()[0]) {
        best = offsets[i];
        LoadScalar(operand, best, chosen);
      }
    }
    LoadScalar(source, si, src);
    LoadScalar(result, best, dst);
    status = CallScalars(ctx, scatter, scatter_args, same, &returned);
    if (!status.ok()) return;
    StoreScalar(returned[0], result, best);
  });
  RETURN_IF_ERROR(status);
  return result;
}

}  // namespace trench::oracle
