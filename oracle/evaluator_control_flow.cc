// while, conditional and map: the ops that run called computations a
// data-dependent number of times.
#include <cstring>
#include <string>
#include <vector>

#include "oracle/elementwise.h"
#include "oracle/evaluator_internal.h"

namespace trench::oracle {
namespace {

// The scalar bool or integer value of a predicate/index literal.
StatusOr<int64_t> ScalarIndex(const Literal& v, const std::string& what) {
  if (!v.shape().IsArray() || v.shape().rank() != 0 ||
      !(v.element_type() == PrimitiveType::PRED ||
        IsInteger(v.element_type()))) {
    return InvalidArgument(what + " must be a pred or integer scalar, got " +
                           v.shape().ToString(false));
  }
  if (v.element_type() == PrimitiveType::PRED) {
    return int64_t{v.bytes()[0] != 0};
  }
  return v.GetAsInt64(0);
}

}  // namespace

StatusOr<Literal> Evaluator::EvalWhile(const HloInstruction& instr,
                                       OperandValues& ops) {
  if (ops.size() != 1 || instr.called_computations().size() != 2) {
    return InvalidArgument("while needs one operand, a condition and a body");
  }
  const HloComputation& cond = *instr.while_condition();
  const HloComputation& body = *instr.while_body();
  Literal state = ops.Take(0);
  for (int64_t iterations = 0;; ++iterations) {
    const Literal* arg = &state;
    ASSIGN_OR_RETURN(Literal keep_going, Call(cond, {&arg, 1}));
    if (keep_going.element_type() != PrimitiveType::PRED) {
      return InvalidArgument("while condition " + cond.name() +
                             " must return pred, got " +
                             keep_going.shape().ToString(false));
    }
    ASSIGN_OR_RETURN(int64_t go, ScalarIndex(keep_going, "while condition"));
    if (!go) return state;
    if (iterations >= options_.max_while_iterations) {
      return ResourceExhausted(
          "while loop did not finish within max_while_iterations=" +
          std::to_string(options_.max_while_iterations) + " iterations");
    }
    ASSIGN_OR_RETURN(state, Call(body, {&arg, 1}));
  }
}

StatusOr<Literal> Evaluator::EvalConditional(const HloInstruction& instr,
                                             OperandValues& ops) {
  const auto& branches = instr.called_computations();
  const int64_t n = branches.size();
  if (n == 0 || ops.size() != n + 1) {
    return InvalidArgument("conditional with " + std::to_string(n) +
                           " branches needs " + std::to_string(n + 1) +
                           " operands, got " + std::to_string(ops.size()));
  }
  ASSIGN_OR_RETURN(int64_t selector,
                   ScalarIndex(ops[0], "conditional selector"));
  int64_t branch;
  if (ops[0].element_type() == PrimitiveType::PRED) {
    if (n != 2) {
      return InvalidArgument("conditional on a pred needs 2 branches, has " +
                             std::to_string(n));
    }
    branch = selector ? 0 : 1;  // {true_computation, false_computation}.
  } else {
    // operation_semantics.md (Conditional): an index outside [0, N)
    // executes branch N-1 as the default.
    branch = (selector < 0 || selector >= n) ? n - 1 : selector;
  }
  const Literal* arg = &ops[branch + 1];
  return Call(*branches[branch], {&arg, 1});
}

bool Evaluator::HasTapIn(const HloComputation& computation) const {
  if (taps_ == nullptr) return false;
  for (const HloInstruction* i : computation.instructions()) {
    if (taps_->names.count(i->name())) return true;
  }
  return false;
}

StatusOr<Literal> Evaluator::EvalMapFast(const HloInstruction& instr,
                                         const HloComputation& fn,
                                         OperandValues& ops, bool* used) {
  *used = false;
  const HloInstruction* root = fn.root_instruction();
  if (root == nullptr || !IsElementwise(root->opcode()) ||
      fn.instruction_count() != fn.num_parameters() + 1 || HasTapIn(fn) ||
      root->shape().rank() != 0 ||
      root->shape().element_type() != instr.shape().element_type()) {
    return Literal();
  }
  std::vector<const Literal*> args;
  for (const HloInstruction* op : root->operands()) {
    if (op->opcode() != HloOpcode::kParameter || op->parameter_number() < 0 ||
        op->parameter_number() >= ops.size()) {
      return Literal();
    }
    args.push_back(&ops[op->parameter_number()]);
  }
  *used = true;
  // The root's opcode and attributes, applied to whole arrays.
  return EvalElementwiseInto(*root, instr.shape(), args, nullptr, threads_);
}

StatusOr<Literal> Evaluator::EvalMap(const HloInstruction& instr,
                                     OperandValues& ops) {
  if (instr.called_computations().empty() || !instr.shape().IsArray()) {
    return InvalidArgument("map needs to_apply and an array result");
  }
  const HloComputation& fn = *instr.to_apply();
  if (fn.num_parameters() != ops.size()) {
    return InvalidArgument("map applies " + fn.name() + " with " +
                           std::to_string(fn.num_parameters()) +
                           " parameters to " + std::to_string(ops.size()) +
                           " operands");
  }
  for (int64_t k = 0; k < ops.size(); ++k) {
    if (!ops[k].shape().IsArray() ||
        ops[k].shape().dims() != instr.shape().dims()) {
      return InvalidArgument("map operand " + std::to_string(k) +
                             " has shape " + ops[k].shape().ToString(false) +
                             ", result is " + instr.shape().ToString(false));
    }
  }
  bool used = false;
  StatusOr<Literal> fast = EvalMapFast(instr, fn, ops, &used);
  if (used) return fast;
  // General path: one call per element on rank-0 literals, reused across
  // elements (only their bytes change).
  std::vector<Literal> scalars;
  std::vector<const Literal*> args;
  for (int64_t k = 0; k < ops.size(); ++k) {
    scalars.emplace_back(Shape(ops[k].element_type(), {}));
  }
  for (const Literal& s : scalars) args.push_back(&s);
  Literal out(instr.shape());
  const int64_t out_width = ByteWidth(out.element_type());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    for (int64_t k = 0; k < ops.size(); ++k) {
      const int64_t w = ByteWidth(ops[k].element_type());
      std::memcpy(scalars[k].mutable_bytes().data(),
                  ops[k].bytes().data() + i * w, w);
    }
    ASSIGN_OR_RETURN(Literal r, Call(fn, args));
    if (!r.shape().IsArray() || r.element_count() != 1 ||
        r.element_type() != out.element_type()) {
      return InvalidArgument(
          "map computation " + fn.name() + " returned " +
          r.shape().ToString(false) + ", expected " +
          std::string(PrimitiveTypeName(out.element_type())) + "[]");
    }
    std::memcpy(out.mutable_bytes().data() + i * out_width, r.bytes().data(),
                out_width);
  }
  return out;
}

}  // namespace trench::oracle
