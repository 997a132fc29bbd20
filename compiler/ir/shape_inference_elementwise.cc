// Shape rules of elementwise ops: unary and binary arithmetic, bitwise and
// transcendental ops, compare, select, clamp, the conversions and map.
#include "compiler/ir/shape_inference_internal.h"

namespace trench::shape_inference_internal {
namespace {

bool IsFloatOrComplex(PrimitiveType t) { return IsFloat(t) || IsComplex(t); }
bool IsIntOrPred(PrimitiveType t) {
  return IsInteger(t) || t == PrimitiveType::PRED;
}

// The real component type of a complex type (f32 for c64).
PrimitiveType RealPartType(PrimitiveType t) {
  if (t == PrimitiveType::C64) return PrimitiveType::F32;
  if (t == PrimitiveType::C128) return PrimitiveType::F64;
  return t;
}

Status ExpectTypeClass(const HloInstruction& instr, PrimitiveType t, bool ok,
                       const std::string& expected) {
  if (ok) return Status::Ok();
  return Err(instr, "expects " + expected + " operands, got " + TypeStr(t));
}

// Result of a unary op on type `t`, or an error when the op rejects `t`.
StatusOr<PrimitiveType> UnaryResultType(const HloInstruction& instr,
                                        PrimitiveType t) {
  switch (instr.opcode()) {
    case HloOpcode::kFloor:
    case HloOpcode::kCeil:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
    case HloOpcode::kErf:
      RETURN_IF_ERROR(ExpectTypeClass(instr, t, IsFloat(t), "floating-point"));
      return t;
    case HloOpcode::kIsFinite:
      RETURN_IF_ERROR(ExpectTypeClass(instr, t, IsFloat(t), "floating-point"));
      return PrimitiveType::PRED;
    case HloOpcode::kAcos:
    case HloOpcode::kAcosh:
    case HloOpcode::kAsin:
    case HloOpcode::kAsinh:
    case HloOpcode::kAtanh:
    case HloOpcode::kCbrt:
    case HloOpcode::kCos:
    case HloOpcode::kCosh:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSin:
    case HloOpcode::kSinh:
    case HloOpcode::kSqrt:
    case HloOpcode::kTan:
    case HloOpcode::kTanh:
      RETURN_IF_ERROR(ExpectTypeClass(instr, t, IsFloatOrComplex(t),
                                      "floating-point or complex"));
      return t;
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      RETURN_IF_ERROR(ExpectTypeClass(instr, t, IsFloatOrComplex(t),
                                      "floating-point or complex"));
      return RealPartType(t);
    case HloOpcode::kAbs:
      RETURN_IF_ERROR(
          ExpectTypeClass(instr, t, IsSigned(t) || IsFloatOrComplex(t),
                          "signed integer, floating-point or complex"));
      return RealPartType(t);
    case HloOpcode::kNegate:
      RETURN_IF_ERROR(ExpectTypeClass(instr, t, t != PrimitiveType::PRED,
                                      "numeric (non-pred)"));
      return t;
    case HloOpcode::kSign:
      RETURN_IF_ERROR(
          ExpectTypeClass(instr, t, IsSigned(t) || IsFloatOrComplex(t),
                          "signed integer, floating-point or complex"));
      return t;
    case HloOpcode::kNot:
      RETURN_IF_ERROR(
          ExpectTypeClass(instr, t, IsIntOrPred(t), "integer or pred"));
      return t;
    case HloOpcode::kClz:
    case HloOpcode::kPopulationCount:
      RETURN_IF_ERROR(ExpectTypeClass(instr, t, IsInteger(t), "integer"));
      return t;
    default:
      return Err(instr, "is not a unary elementwise op");
  }
}

// Result element type of a binary op on operands of type `t`.
StatusOr<PrimitiveType> BinaryResultType(const HloInstruction& instr,
                                         PrimitiveType t) {
  switch (instr.opcode()) {
    case HloOpcode::kAdd:  // On pred: XLA allows add/multiply (or/and).
    case HloOpcode::kMultiply:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
      return t;
    case HloOpcode::kSubtract:
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder:
    case HloOpcode::kPower:
      RETURN_IF_ERROR(ExpectTypeClass(instr, t, t != PrimitiveType::PRED,
                                      "numeric (non-pred)"));
      return t;
    case HloOpcode::kAtan2:
      RETURN_IF_ERROR(ExpectTypeClass(instr, t, IsFloatOrComplex(t),
                                      "floating-point or complex"));
      return t;
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      RETURN_IF_ERROR(
          ExpectTypeClass(instr, t, IsIntOrPred(t), "integer or pred"));
      return t;
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
      RETURN_IF_ERROR(ExpectTypeClass(instr, t, IsInteger(t), "integer"));
      return t;
    case HloOpcode::kComplex:
      if (t == PrimitiveType::F32) return PrimitiveType::C64;
      if (t == PrimitiveType::F64) return PrimitiveType::C128;
      return Err(instr, "expects f32 or f64 operands, got " + TypeStr(t));
    default:
      return Err(instr, "is not a binary elementwise op");
  }
}

// Checks that operands a and b are arrays of equal element type and dims;
// returns a's shape with the dynamic flags of both merged.
StatusOr<Shape> SameShapeOperands(const HloInstruction& instr, int64_t a,
                                  int64_t b) {
  const Shape& sa = OperandShape(instr, a);
  const Shape& sb = OperandShape(instr, b);
  RETURN_IF_ERROR(ExpectArray(instr, sa, "operand " + std::to_string(a)));
  RETURN_IF_ERROR(ExpectArray(instr, sb, "operand " + std::to_string(b)));
  if (sa.element_type() != sb.element_type() || sa.dims() != sb.dims()) {
    return Err(instr,
               "operands have different shapes " + Str(sa) + " and " + Str(sb));
  }
  Shape out = NoLayout(sa);
  for (int64_t i = 0; i < sb.rank(); ++i) {
    if (sb.is_dynamic_dim(i)) out.set_dynamic_dim(i, true);
  }
  return out;
}

}  // namespace

StatusOr<Shape> InferUnary(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  if (instr.opcode() == HloOpcode::kCopy) return NoLayout(operand);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  ASSIGN_OR_RETURN(PrimitiveType t,
                   UnaryResultType(instr, operand.element_type()));
  return WithType(operand, t);
}

StatusOr<Shape> InferBinary(const HloInstruction& instr) {
  ASSIGN_OR_RETURN(Shape shape, SameShapeOperands(instr, 0, 1));
  ASSIGN_OR_RETURN(PrimitiveType t,
                   BinaryResultType(instr, shape.element_type()));
  shape.set_element_type(t);
  return shape;
}

StatusOr<Shape> InferCompare(const HloInstruction& instr) {
  ASSIGN_OR_RETURN(Shape shape, SameShapeOperands(instr, 0, 1));
  const PrimitiveType t = shape.element_type();
  const ComparisonType ct = instr.attrs().comparison_type;
  const bool ok =
      ct == ComparisonType::kUnset ||
      ((ct == ComparisonType::kFloat || ct == ComparisonType::kTotalOrder) &&
       IsFloatOrComplex(t)) ||
      (ct == ComparisonType::kSigned && IsSigned(t)) ||
      (ct == ComparisonType::kUnsigned &&
       (IsUnsigned(t) || t == PrimitiveType::PRED));
  if (!ok) {
    return Err(instr, "comparison type " + std::string(ComparisonTypeName(ct)) +
                          " does not apply to " + TypeStr(t) + " operands");
  }
  shape.set_element_type(PrimitiveType::PRED);
  return shape;
}

StatusOr<Shape> InferSelect(const HloInstruction& instr) {
  const Shape& pred = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, pred, "predicate"));
  if (pred.element_type() != PrimitiveType::PRED) {
    return Err(instr, "predicate must be pred, got " + Str(pred));
  }
  ASSIGN_OR_RETURN(Shape shape, SameShapeOperands(instr, 1, 2));
  if (pred.dims() != shape.dims()) {
    return Err(instr, "predicate " + Str(pred) +
                          " does not have the dimensions of " + Str(shape));
  }
  return shape;
}

