#include "compiler/passes/dce.h"

#include <algorithm>
#include <unordered_set>

#include "compiler/passes/pass_util.h"

namespace trench {
namespace {

// Instructions DCE must keep even without users.
bool ShouldAlwaysKeep(
    const HloInstruction& instr,
    const std::unordered_set<const HloInstruction*>& control_preds) {
  return instr.parent()->root_instruction() == &instr ||
         instr.opcode() == HloOpcode::kParameter || HasSideEffect(instr) ||
         !instr.control_predecessors().empty() || control_preds.count(&instr);
}

StatusOr<bool> RemoveDeadInstructions(HloComputation* comp, PassContext* ctx) {
  std::unordered_set<const HloInstruction*> control_preds;
  for (const HloInstruction* i : comp->instructions()) {
    for (const HloInstruction* p : i->control_predecessors()) {
      control_preds.insert(p);
    }
  }
  // Users come before their operands in reverse post order, so one sweep
  // removes whole dead chains.
  std::vector<HloInstruction*> order = comp->MakeInstructionPostOrder();
  std::reverse(order.begin(), order.end());
  bool changed = false;
  for (HloInstruction* instr : order) {
    if (instr->user_count() != 0 || ShouldAlwaysKeep(*instr, control_preds)) {
      continue;
    }
    if (!ctx->ShouldRewrite("dce", "remove-dead-instruction", instr->name())) {
      continue;
    }
    for (HloComputation* called : instr->called_computations()) {
      if (called && called->fusion_instruction() == instr) {
        called->set_fusion_instruction(nullptr);
      }
    }
    RETURN_IF_ERROR(comp->RemoveInstruction(instr));
    changed = true;
  }
  return changed;
}

StatusOr<bool> RemoveUnreachableComputations(HloModule* module,
                                             PassContext* ctx) {
  std::vector<HloComputation*> reachable = module->MakeComputationPostOrder();
  std::unordered_set<const HloComputation*> live(reachable.begin(),
                                                 reachable.end());
  // Insertion order puts callees first; remove callers first so that no
  // removed computation is still called by a remaining one.
  std::vector<HloComputation*> all = module->computations();
  bool changed = false;
  std::unordered_set<const HloComputation*> kept;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    HloComputation* comp = *it;
    if (live.count(comp)) continue;
    bool called_by_kept = false;
    for (const HloComputation* k : kept) {
      for (const HloInstruction* i : k->instructions()) {
        const auto& called = i->called_computations();
        called_by_kept |=
            std::find(called.begin(), called.end(), comp) != called.end();
      }
    }
    if (called_by_kept ||
        !ctx->ShouldRewrite("dce", "remove-unreachable-computation",
                            comp->name())) {
      kept.insert(comp);
      continue;
    }
    module->RemoveComputation(comp);
    changed = true;
  }
  return changed;
}

}  // namespace

StatusOr<bool> DeadCodeElimination::Run(HloModule* module, PassContext* ctx) {
  bool changed = false;
  for (HloComputation* comp : module->computations()) {
    ASSIGN_OR_RETURN(bool c, RemoveDeadInstructions(comp, ctx));
    changed |= c;
  }
  ASSIGN_OR_RETURN(bool c, RemoveUnreachableComputations(module, ctx));
  return changed || c;
}

}  // namespace trench
