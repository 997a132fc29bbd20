// remove-instructions: removes instructions (computations in module order,
// instructions in post order). An unused instruction (or entry parameter)
// just goes: one opportunity. A used one (or a root) is replaced, for all
// its users, by
//   1. one of its operands of the same shape (elementwise ops, copies,
//      ...; for the entry's root, of any shape): one opportunity per such
//      distinct operand, in operand order;
//   2. else, in the entry computation, a new parameter whose input is the
//      oracle's value of the instruction on the case's inputs (zeros when
//      the oracle cannot say), so the values downstream stay as they were;
//   3. else (called computations) a zero constant.
// When several opportunities of one instruction are chosen, the first wins.
// Whatever only the removed instruction used goes with it.
#include <algorithm>

#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

bool HasToken(const Shape& shape) {
  bool token = false;
  ForEachLeafShape(shape,
                   [&](const Shape& s) { token = token || s.IsToken(); });
  return token;
}

struct Opportunity {
  HloInstruction* instr;
  // The operand taking x's place (-1: x is unused, or a new parameter /
  // constant). By index: when that operand was itself removed earlier in
  // the same Apply, its replacement now sits there.
  int64_t operand;
};

// The opportunities, in enumeration order.
std::vector<Opportunity> Removable(const HloModule& m) {
  std::vector<Opportunity> out;
  const HloComputation* entry = m.entry_computation();
  for (const HloComputation* comp : m.computations()) {
    for (HloInstruction* i : comp->MakeInstructionPostOrder()) {
      const bool used = i->user_count() > 0 || i == comp->root_instruction();
      if (i->opcode() == HloOpcode::kParameter) {
        if (comp == entry && !used) out.push_back({i, -1});
        continue;
      }
      if (!used) {
        out.push_back({i, -1});
        continue;
      }
      // Nothing to gain replacing a leaf by a leaf; tokens have no value.
      if (i->operand_count() == 0 || HasToken(i->shape())) continue;
      // The entry's root may change its shape: any operand will do.
      const bool any = comp == entry && i == comp->root_instruction();
      std::vector<HloInstruction*> same;
      for (int64_t o = 0; o < i->operand_count(); ++o) {
        HloInstruction* op = i->operand(o);
        if ((any ? !HasToken(op->shape())
                 : op->shape().Compatible(i->shape())) &&
            std::find(same.begin(), same.end(), op) == same.end()) {
          same.push_back(op);
          out.push_back({i, o});
        }
      }
      if (same.empty()) out.push_back({i, -1});
    }
  }
  return out;
}

class RemoveInstructionsPass : public OpportunityListPass<Opportunity> {
 public:
  RemoveInstructionsPass()
      : OpportunityListPass(
            "remove-instructions",
            "remove instructions; uses go to a same-shaped operand, a new "
            "parameter holding the oracle's value, or a zero constant") {}

 private:
  std::vector<Opportunity> Opportunities(const hlo_diff::Case&,
                                         const EditableCase& e) const override {
    return Removable(*e.module);
  }

  StatusOr<hlo_diff::Case> ApplyChosen(
      const hlo_diff::Case& c, EditableCase& e,
      const std::vector<Opportunity>& chosen) const override {
    HloComputation* entry = e.module->entry_computation();
    std::shared_ptr<const ValueMap> values;
    std::vector<HloInstruction*> gone;
    for (const Opportunity& o : chosen) {
      HloInstruction* x = o.instr;
      if (!gone.empty() && gone.back() == x) continue;  // First wins.
      HloComputation* comp = x->parent();
      gone.push_back(x);
      if (x->user_count() == 0 && x != comp->root_instruction()) continue;
      HloInstruction* with = o.operand >= 0 ? x->operand(o.operand) : nullptr;
      if (with == nullptr && comp == entry) {
        if (values == nullptr) values = OracleValues(c);
        auto it = values->find(x->name());
        std::vector<Literal> leaves = it != values->end()
                                          ? LiteralLeaves(it->second)
                                          : ZeroLeaves(x->shape());
        with = AddEntryParameter(e, x->shape(), x->name() + ".value",
                                 std::move(leaves));
      } else if (with == nullptr) {
        with = comp->AddInstruction(HloInstruction::CreateConstant(
            Literal(x->shape()), FreshName(e, x->name() + ".zero")));
        with->set_shape(x->shape());
      }
      x->ReplaceAllUsesWith(with);
      if (comp->root_instruction() == x) comp->set_root_instruction(with);
    }
    return FinishCase(e, c, gone);
  }
};

}  // namespace

std::unique_ptr<ReductionPass> MakeRemoveInstructionsPass() {
  return std::make_unique<RemoveInstructionsPass>();
}

}  // namespace trench::hlo_reduce