StatusOr<Shape> InferClamp(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 1);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  for (int64_t i : {0, 2}) {
    const Shape& bound = OperandShape(instr, i);
    const std::string what = i == 0 ? "min" : "max";
    RETURN_IF_ERROR(ExpectArray(instr, bound, what));
    if (bound.element_type() != operand.element_type() ||
        (bound.rank() != 0 && bound.dims() != operand.dims())) {
      return Err(instr, what + " " + Str(bound) +
                            " must be a scalar or have the shape of operand " +
                            Str(operand));
    }
  }
  return NoLayout(operand);
}

StatusOr<Shape> InferConvert(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  const PrimitiveType to = instr.shape().element_type();
  if (!IsArrayType(to)) {
    return Err(instr,
               "result must be an array, declared " + Str(instr.shape()));
  }
  return WithType(operand, to);
}

StatusOr<Shape> InferBitcastConvert(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  const PrimitiveType from = operand.element_type();
  const PrimitiveType to = instr.shape().element_type();
  if (!IsArrayType(to)) {
    return Err(instr,
               "result must be an array, declared " + Str(instr.shape()));
  }
  if (IsComplex(from) != IsComplex(to)) {
    return Err(instr, "cannot bitcast between complex and real types " +
                          TypeStr(from) + " and " + TypeStr(to));
  }
  const int in_bits = BitWidth(from), out_bits = BitWidth(to);
  Shape out = WithType(operand, to);
  if (in_bits == out_bits) return out;
  if (in_bits > out_bits) {  // One element becomes a minor dim of several.
    if (in_bits % out_bits != 0) {
      return Err(instr, "bit widths " + std::to_string(in_bits) + " and " +
                            std::to_string(out_bits) + " are not multiples");
    }
    std::vector<int64_t> dims = operand.dims();
    dims.push_back(in_bits / out_bits);
    Shape widened(to, dims);
    for (int64_t i = 0; i < operand.rank(); ++i) {
      widened.set_dynamic_dim(i, operand.is_dynamic_dim(i));
    }
    return widened;
  }
  if (out_bits % in_bits != 0 || operand.rank() == 0 ||
      operand.dims().back() != out_bits / in_bits) {
    return Err(instr, "from " + Str(operand) + " to " + TypeStr(to) +
                          " needs a minor dimension of size " +
                          std::to_string(out_bits / in_bits));
  }
  std::vector<int64_t> dims = operand.dims();
  dims.pop_back();
  Shape narrowed(to, dims);
  for (int64_t i = 0; i + 1 < operand.rank(); ++i) {
    narrowed.set_dynamic_dim(i, operand.is_dynamic_dim(i));
  }
  return narrowed;
}

