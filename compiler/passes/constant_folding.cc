#include "compiler/passes/constant_folding.h"

#include "compiler/passes/literal_folder.h"
#include "compiler/passes/pass_util.h"

namespace trench {
namespace {

bool IsFoldCandidate(const HloInstruction& instr) {
  if (instr.opcode() == HloOpcode::kConstant ||
      instr.opcode() == HloOpcode::kParameter || HasSideEffect(instr) ||
      !instr.control_predecessors().empty() || !instr.shape().IsArray()) {
    return false;
  }
  // Only iota makes a value from nothing worth folding; other zero-operand
  // ops (rng state, partition id, ...) are not pure functions.
  if (instr.operand_count() == 0) return instr.opcode() == HloOpcode::kIota;
  for (const HloInstruction* op : instr.operands()) {
    if (op->opcode() != HloOpcode::kConstant || !op->has_literal()) {
      return false;
    }
  }
  return true;
}

bool IsControlPredecessor(const HloInstruction& instr) {
  return !instr.control_successors().empty();
}

}  // namespace

StatusOr<bool> ConstantFolding::Run(HloModule* module, PassContext* ctx) {
  NameUniquer names(*module);
  bool changed = false;
  for (HloComputation* comp : module->computations()) {
    for (HloInstruction* instr : comp->MakeInstructionPostOrder()) {
      if (!IsFoldCandidate(*instr)) continue;
      std::vector<const Literal*> operands;
      for (const HloInstruction* op : instr->operands()) {
        operands.push_back(&op->literal());
      }
      std::optional<Literal> value = FoldInstruction(*instr, operands);
      if (!value || IsControlPredecessor(*instr) ||
          !ctx->ShouldRewrite(name(), "fold", instr->name())) {
        continue;
      }
      HloInstruction* constant =
          comp->AddInstruction(HloInstruction::CreateConstant(
              std::move(*value), names.Get(instr->name() + ".folded")));
      RETURN_IF_ERROR(ReplaceInstruction(instr, constant));
      changed = true;
    }
  }
  return changed;
}

}  // namespace trench
