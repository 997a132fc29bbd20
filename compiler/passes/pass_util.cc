#include "compiler/passes/pass_util.h"

#include <functional>

namespace trench {

NameUniquer::NameUniquer(const HloModule& module) {
  size_t size = 64;
  while (size < 2 * static_cast<size_t>(module.instruction_count()) + 2) {
    size *= 2;
  }
  slots_.assign(size, 0);
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) Take(i->name());
  }
}

bool NameUniquer::Take(std::string_view name) {
  uint64_t h = std::hash<std::string_view>()(name);
  if (h == 0) h = 1;
  const size_t mask = slots_.size() - 1;
  for (size_t at = h & mask;; at = (at + 1) & mask) {
    if (slots_[at] == h) return false;
    if (slots_[at] == 0) {
      slots_[at] = h;
      if (++used_ * 2 > slots_.size()) Grow();
      return true;
    }
  }
}

void NameUniquer::Grow() {
  std::vector<uint64_t> old(2 * slots_.size(), 0);
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (uint64_t h : old) {
    if (h == 0) continue;
    size_t at = h & mask;
    while (slots_[at] != 0) at = (at + 1) & mask;
    slots_[at] = h;
  }
}

std::string NameUniquer::Get(const std::string& base) {
  // Names are never given back, so the smallest free suffix of a base is
  // never below the one handed out last: k names of one base cost O(k).
  int64_t& n = next_[base];
  if (n == 0) {
    n = 1;
    if (Take(base)) return base;
  }
  for (;; ++n) {
    std::string candidate = base + "." + std::to_string(n);
    if (Take(candidate)) return candidate;
  }
}

namespace {

bool OpHasSideEffect(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllToAll:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCopyDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kCustomCall:
    case HloOpcode::kDomain:
    case HloOpcode::kInfeed:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kOutfeed:
    case HloOpcode::kPartitionId:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kReplicaId:
    case HloOpcode::kRng:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAddDependency:
      return true;
    default:
      return false;
  }
}

bool HasSideEffectImpl(const HloInstruction& instr, int depth) {
  if (OpHasSideEffect(instr.opcode())) return true;
  // Verified modules have no call cycles; the depth cap only bounds work on
  // pathological nesting.
  if (depth > 64) return !instr.called_computations().empty();
  for (const HloComputation* c : instr.called_computations()) {
    if (c == nullptr) return true;
    for (const HloInstruction* i : c->instructions()) {
      if (HasSideEffectImpl(*i, depth + 1)) return true;
    }
  }
  return false;
}

}  // namespace

bool HasSideEffect(const HloInstruction& instr) {
  return HasSideEffectImpl(instr, 0);
}

bool CanReplaceShape(const Shape& from, const Shape& to) {
  if (from == to) return true;
  if (!from.IsArray() || !to.IsArray()) return false;
  if (from.element_type() != to.element_type() || !from.SameDimensions(to)) {
    return false;
  }
  const std::string tail_from = from.has_layout() ? from.layout()->tail : "";
  const std::string tail_to = to.has_layout() ? to.layout()->tail : "";
  return tail_from == tail_to && from.minor_to_major() == to.minor_to_major();
}

Status ReplaceInstruction(HloInstruction* old_instr,
                          HloInstruction* new_instr) {
  if (old_instr == new_instr || old_instr->parent() != new_instr->parent()) {
    return Internal("ReplaceInstruction: bad replacement of " +
                    old_instr->name() + " by " + new_instr->name());
  }
  HloComputation* comp = old_instr->parent();
  old_instr->ReplaceAllUsesWith(new_instr);
  if (comp->root_instruction() == old_instr) {
    comp->set_root_instruction(new_instr);
  }
  if (old_instr->user_count() == 0 && !HasSideEffect(*old_instr) &&
      old_instr->opcode() != HloOpcode::kParameter &&
      old_instr->control_predecessors().empty() &&
      old_instr->control_successors().empty()) {
    return comp->RemoveInstruction(old_instr);
  }
  return Status::Ok();
}

HloInstruction* AddNew(HloComputation* comp, NameUniquer* names,
                       HloOpcode opcode, Shape shape,
                       std::vector<HloInstruction*> operands,
                       const std::string& base) {
  return comp->AddInstruction(HloInstruction::Create(
      opcode, std::move(shape), std::move(operands), names->Get(base)));
}

void SetShapeAndLiteralLayout(HloInstruction* instr, Shape shape) {
  if (instr->opcode() == HloOpcode::kConstant && instr->has_literal() &&
      shape.IsArray() && instr->literal().shape().layout() != shape.layout()) {
    Literal l = instr->literal();
    l.set_layout(shape.layout());
    instr->set_literal(std::move(l));
  }
  instr->set_shape(std::move(shape));
}

Shape WithoutLayout(Shape shape) {
  shape.clear_layout();
  return shape;
}

}  // namespace trench
