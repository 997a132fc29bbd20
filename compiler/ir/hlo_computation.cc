#include "compiler/ir/hlo_computation.h"

#include <algorithm>
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
  raw->index_in_parent_ = instrs_.size();
  instrs_.push_back(std::move(instr));
  ++live_;
  return raw;
}

bool HloComputation::Contains(const HloInstruction* instr) const {
  const size_t slot = instr->index_in_parent_;
  return instr->parent() == this && slot < instrs_.size() &&
         instrs_[slot].get() == instr;
}

void HloComputation::Compact() {
  size_t kept = 0;
  for (size_t i = 0; i < instrs_.size(); ++i) {
    if (!instrs_[i]) continue;
    instrs_[i]->index_in_parent_ = kept;
    instrs_[kept++] = std::move(instrs_[i]);
  }
  instrs_.resize(kept);
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
  if (!Contains(instr)) {
    return NotFound(instr->name() + " is not in computation " + name_);
  }
  const size_t pos = instr->index_in_parent_;
  instr->DetachOperands();
  instr->DropControlEdges();
  while (!instr->control_successors().empty()) {
    instr->control_successors().back()->RemoveControlPredecessor(instr);
  }
  if (instr->opcode() == HloOpcode::kParameter) {
    for (auto& p : params_) {
      if (p == instr) p = nullptr;
    }
  }
  instrs_[pos].reset();
  --live_;
  if (static_cast<size_t>(live_) * 2 < instrs_.size()) Compact();
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
    if (!Contains(d)) {
      return NotFound(d->name() + " is not in computation " + name_);
    }
    for (const HloInstruction* u : d->users()) {
      if (!gone.count(u)) {
        return FailedPrecondition("cannot remove " + d->name() +
                                  ": it still has users");
      }
    }
  }
  for (HloInstruction* d : dead) {
    d->DetachOperands();
    d->DropControlEdges();
    while (!d->control_successors().empty()) {
      d->control_successors().back()->RemoveControlPredecessor(d);
    }
  }
  for (auto& p : params_) {
    if (gone.count(p)) p = nullptr;
  }
  for (HloInstruction* d : dead) instrs_[d->index_in_parent_].reset();
  live_ -= dead.size();
  Compact();
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
  out.reserve(live_);
  for (const auto& p : instrs_) {
    if (p) out.push_back(p.get());
  }
  return out;
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const {
  std::vector<HloInstruction*> order;
  order.reserve(live_);
  DepthFirst(&order, /*stop_at_cycle=*/false);
  return order;
}

const HloInstruction* HloComputation::FindCycle() const {
  return DepthFirst(nullptr, /*stop_at_cycle=*/true);
}

const HloInstruction* HloComputation::DepthFirst(
    std::vector<HloInstruction*>* order, bool stop_at_cycle) const {
  // Marks by slot in instrs_ (no allocation per instruction: this runs
  // around every pass, on computations of tens of thousands of
  // instructions).
  enum Mark : uint8_t { kNone = 0, kOnStack = 1, kDone = 2 };
  std::vector<uint8_t> mark(instrs_.size(), kNone);
  struct Frame {
    HloInstruction* node;
    size_t next;  // The next operand (then control predecessor) to visit.
  };
  std::vector<Frame> stack;
  // Iterative, so deep graphs (long chains) cannot overflow the stack.
  for (size_t start = 0; start < instrs_.size(); ++start) {
    if (!instrs_[start] || mark[start] != kNone) continue;
    mark[start] = kOnStack;
    stack.push_back({instrs_[start].get(), 0});
    while (!stack.empty()) {
      Frame& f = stack.back();
      HloInstruction* node = f.node;
      const size_t n_ops = node->operands().size();
      const size_t n_all = n_ops + node->control_predecessors().size();
      if (f.next < n_all) {
        HloInstruction* dep =
            f.next < n_ops ? node->operand(f.next)
                           : node->control_predecessors()[f.next - n_ops];
        ++f.next;
        if (!Contains(dep)) continue;
        const size_t slot = dep->index_in_parent_;
        if (mark[slot] == kOnStack && stop_at_cycle) return dep;
        if (mark[slot] != kNone) continue;
        mark[slot] = kOnStack;
        stack.push_back({dep, 0});
        continue;
      }
      mark[node->index_in_parent_] = kDone;
      if (order) order->push_back(node);
      stack.pop_back();
    }
  }
  return nullptr;
}

HloInstruction* HloComputation::GetInstructionWithName(
    const std::string& name) const {
  for (const auto& p : instrs_) {
    if (p && p->name() == name) return p.get();
  }
  return nullptr;
}

}  // namespace trench
