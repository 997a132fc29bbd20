#include "compiler/passes/algsimp.h"

#include <algorithm>
#include <cstring>

#include "compiler/passes/algsimp_internal.h"

namespace trench {
namespace algsimp {

namespace {

bool UniformElements(const Literal& lit, const Literal& scalar) {
  const int64_t width = ByteWidth(lit.element_type());
  const auto bytes = lit.bytes();
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (std::memcmp(bytes.data() + i * width, scalar.bytes().data(), width)) {
      return false;
    }
  }
  return true;
}

const HloInstruction* ThroughBroadcast(const HloInstruction* instr) {
  while (instr->opcode() == HloOpcode::kBroadcast &&
         instr->operand_count() == 1) {
    instr = instr->operand(0);
  }
  return instr;
}

}  // namespace

bool IsUniform(const HloInstruction* instr, double value) {
  const PrimitiveType type = instr->shape().element_type();
  instr = ThroughBroadcast(instr);
  const TypeKind kind = KindOf(type);
  if (instr->opcode() != HloOpcode::kConstant || !instr->has_literal() ||
      !instr->shape().IsArray() || instr->shape().element_type() != type ||
      kind == TypeKind::kComplex || kind == TypeKind::kOther) {
    return false;
  }
  Literal scalar(Shape(type, {}));
  if (kind == TypeKind::kFloat) {
    scalar.SetFromDouble(0, value);
  } else {
    scalar.SetFromInt64(0, static_cast<int64_t>(value));
  }
  return UniformElements(instr->literal(), scalar);
}

std::optional<bool> UniformPred(const HloInstruction* instr) {
  if (instr->shape().element_type() != PrimitiveType::PRED) return std::nullopt;
  if (IsUniform(instr, 1)) return true;
  if (IsUniform(instr, 0)) return false;
  return std::nullopt;
}

bool CanReplace(const HloInstruction* old, const HloInstruction* repl) {
  return CanReplaceShape(repl->shape(), old->shape());
}

Status ReplaceWith(HloInstruction* old, HloInstruction* repl) {
  return ReplaceInstruction(old, repl);
}

Status RemoveIfDead(HloInstruction* instr) {
  HloComputation* comp = instr->parent();
  if (instr->user_count() != 0 || comp->root_instruction() == instr ||
      instr->opcode() == HloOpcode::kParameter || HasSideEffect(*instr) ||
      !instr->control_predecessors().empty() ||
      !instr->control_successors().empty()) {
    return Status::Ok();
  }
  return comp->RemoveInstruction(instr);
}

Shape ShapeLike(PrimitiveType type, std::vector<int64_t> dims,
                const Shape& like) {
  Shape s(type, std::move(dims));
  if (like.has_layout()) {
    Layout layout;
    for (int64_t d = s.rank() - 1; d >= 0; --d) {
      layout.minor_to_major.push_back(d);
    }
    s.set_layout(std::move(layout));
  }
  return s;
}

HloInstruction* AddScalarConstant(HloComputation* comp, Env* env,
                                  PrimitiveType type, double value,
                                  const Shape& like) {
  Literal lit(ShapeLike(type, {}, like));
  if (IsFloat(type)) {
    lit.SetFromDouble(0, value);
  } else {
    lit.SetFromInt64(0, static_cast<int64_t>(value));
  }
  return comp->AddInstruction(HloInstruction::CreateConstant(
      std::move(lit), env->names->Get("constant")));
}

HloInstruction* AddBroadcastScalar(HloComputation* comp, Env* env,
                                   HloInstruction* scalar, const Shape& shape,
                                   const std::string& base) {
  if (shape.rank() == 0) return scalar;
  HloInstruction* b =
      AddNew(comp, env->names, HloOpcode::kBroadcast, shape, {scalar}, base);
  b->mutable_attrs().has_dimensions = true;
  return b;
}

}  // namespace algsimp

namespace {

StatusOr<bool> SimplifyOne(HloInstruction* instr, algsimp::Env* env) {
  if (HasSideEffect(*instr)) return false;
  ASSIGN_OR_RETURN(bool changed, algsimp::SimplifyArithmetic(instr, env));
  if (changed) return true;
  ASSIGN_OR_RETURN(changed, algsimp::SimplifyShape(instr, env));
  if (changed) return true;
  return algsimp::SimplifyReduceOrDot(instr, env);
}

StatusOr<bool> Sweep(HloModule* module, algsimp::Env* env) {
  bool changed = false;
  for (HloComputation* comp : module->computations()) {
    // Each rule only removes the instruction it looks at and operands of
    // it, which come earlier in post order, so the rest of the list stays
    // valid.
    for (HloInstruction* instr : comp->MakeInstructionPostOrder()) {
      ASSIGN_OR_RETURN(bool c, SimplifyOne(instr, env));
      changed |= c;
    }
  }
  return changed;
}

}  // namespace

StatusOr<bool> AlgebraicSimplifier::Run(HloModule* module, PassContext* ctx) {
  NameUniquer names(*module);
  algsimp::Env env{ctx, &names};
  bool changed = false;
  for (int iter = 0; iter < kMaxIterations; ++iter) {
    ASSIGN_OR_RETURN(bool c, Sweep(module, &env));
    if (!c) return changed;
    changed = true;
  }
  ctx->Log("algsimp: hit the cap of " + std::to_string(kMaxIterations) +
           " sweeps; the module may not be fully simplified");
  return changed;
}

}  // namespace trench
