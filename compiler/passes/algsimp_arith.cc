// Algebraic identities on elementwise ops, select, compare and convert.
// Each rewrite is exact for every input, NaN, infinities and signed zeros
// included:
//   x + (-0.0) = x for floats (x + (+0.0) turns -0 into +0, so it stays);
//   x - (+0.0) = x; x * 1 = x; x / 1 = x (floats and integers);
//   x * 0 = 0 only for integers (for floats NaN*0 and Inf*0 are NaN).
#include "compiler/passes/algsimp_internal.h"

namespace trench::algsimp {
namespace {

using Op = HloOpcode;

bool IsIntegral(PrimitiveType t) { return IsInteger(t); }
bool IsArithmetic(PrimitiveType t) { return IsInteger(t) || IsFloat(t); }

// Replaces `instr` by `repl` at `site` when the shapes allow it.
StatusOr<bool> Use(HloInstruction* instr, HloInstruction* repl,
                   std::string_view site, Env* env) {
  if (!CanReplace(instr, repl) || !env->Should(site, instr)) return false;
  RETURN_IF_ERROR(ReplaceWith(instr, repl));
  return true;
}

// The zero of an additive identity for `type`: -0.0 for floats, 0 else.
StatusOr<bool> SimplifyAdd(HloInstruction* instr, Env* env) {
  const PrimitiveType t = instr->shape().element_type();
  if (!IsArithmetic(t)) return false;
  const double zero = IsFloat(t) ? -0.0 : 0.0;
  if (IsUniform(instr->operand(1), zero)) {
    return Use(instr, instr->operand(0), "add-zero", env);
  }
  if (IsUniform(instr->operand(0), zero)) {
    return Use(instr, instr->operand(1), "add-zero", env);
  }
  return false;
}

StatusOr<bool> SimplifySubtract(HloInstruction* instr, Env* env) {
  const PrimitiveType t = instr->shape().element_type();
  if (!IsArithmetic(t)) return false;
  if (IsUniform(instr->operand(1), 0.0)) {
    return Use(instr, instr->operand(0), "sub-zero", env);
  }
  if (IsIntegral(t) && instr->operand(0) == instr->operand(1)) {
    // x - x = 0 for integers (wrapping arithmetic); for floats Inf - Inf
    // is NaN. The result is broadcast(0).
    if (!env->Should("sub-self-int", instr)) return false;
    HloComputation* comp = instr->parent();
    HloInstruction* zero = AddScalarConstant(comp, env, t, 0, instr->shape());
    HloInstruction* repl = AddBroadcastScalar(comp, env, zero, instr->shape(),
                                              instr->name() + ".zero");
    if (repl == zero) SetShapeAndLiteralLayout(zero, instr->shape());
    RETURN_IF_ERROR(ReplaceWith(instr, repl));
    return true;
  }
  return false;
}

StatusOr<bool> SimplifyMultiply(HloInstruction* instr, Env* env) {
  const PrimitiveType t = instr->shape().element_type();
  if (!IsArithmetic(t)) return false;
  for (int i = 0; i < 2; ++i) {
    if (IsUniform(instr->operand(i), 1.0)) {
      return Use(instr, instr->operand(1 - i), "mul-one", env);
    }
  }
  if (IsIntegral(t)) {
    for (int i = 0; i < 2; ++i) {
      if (IsUniform(instr->operand(i), 0.0)) {
        return Use(instr, instr->operand(i), "mul-zero-int", env);
      }
    }
  }
  return false;
}

StatusOr<bool> SimplifyDivide(HloInstruction* instr, Env* env) {
  if (!IsArithmetic(instr->shape().element_type())) return false;
  if (IsUniform(instr->operand(1), 1.0)) {
    return Use(instr, instr->operand(0), "div-one", env);
  }
  return false;
}

// negate(negate(x)) = x (also INT_MIN: it wraps back); not(not(x)) = x.
StatusOr<bool> SimplifyInvolution(HloInstruction* instr, Env* env) {
  HloInstruction* inner = instr->operand(0);
  if (inner->opcode() != instr->opcode()) return false;
  const PrimitiveType t = instr->shape().element_type();
  if (instr->opcode() == Op::kNegate && !IsArithmetic(t)) return false;
  const char* site =
      instr->opcode() == Op::kNegate ? "double-negate" : "double-not";
  return Use(instr, inner->operand(0), site, env);
}

StatusOr<bool> SimplifySelect(HloInstruction* instr, Env* env) {
  if (instr->operand(1) == instr->operand(2)) {
    return Use(instr, instr->operand(1), "select-same-operands", env);
  }
  std::optional<bool> pred = UniformPred(instr->operand(0));
  if (!pred) return false;
  return Use(instr, instr->operand(*pred ? 1 : 2), "select-const-pred", env);
}

// compare(x, x) on integers or pred: EQ/LE/GE are true, NE/LT/GT false.
StatusOr<bool> SimplifyCompare(HloInstruction* instr, Env* env) {
  const PrimitiveType t = instr->operand(0)->shape().element_type();
  if (instr->operand(0) != instr->operand(1) ||
      !(IsInteger(t) || t == PrimitiveType::PRED) ||
      instr->attrs().comparison_type == ComparisonType::kFloat ||
      instr->attrs().comparison_type == ComparisonType::kTotalOrder ||
      !env->Should("compare-same-int", instr)) {
    return false;
  }
  const ComparisonDirection d = instr->attrs().comparison_direction;
  const bool value = d == ComparisonDirection::kEq ||
                     d == ComparisonDirection::kLe ||
                     d == ComparisonDirection::kGe;
  HloComputation* comp = instr->parent();
  HloInstruction* c = AddScalarConstant(comp, env, PrimitiveType::PRED,
                                        value ? 1 : 0, instr->shape());
  HloInstruction* repl = AddBroadcastScalar(comp, env, c, instr->shape(),
                                            instr->name() + ".const");
  if (repl == c) SetShapeAndLiteralLayout(c, instr->shape());
  RETURN_IF_ERROR(ReplaceWith(instr, repl));
  return true;
}

// and/or/max/min(x, x) = x: exact for every type (max(NaN, NaN) is that
// NaN; max(-0, -0) is -0).
StatusOr<bool> SimplifyIdempotent(HloInstruction* instr, Env* env) {
  if (instr->operand(0) != instr->operand(1)) return false;
  return Use(instr, instr->operand(0), "idempotent-binary", env);
}

// Whether every value of `from` is exactly representable in `to` (so
// converting through `to` loses nothing).
bool IsLossless(PrimitiveType from, PrimitiveType to) {
  if (from == to || from == PrimitiveType::PRED) {
    return IsArithmetic(to) || to == PrimitiveType::PRED;
  }
  const int fb = BitWidth(from), tb = BitWidth(to);
  if (IsSigned(from)) {
    if (IsSigned(to)) return tb >= fb;
    if (IsFloat(to)) return fb - 1 <= MantissaBits(to) + 1;
    return false;
  }
  if (IsUnsigned(from)) {
    if (IsUnsigned(to)) return tb >= fb;
    if (IsSigned(to)) return tb > fb;
    if (IsFloat(to)) return fb <= MantissaBits(to) + 1;
    return false;
  }
  if (IsFloat(from) && IsFloat(to)) {
    return ExponentBits(to) >= ExponentBits(from) &&
           MantissaBits(to) >= MantissaBits(from);
  }
  return false;
}

StatusOr<bool> SimplifyConvert(HloInstruction* instr, Env* env) {
  HloInstruction* x = instr->operand(0);
  const PrimitiveType to = instr->shape().element_type();
  if (x->shape().element_type() == to) {
    return Use(instr, x, "convert-identity", env);
  }
  if (x->opcode() != Op::kConvert) return false;
  HloInstruction* source = x->operand(0);
  const PrimitiveType from = source->shape().element_type();
  const PrimitiveType mid = x->shape().element_type();
  // convert_mid->to(convert_from->mid(v)) = convert_from->to(v) when the
  // first step keeps v exactly: every convert depends only on the value.
  if (!IsArithmetic(from) && from != PrimitiveType::PRED) return false;
  if (!IsLossless(from, mid) ||
      (!IsArithmetic(to) && to != PrimitiveType::PRED)) {
    return false;
  }
  // An integer that does not fit `to` saturates when it comes from a
  // float but wraps when it comes from an integer: through a float, the
  // chain is one convert only when every value of `from` fits `to`.
  if (IsInteger(from) && !IsInteger(mid) && IsInteger(to) &&
      !IsLossless(from, to)) {
    return false;
  }
  if (from == to) return Use(instr, source, "convert-convert", env);
  if (!env->Should("convert-convert", instr)) return false;
  instr->ReplaceOperandWith(0, source);
  RETURN_IF_ERROR(RemoveIfDead(x));
  return true;
}

}  // namespace

StatusOr<bool> SimplifyArithmetic(HloInstruction* instr, Env* env) {
  if (!instr->shape().IsArray()) return false;
  switch (instr->opcode()) {
    case Op::kAdd:
      return SimplifyAdd(instr, env);
    case Op::kSubtract:
      return SimplifySubtract(instr, env);
    case Op::kMultiply:
      return SimplifyMultiply(instr, env);
    case Op::kDivide:
      return SimplifyDivide(instr, env);
    case Op::kNegate:
    case Op::kNot:
      return SimplifyInvolution(instr, env);
    case Op::kSelect:
      return SimplifySelect(instr, env);
    case Op::kCompare:
      return SimplifyCompare(instr, env);
    case Op::kAnd:
    case Op::kOr:
    case Op::kMaximum:
    case Op::kMinimum:
      return SimplifyIdempotent(instr, env);
    case Op::kConvert:
      return SimplifyConvert(instr, env);
    default:
      return false;
  }
}

}  // namespace trench::algsimp
