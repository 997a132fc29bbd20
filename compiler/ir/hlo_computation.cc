#include "compiler/ir/hlo_computation.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/hlo_module.h"

namespace trench {

HloInstruction* HloComputation::AddInstruction(
    std::unique_ptr<HloInstruction> instr) {
  HloInstruction* raw = instr.get();
  raw->set_parent(this);
  if (parent_) raw->set_unique_id(parent_->NextUniqueId());
  if (raw->opcode() == HloOpcode::kParameter) {
    const int64_t n = raw->parameter_number();
    if (n >= 0) {
      if (static_cast<int64_t>(params_.size()) <= n) params_.resize(n + 1);
      params_[n] = raw;
    }
  }
  instrs_.push_back(std::move(instr));
  return raw;
}

Status HloComputation::RemoveInstruction(HloInstruction* instr) {
  if (instr == root_) {
    return FailedPrecondition("cannot remove root instruction " +
                              instr->name());
  }
  if (instr->user_count() > 0) {
    return FailedPrecondition("cannot remove " + instr->name() +
                              ": it still has users");
  }
  auto it = std::find_if(instrs_.begin(), instrs_.end(),
                         [&](const auto& p) { return p.get() == instr; });
  if (it == instrs_.end()) {
    return NotFound(instr->name() + " is not in computation " + name_);
  }
  instr->DetachOperands();
  for (auto& other : instrs_) {
    auto& preds = other->control_predecessors();
    if (std::find(preds.begin(), preds.end(), instr) != preds.end()) {
      std::vector<HloInstruction*> kept;
      for (HloInstruction* p : preds) {
        if (p != instr) kept.push_back(p);
      }
      other->DropControlEdges();
      for (HloInstruction* p : kept) other->AddControlPredecessor(p);
    }
  }
  if (instr->opcode() == HloOpcode::kParameter) {
    for (auto& p : params_) {
      if (p == instr) p = nullptr;
    }
  }
  instrs_.erase(it);
  return Status::Ok();
}

Status HloComputation::RemoveInstructions(
    const std::vector<HloInstruction*>& dead) {
  const std::unordered_set<const HloInstruction*> gone(dead.begin(),
                                                       dead.end());
  if (gone.size() != dead.size()) {
    return InvalidArgument("an instruction to remove is listed twice");
  }
  for (const HloInstruction* d : dead) {
    if (d == root_) {
      return FailedPrecondition("cannot remove root instruction " + d->name());
    }
    if (d->parent() != this) {
      return NotFound(d->name() + " is not in computation " + name_);
    }
    for (const HloInstruction* u : d->users()) {
      if (!gone.count(u)) {
        return FailedPrecondition("cannot remove " + d->name() +
                                  ": it still has users");
      }
    }
  }
  for (HloInstruction* d : dead) d->DetachOperands();
  for (auto& other : instrs_) {
    if (gone.count(other.get())) continue;
    const auto& preds = other->control_predecessors();
    if (std::none_of(preds.begin(), preds.end(),
                     [&](const HloInstruction* p) { return gone.count(p); })) {
      continue;
    }
    std::vector<HloInstruction*> kept;
    for (HloInstruction* p : preds) {
      if (!gone.count(p)) kept.push_back(p);
    }
    other->DropControlEdges();
    for (HloInstruction* p : kept) other->AddControlPredecessor(p);
  }
  for (auto& p : params_) {
    if (gone.count(p)) p = nullptr;
  }
  instrs_.erase(
      std::remove_if(instrs_.begin(), instrs_.end(),
                     [&](const auto& p) { return gone.count(p.get()); }),
      instrs_.end());
  return Status::Ok();
}

int64_t HloComputation::RemoveDeadInstructions() {
  int64_t removed = 0;
  bool progress = true;
  while (progress) {
    progress = false;
    for (HloInstruction* instr : instructions()) {
      if (instr != root_ && instr->user_count() == 0 &&
          instr->opcode() != HloOpcode::kParameter &&
          RemoveInstruction(instr).ok()) {
        ++removed;
        progress = true;
      }
    }
  }
  return removed;
}

std::vector<HloInstruction*> HloComputation::instructions() const {
  std::vector<HloInstruction*> out;
  out.reserve(instrs_.size());
  for (const auto& p : instrs_) out.push_back(p.get());
  return out;
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const {
  std::vector<HloInstruction*> order;
  order.reserve(instrs_.size());
  std::unordered_set<const HloInstruction*> done;
  // Iterative DFS so deep graphs (long chains) cannot overflow the stack.
  auto visit = [&](HloInstruction* start) {
    if (done.count(start)) return;
    std::vector<std::pair<HloInstruction*, size_t>> stack{{start, 0}};
    std::unordered_set<const HloInstruction*> on_stack{start};
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const size_t n_ops = node->operands().size();
      const size_t n_all = n_ops + node->control_predecessors().size();
      if (next < n_all) {
        HloInstruction* dep = next < n_ops
                                  ? node->operand(next)
                                  : node->control_predecessors()[next - n_ops];
        ++next;
        if (!done.count(dep) && !on_stack.count(dep) && dep->parent() == this) {
          stack.push_back({dep, 0});
          on_stack.insert(dep);
        }
        continue;
      }
      done.insert(node);
      on_stack.erase(node);
      order.push_back(node);
      stack.pop_back();
    }
  };
  for (const auto& p : instrs_) visit(p.get());
  return order;
}

HloInstruction* HloComputation::GetInstructionWithName(
    const std::string& name) const {
  for (const auto& p : instrs_) {
    if (p->name() == name) return p.get();
  }
  return nullptr;
}

}  // namespace trench
