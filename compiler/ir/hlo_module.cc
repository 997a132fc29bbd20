#include "compiler/ir/hlo_module.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace trench {

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> c) {
  HloComputation* raw = c.get();
  raw->set_parent(this);
  for (HloInstruction* instr : raw->instructions()) {
    instr->set_unique_id(NextUniqueId());
  }
  comps_.push_back(std::move(c));
  return raw;
}

void HloModule::RemoveComputation(HloComputation* c) {
  comps_.erase(std::remove_if(comps_.begin(), comps_.end(),
                              [&](const auto& p) { return p.get() == c; }),
               comps_.end());
}

std::vector<HloComputation*> HloModule::computations() const {
  std::vector<HloComputation*> out;
  for (const auto& c : comps_) out.push_back(c.get());
  return out;
}

HloComputation* HloModule::GetComputationWithName(
    const std::string& name) const {
  for (const auto& c : comps_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

std::vector<HloComputation*> HloModule::MakeComputationPostOrder() const {
  std::vector<HloComputation*> order;
  std::unordered_set<const HloComputation*> seen;
  std::function<void(HloComputation*)> visit = [&](HloComputation* c) {
    if (!c || !seen.insert(c).second) return;
    for (HloInstruction* instr : c->instructions()) {
      for (HloComputation* callee : instr->called_computations()) {
        visit(callee);
      }
    }
    order.push_back(c);
  };
  visit(entry_);
  return order;
}

int64_t HloModule::instruction_count() const {
  int64_t n = 0;
  for (const auto& c : comps_) n += c->instruction_count();
  return n;
}

std::unique_ptr<HloModule> HloModule::Clone() const {
  auto m = std::make_unique<HloModule>(name_);
  m->header_attrs_ = header_attrs_;
  std::unordered_map<const HloComputation*, HloComputation*> comp_map;
  // Clone computations in stored order (callees are stored before callers
  // by the parser; a second pass fixes any forward reference).
  for (const auto& c : comps_) {
    auto nc = std::make_unique<HloComputation>(c->name());
    std::unordered_map<const HloInstruction*, HloInstruction*> map;
    for (HloInstruction* instr : c->MakeInstructionPostOrder()) {
      std::vector<HloInstruction*> ops;
      for (HloInstruction* op : instr->operands()) ops.push_back(map.at(op));
      auto clone = instr->CloneWithOperands(std::move(ops), "");
      clone->set_source_location(instr->source_location());
      map[instr] = nc->AddInstruction(std::move(clone));
    }
    for (HloInstruction* instr : c->instructions()) {
      for (HloInstruction* p : instr->control_predecessors()) {
        map.at(instr)->AddControlPredecessor(map.at(p));
      }
    }
    nc->set_root_instruction(map.at(c->root_instruction()));
    comp_map[c.get()] = m->AddComputation(std::move(nc));
  }
  for (HloComputation* c : m->computations()) {
    for (HloInstruction* instr : c->instructions()) {
      for (int64_t i = 0; i < instr->called_computations().size(); ++i) {
        instr->set_called_computation(
            i, comp_map.at(instr->called_computations()[i]));
      }
      if (instr->opcode() == HloOpcode::kFusion &&
          !instr->called_computations().empty()) {
        instr->fused_computation()->set_fusion_instruction(instr);
      }
    }
  }
  m->entry_ = entry_ ? comp_map.at(entry_) : nullptr;
  return m;
}

}  // namespace trench