StatusOr<Shape> InferReducePrecision(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  if (!IsFloat(operand.element_type())) {
    return Err(instr, "expects a floating-point operand, got " + Str(operand));
  }
  if (instr.attrs().exponent_bits < 1) {
    return Err(instr, "needs exponent_bits >= 1, got " +
                          std::to_string(instr.attrs().exponent_bits));
  }
  if (instr.attrs().mantissa_bits < 0) {
    return Err(instr, "needs mantissa_bits >= 0, got " +
                          std::to_string(instr.attrs().mantissa_bits));
  }
  return NoLayout(operand);
}

StatusOr<Shape> InferMap(const HloInstruction& instr) {
  if (instr.operand_count() == 0) return Err(instr, "has no operands");
  const Shape& first = OperandShape(instr, 0);
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    const Shape& s = OperandShape(instr, i);
    RETURN_IF_ERROR(ExpectArray(instr, s, "operand " + std::to_string(i)));
    if (s.dims() != first.dims()) {
      return Err(instr, "operands have different dimensions " + Str(first) +
                            " and " + Str(s));
    }
    types.push_back(s.element_type());
  }
  const auto& dims = instr.attrs().dimensions;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims.size() != static_cast<size_t>(first.rank()) ||
        dims[i] != static_cast<int64_t>(i)) {
      return Err(instr, "dimensions " + Str(dims) +
                            " must list every operand dimension in order");
    }
  }
  RETURN_IF_ERROR(ExpectCalledCount(instr, 1));
  ASSIGN_OR_RETURN(Signature sig, CalleeSignature(instr, 0, "to_apply"));
  bool ok = sig.params.size() == types.size() && sig.result->IsArray() &&
            sig.result->rank() == 0;
  for (size_t i = 0; ok && i < types.size(); ++i) {
    ok = sig.params[i]->IsArray() && sig.params[i]->rank() == 0 &&
         sig.params[i]->element_type() == types[i];
  }
  if (!ok) {
    return Err(instr, "to_apply computation %" + sig.name +
                          " must take one scalar per operand, of the "
                          "operand's type, and return a scalar");
  }
  return WithType(first, sig.result->element_type());
}

StatusOr<Shape> InferStochasticConvert(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  const Shape& random = OperandShape(instr, 1);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectArray(instr, random, "random bits"));
  const PrimitiveType to = instr.shape().element_type();
  if (!IsArrayType(to)) {
    return Err(instr,
               "result must be an array, declared " + Str(instr.shape()));
  }
  if (!IsFloat(operand.element_type()) || !IsUnsigned(random.element_type()) ||
      BitWidth(operand.element_type()) != BitWidth(random.element_type()) ||
      operand.dims() != random.dims()) {
    return Err(instr,
               "needs a floating-point operand and unsigned random "
               "bits of its width and dimensions, got " +
                   Str(operand) + " and " + Str(random));
  }
  return WithType(operand, to);
}

}  // namespace trench::shape_inference_internal
