#include "compiler/ir/hlo_instruction.h"

#include <algorithm>

#include "compiler/ir/hlo_computation.h"

namespace trench {

std::string SourceLocation::ToString() const {
  return std::to_string(line) + ":" + std::to_string(column);
}

HloInstruction::HloInstruction(HloOpcode opcode, Shape shape, std::string name)
    : opcode_(opcode), shape_(std::move(shape)), name_(std::move(name)) {}

std::unique_ptr<HloInstruction> HloInstruction::CreateParameter(
    int64_t number, Shape shape, std::string name) {
  auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter,
                                            std::move(shape), std::move(name));
  p->mutable_attrs().parameter_number = number;
  return p;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateConstant(
    Literal literal, std::string name) {
  auto c = std::make_unique<HloInstruction>(HloOpcode::kConstant,
                                            literal.shape(), std::move(name));
  c->set_literal(std::move(literal));
  return c;
}

std::unique_ptr<HloInstruction> HloInstruction::Create(
    HloOpcode opcode, Shape shape, std::vector<HloInstruction*> operands,
    std::string name) {
  auto instr = std::make_unique<HloInstruction>(opcode, std::move(shape),
                                                std::move(name));
  for (HloInstruction* op : operands) instr->AddOperand(op);
  return instr;
}

void HloInstruction::AddUser(HloInstruction* user) {
  if (std::find(users_.begin(), users_.end(), user) == users_.end()) {
    users_.push_back(user);
  }
}

void HloInstruction::RemoveUser(HloInstruction* user) {
  // Only drop the user when no operand edge from it remains.
  if (std::count(user->operands_.begin(), user->operands_.end(), this) > 0) {
    return;
  }
  users_.erase(std::remove(users_.begin(), users_.end(), user), users_.end());
}

void HloInstruction::AddOperand(HloInstruction* operand) {
  operands_.push_back(operand);
  operand->AddUser(this);
}

void HloInstruction::ReplaceOperandWith(int64_t i,
                                        HloInstruction* new_operand) {
  HloInstruction* old = operands_[i];
  if (old == new_operand) return;
  operands_[i] = new_operand;
  old->RemoveUser(this);
  new_operand->AddUser(this);
}

void HloInstruction::DetachOperands() {
  std::vector<HloInstruction*> old = std::move(operands_);
  operands_.clear();
  for (HloInstruction* op : old) op->RemoveUser(this);
}

void HloInstruction::ReplaceAllUsesWith(HloInstruction* other) {
  std::vector<HloInstruction*> users = users_;
  for (HloInstruction* user : users) {
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operands_[i] == this) user->ReplaceOperandWith(i, other);
    }
  }
  if (parent_ && parent_->root_instruction() == this) {
    parent_->set_root_instruction(other);
  }
}

void HloInstruction::AddControlPredecessor(HloInstruction* p) {
  if (std::find(control_predecessors_.begin(), control_predecessors_.end(),
                p) == control_predecessors_.end()) {
    control_predecessors_.push_back(p);
    p->control_successors_.push_back(this);
  }
}

void HloInstruction::RemoveControlPredecessor(HloInstruction* p) {
  auto it =
      std::find(control_predecessors_.begin(), control_predecessors_.end(), p);
  if (it == control_predecessors_.end()) return;
  control_predecessors_.erase(it);
  auto& succ = p->control_successors_;
  succ.erase(std::find(succ.begin(), succ.end(), this));
}

void HloInstruction::DropControlEdges() {
  while (!control_predecessors_.empty()) {
    RemoveControlPredecessor(control_predecessors_.back());
  }
}

void HloInstruction::set_literal(Literal l) {
  literal_ = std::make_unique<Literal>(std::move(l));
}

std::unique_ptr<HloInstruction> HloInstruction::CloneWithOperands(
    std::vector<HloInstruction*> operands, const std::string& suffix) const {
  auto c = Create(opcode_, shape_, std::move(operands), name_ + suffix);
  c->called_ = called_;
  if (attrs_) c->attrs_ = std::make_unique<HloAttributes>(*attrs_);
  if (literal_) c->literal_ = std::make_unique<Literal>(*literal_);
  return c;
}

bool HloInstruction::IdenticalIgnoringOperands(const HloInstruction& o) const {
  if (opcode_ != o.opcode_ || !(shape_ == o.shape_) ||
      operands_.size() != o.operands_.size() || called_ != o.called_) {
    return false;
  }
  if ((literal_ == nullptr) != (o.literal_ == nullptr)) return false;
  if (literal_ && !(*literal_ == *o.literal_)) return false;
  // Raw attributes such as metadata do not change semantics; compare the
  // typed ones only (copying only when there are raw ones to leave out).
  const HloAttributes& a = attrs();
  const HloAttributes& b = o.attrs();
  if (&a == &b) return true;
  if (a.raw.empty() && b.raw.empty()) return a == b;
  HloAttributes ac = a, bc = b;
  ac.raw.clear();
  bc.raw.clear();
  return ac == bc;
}

const HloAttributes& HloInstruction::DefaultAttributes() {
  static const HloAttributes* const kDefault = new HloAttributes();
  return *kDefault;
}

std::string HloInstruction::ShortString() const {
  std::string s = "%" + name_ + " = " + shape_.ToString() + " " +
                  std::string(OpcodeName(opcode_)) + "(";
  for (size_t i = 0; i < operands_.size(); ++i) {
    if (i) s += ", ";
    s += "%" + operands_[i]->name();
  }
  return s + ")";
}

}  // namespace trench
