// Dispatch: which rule infers which opcode, and the checks common to all
// of them (operand count and non-null operands).
#include "compiler/ir/shape_inference.h"

#include "compiler/ir/shape_inference_internal.h"

namespace trench {
namespace {

using namespace shape_inference_internal;  // NOLINT: internal helpers.

Rule RuleFor(HloOpcode op) {
  switch (op) {
    case HloOpcode::kCompare:
      return InferCompare;
    case HloOpcode::kSelect:
      return InferSelect;
    case HloOpcode::kClamp:
      return InferClamp;
    case HloOpcode::kConvert:
      return InferConvert;
    case HloOpcode::kBitcastConvert:
      return InferBitcastConvert;
    case HloOpcode::kReducePrecision:
      return InferReducePrecision;
    case HloOpcode::kMap:
      return InferMap;
    case HloOpcode::kParameter:
      return InferParameter;
    case HloOpcode::kConstant:
      return InferConstant;
    case HloOpcode::kIota:
      return InferIota;
    case HloOpcode::kBroadcast:
      return InferBroadcast;
    case HloOpcode::kReshape:
      return InferReshape;
    case HloOpcode::kBitcast:
      return InferBitcast;
    case HloOpcode::kTranspose:
      return InferTranspose;
    case HloOpcode::kSlice:
      return InferSlice;
    case HloOpcode::kConcatenate:
      return InferConcatenate;
    case HloOpcode::kPad:
      return InferPad;
    case HloOpcode::kReverse:
      return InferReverse;
    case HloOpcode::kGetDimensionSize:
      return InferGetDimensionSize;
    case HloOpcode::kSetDimensionSize:
      return InferSetDimensionSize;
    case HloOpcode::kTuple:
      return InferTuple;
    case HloOpcode::kGetTupleElement:
      return InferGetTupleElement;
    case HloOpcode::kCall:
    case HloOpcode::kFusion:
      return InferCall;
    case HloOpcode::kWhile:
      return InferWhile;
    case HloOpcode::kConditional:
      return InferConditional;
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
      return InferIdentity;
    case HloOpcode::kCopyStart:
      return InferCopyStart;
    case HloOpcode::kCopyDone:
      return InferCopyDone;
    case HloOpcode::kDynamicReshape:
      return InferDynamicReshape;
    case HloOpcode::kStochasticConvert:
      return InferStochasticConvert;
    case HloOpcode::kCholesky:
      return InferCholesky;
    case HloOpcode::kAddDependency:
      return InferAddDependency;
    case HloOpcode::kAfterAll:
      return InferAfterAll;
    case HloOpcode::kDynamicSlice:
      return InferDynamicSlice;
    case HloOpcode::kDynamicUpdateSlice:
      return InferDynamicUpdateSlice;
    case HloOpcode::kGather:
      return InferGather;
    case HloOpcode::kScatter:
      return InferScatter;
    case HloOpcode::kReduce:
      return InferReduce;
    case HloOpcode::kReduceWindow:
      return InferReduceWindow;
    case HloOpcode::kSelectAndScatter:
      return InferSelectAndScatter;
    case HloOpcode::kSort:
      return InferSort;
    case HloOpcode::kDot:
      return InferDot;
    case HloOpcode::kConvolution:
      return InferConvolution;
    case HloOpcode::kAllReduce:
      return InferAllReduce;
    case HloOpcode::kAllToAll:
      return InferAllToAll;
    default:
      break;
  }
  // The remaining elementwise ops of the registry (opcode.def) share the
  // plain rules; the ones with rules of their own are matched above.
  if (IsElementwiseUnary(op)) return InferUnary;
  if (IsElementwiseBinary(op)) return InferBinary;
  return nullptr;
}

}  // namespace

bool HasShapeInferenceRule(HloOpcode op) { return RuleFor(op) != nullptr; }

StatusOr<Shape> InferShape(const HloInstruction& instr) {
  const Rule rule = RuleFor(instr.opcode());
  if (rule == nullptr) {
    return Unimplemented("%" + instr.name() + ": no shape inference rule for " +
                         std::string(OpcodeName(instr.opcode())));
  }
  const int arity = OpcodeArity(instr.opcode());
  if (arity != kVariadic && instr.operand_count() != arity) {
    return Err(instr, "expects " + std::to_string(arity) + " operand(s), has " +
                          std::to_string(instr.operand_count()));
  }
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    if (instr.operand(i) == nullptr) {
      return Err(instr, "operand " + std::to_string(i) + " is null");
    }
  }
  ASSIGN_OR_RETURN(Shape shape, rule(instr));
  return NoLayout(std::move(shape));
}

}  // namespace trench
