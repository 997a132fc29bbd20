// Shape rules of tuples, calls and control flow: tuple, get-tuple-element,
// call/fusion, while, conditional, opt-barrier and the token ops.
#include "compiler/ir/shape_inference_internal.h"

namespace trench::shape_inference_internal {
namespace {

std::string Num(int64_t v) { return std::to_string(v); }

// Checks that `sig` takes exactly the shapes `args` (layouts ignored).
Status CheckParams(const HloInstruction& instr, const Signature& sig,
                   const std::string& role, const std::vector<Shape>& args) {
  if (sig.params.size() != args.size()) {
    return Err(instr, role + " computation %" + sig.name + " takes " +
                          Num(sig.params.size()) + " parameter(s), given " +
                          Num(args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!sig.params[i]->Compatible(args[i])) {
      return Err(instr, role + " computation %" + sig.name + " parameter " +
                            Num(i) + " has shape " + Str(*sig.params[i]) +
                            ", given " + Str(args[i]));
    }
  }
  return Status::Ok();
}

std::vector<Shape> OperandShapes(const HloInstruction& instr, int64_t from,
                                 int64_t to) {
  std::vector<Shape> shapes;
  for (int64_t i = from; i < to; ++i) shapes.push_back(OperandShape(instr, i));
  return shapes;
}

}  // namespace

StatusOr<Shape> InferTuple(const HloInstruction& instr) {
  return NoLayout(Shape::Tuple(OperandShapes(instr, 0, instr.operand_count())));
}

StatusOr<Shape> InferGetTupleElement(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  if (!operand.IsTuple()) {
    return Err(instr, "operand must be a tuple, got " + Str(operand));
  }
  const int64_t index = instr.tuple_index();
  if (index < 0 || index >= operand.tuple_size()) {
    return Err(instr,
               "index " + Num(index) + " is out of range for " + Str(operand));
  }
  return NoLayout(operand.tuple_shape(index));
}

StatusOr<Shape> InferCall(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectCalledCount(instr, 1));
  const std::string role =
      instr.opcode() == HloOpcode::kFusion ? "fused" : "called";
  ASSIGN_OR_RETURN(Signature sig, CalleeSignature(instr, 0, role));
  RETURN_IF_ERROR(CheckParams(instr, sig, role,
                              OperandShapes(instr, 0, instr.operand_count())));
  return NoLayout(*sig.result);
}

StatusOr<Shape> InferWhile(const HloInstruction& instr) {
  RETURN_IF_ERROR(ExpectCalledCount(instr, 2));
  const Shape& state = OperandShape(instr, 0);
  ASSIGN_OR_RETURN(Signature cond, CalleeSignature(instr, 0, "condition"));
  ASSIGN_OR_RETURN(Signature body, CalleeSignature(instr, 1, "body"));
  RETURN_IF_ERROR(CheckParams(instr, cond, "condition", {state}));
  RETURN_IF_ERROR(CheckParams(instr, body, "body", {state}));
  if (!cond.result->Compatible(Shape(PrimitiveType::PRED, {}))) {
    return Err(instr, "condition computation %" + cond.name +
                          " must return pred[], returns " + Str(*cond.result));
  }
  if (!body.result->Compatible(state)) {
    return Err(instr, "body computation %" + body.name + " returns " +
                          Str(*body.result) + ", expected the loop state " +
                          Str(state));
  }
  return NoLayout(state);
}

StatusOr<Shape> InferConditional(const HloInstruction& instr) {
  const int64_t branches = instr.called_computations().size();
  if (instr.operand_count() < 1) return Err(instr, "has no branch index");
  const Shape& index = OperandShape(instr, 0);
  const bool is_pred = index.IsArray() && index.rank() == 0 &&
                       index.element_type() == PrimitiveType::PRED;
  const bool is_s32 = index.IsArray() && index.rank() == 0 &&
                      index.element_type() == PrimitiveType::S32;
  if (!is_pred && !is_s32) {
    return Err(instr,
               "branch index must be pred[] or s32[], got " + Str(index));
  }
  if (is_pred && branches != 2) {
    return Err(instr,
               "with a pred[] index needs 2 branches, has " + Num(branches));
  }
  if (branches < 1) return Err(instr, "has no branches");
  if (instr.operand_count() != branches + 1) {
    return Err(instr, "has " + Num(branches) + " branches but " +
                          Num(instr.operand_count() - 1) + " branch operands");
  }
  Shape result;
  for (int64_t b = 0; b < branches; ++b) {
    const std::string role = "branch " + Num(b);
    ASSIGN_OR_RETURN(Signature sig, CalleeSignature(instr, b, role));
    RETURN_IF_ERROR(
        CheckParams(instr, sig, role, {OperandShape(instr, b + 1)}));
    if (b == 0) {
      result = NoLayout(*sig.result);
    } else if (!sig.result->Compatible(result)) {
      return Err(instr, "branch " + Num(b) + " returns " + Str(*sig.result) +
                            " but branch 0 returns " + Str(result));
    }
  }
  return result;
}

StatusOr<Shape> InferIdentity(const HloInstruction& instr) {
  return NoLayout(OperandShape(instr, 0));
}

// (destination, source, context): XLA's asynchronous copy.
StatusOr<Shape> InferCopyStart(const HloInstruction& instr) {
  const Shape operand = NoLayout(OperandShape(instr, 0));
  return Shape::Tuple({operand, operand, Shape(PrimitiveType::U32, {})});
}

StatusOr<Shape> InferCopyDone(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  if (!operand.IsTuple() || operand.tuple_size() != 3) {
    return Err(instr,
               "operand must be a copy-start tuple, got " + Str(operand));
  }
  return NoLayout(operand.tuple_shape(0));
}

StatusOr<Shape> InferAddDependency(const HloInstruction& instr) {
  if (!OperandShape(instr, 1).IsToken()) {
    return Err(instr,
               "operand 1 must be a token, got " + Str(OperandShape(instr, 1)));
  }
  return NoLayout(OperandShape(instr, 0));
}

// Operands of any shape only order the token after them: XLA's verifier
// checks the result alone, and its own tests join on arrays.
StatusOr<Shape> InferAfterAll(const HloInstruction& instr) {
  return Shape::Token();
}

}  // namespace trench::shape_inference_internal
