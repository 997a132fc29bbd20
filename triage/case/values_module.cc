#include "triage/case/values_module.h"

#include "compiler/ir/hlo_computation.h"

namespace trench::hlo_diff {

StatusOr<std::unique_ptr<HloModule>> ValuesModule(
    const HloModule& module, const std::string& computation,
    const std::vector<std::string>& names, const std::string& root_name) {
  std::unique_ptr<HloModule> m = module.Clone();
  HloComputation* comp = m->GetComputationWithName(computation);
  if (comp == nullptr) {
    return NotFound("no computation named '" + computation + "'");
  }
  std::vector<HloInstruction*> ops;
  std::vector<Shape> shapes;
  for (const std::string& name : names) {
    HloInstruction* i = comp->GetInstructionWithName(name);
    if (i == nullptr) {
      return NotFound("no instruction named '" + name + "' in '" + computation +
                      "'");
    }
    ops.push_back(i);
    shapes.push_back(i->shape());
  }
  HloInstruction* root = comp->AddInstruction(HloInstruction::Create(
      HloOpcode::kTuple, Shape::Tuple(shapes), ops, root_name));
  comp->set_root_instruction(root);
  comp->set_fusion_instruction(nullptr);
  m->set_entry_computation(comp);
  return m;
}

}  // namespace trench::hlo_diff
