// The elementwise dispatcher: checks operands, picks (or reuses) the output
// buffer and routes each opcode to its kernel family.
#include "oracle/elementwise.h"

#include <cstring>
#include <string>
#include <vector>

namespace trench::oracle {
namespace {

std::string TypeName(PrimitiveType t) {
  return std::string(PrimitiveTypeName(t));
}

int ExpectedArity(HloOpcode op) {
  if (IsElementwiseUnary(op)) return 1;
  if (IsElementwiseBinary(op)) return 2;
  return 3;  // select, clamp
}

// Operand i may be rank 0 while the result is not: select's predicate and
// clamp's bounds.
bool MayBeScalar(HloOpcode op, size_t i) {
  return (op == HloOpcode::kSelect && i == 0) ||
         (op == HloOpcode::kClamp && i != 1);
}

// Ops whose operands all have the result's element type.
bool SameTypeOp(HloOpcode op) {
  switch (op) {
    case HloOpcode::kCompare:
    case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kIsFinite:
    case HloOpcode::kReal:
    case HloOpcode::kImag:
    case HloOpcode::kComplex:
    case HloOpcode::kSelect:
    case HloOpcode::kClamp:
    case HloOpcode::kAbs:
      return false;
    default:
      return true;
  }
}

Status CheckOperands(HloOpcode op, const Shape& out_shape, Operands ops) {
  // Messages are built only on error (this runs per element for scalar
  // computations).
  auto name = [op] { return std::string(OpcodeName(op)); };
  if (static_cast<int>(ops.size()) != ExpectedArity(op)) {
    return InvalidArgument(name() + " expects " +
                           std::to_string(ExpectedArity(op)) +
                           " operands, got " + std::to_string(ops.size()));
  }
  if (!out_shape.IsArray()) {
    return InvalidArgument(name() + " must produce an array, not " +
                           out_shape.ToString(false));
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const Shape& s = ops[i]->shape();
    if (!s.IsArray()) {
      return InvalidArgument(name() + " operand " + std::to_string(i) +
                             " is not an array: " + s.ToString(false));
    }
    const bool dims_ok =
        s.dims() == out_shape.dims() || (MayBeScalar(op, i) && s.rank() == 0);
    if (!dims_ok && op != HloOpcode::kBitcastConvert) {
      return InvalidArgument(name() + " operand " + std::to_string(i) +
                             " has shape " + s.ToString(false) +
                             ", result is " + out_shape.ToString(false));
    }
    if (SameTypeOp(op) && s.element_type() != out_shape.element_type()) {
      return InvalidArgument(name() + " operand " + std::to_string(i) +
                             " has type " + TypeName(s.element_type()) +
                             ", result is " +
                             TypeName(out_shape.element_type()));
    }
  }
  const PrimitiveType in = ops[0]->element_type();
  const PrimitiveType out = out_shape.element_type();
  if ((op == HloOpcode::kCompare || op == HloOpcode::kIsFinite) &&
      out != PrimitiveType::PRED) {
    return InvalidArgument(name() + " must produce pred, not " + TypeName(out));
  }
  if (op == HloOpcode::kReal || op == HloOpcode::kImag) {
    const PrimitiveType part = in == PrimitiveType::C64    ? PrimitiveType::F32
                               : in == PrimitiveType::C128 ? PrimitiveType::F64
                                                           : in;
    if (out != part) {
      return InvalidArgument(name() + " of " + TypeName(in) +
                             " cannot produce " + TypeName(out));
    }
  }
  if (op == HloOpcode::kAbs && in != out &&
      !(in == PrimitiveType::C64 && out == PrimitiveType::F32) &&
      !(in == PrimitiveType::C128 && out == PrimitiveType::F64)) {
    return InvalidArgument("abs of " + TypeName(in) + " cannot produce " +
                           TypeName(out));
  }
  return Status::Ok();
}

Status Dispatch(const HloInstruction& instr, Operands ops, Literal* out,
                int threads) {
  const HloOpcode op = instr.opcode();
  const Literal& x = *ops[0];
  const HloAttributes& attrs = instr.attrs();
  switch (op) {
    case HloOpcode::kCopy:
      if (x.bytes().data() != out->mutable_bytes().data()) {
        std::memmove(out->mutable_bytes().data(), x.bytes().data(),
                     x.bytes().size());
      }
      return Status::Ok();
    case HloOpcode::kConvert:
      return ConvertOp(x, out, threads);
    case HloOpcode::kBitcastConvert:
      return BitcastConvertOp(x, out);
    case HloOpcode::kReducePrecision:
      return ReducePrecisionOp(x, attrs.exponent_bits, attrs.mantissa_bits, out,
                               threads);
    case HloOpcode::kCompare:
      return CompareOp(attrs.comparison_direction, attrs.comparison_type, x,
                       *ops[1], out, threads);
    case HloOpcode::kSelect:
      return SelectOp(x, *ops[1], *ops[2], out, threads);
    case HloOpcode::kClamp:
      return ClampOp(x, *ops[1], *ops[2], out, threads);
    case HloOpcode::kReal:
    case HloOpcode::kImag:
    case HloOpcode::kComplex:
      return ComplexOp(op, ops, out, threads);
    default:
      break;
  }
  if (IsComplex(x.element_type())) return ComplexOp(op, ops, out, threads);
  if (IsElementwiseUnary(op)) {
    return IsFloat(x.element_type()) ? UnaryFloat(op, x, out, threads)
                                     : UnaryInt(op, x, out, threads);
  }
  return BinaryOp(op, x, *ops[1], out, threads);
}

}  // namespace

StatusOr<Literal> EvalElementwiseInto(const HloInstruction& instr,
                                      const Shape& out_shape, Operands ops,
                                      Literal* reuse, int threads) {
  // The context string is built only on error: this runs per element for
  // scalar computations called by reduce, sort, map, ...
  auto context = [&] { return "%" + instr.name(); };
  if (!IsElementwise(instr.opcode())) {
    return Internal(context() + ": " + std::string(OpcodeName(instr.opcode())) +
                    " is not elementwise");
  }
  Status s = CheckOperands(instr.opcode(), out_shape, ops);
  if (!s.ok()) return s.WithContext(context());
  const bool reusing = reuse != nullptr && reuse->shape().Compatible(out_shape);
  // Every elementwise kernel writes each output element: no zeroing needed.
  Literal out =
      reusing ? std::move(*reuse) : Literal::CreateUninitialized(out_shape);
  std::vector<const Literal*> args(ops.begin(), ops.end());
  if (reusing) {
    out.set_layout(out_shape.layout());
    for (const Literal*& a : args) {
      if (a == reuse) a = &out;
    }
  }
  s = Dispatch(instr, args, &out, threads);
  if (!s.ok()) return s.WithContext(context());
  return out;
}

StatusOr<Literal> EvalElementwise(const HloInstruction& instr, Operands ops) {
  return EvalElementwiseInto(instr, instr.shape(), ops, nullptr, 1);
}

}  // namespace trench::oracle
