// sort-operands: drops operands of a variadic sort that its comparator
// does not read. Opportunities, per sort (computations in module order,
// post order) with N >= 2 operands, used only by get-tuple-element, whose
// comparator only it calls: one per operand k whose comparator parameters
// 2k and 2k+1 are both unused. Applied: the sort goes without those
// operands, its comparator without those parameters (renumbered); a
// get-tuple-element of a dropped operand becomes that operand (unsorted),
// the others follow their operand's new index (or become the sort itself
// when one operand is left). Dropping every operand of a sort is refused.
// Together with remove-instructions, which shrinks the comparator's body
// until its parameters go unused, a tie-breaking comparator over keys and
// values ends as one compare over the keys.
#include <map>
#include <set>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

struct Opportunity {
  HloInstruction* sort;
  int64_t operand;
};

// How many instructions of `m` call `c`.
int64_t CallSites(const HloModule& m, const HloComputation* c) {
  int64_t n = 0;
  for (const HloComputation* comp : m.computations()) {
    for (const HloInstruction* i : comp->instructions()) {
      for (const HloComputation* callee : i->called_computations()) {
        n += callee == c;
      }
    }
  }
  return n;
}

bool Eligible(const HloModule& m, const HloInstruction& s) {
  if (s.opcode() != HloOpcode::kSort || s.operand_count() < 2 ||
      s.called_computations().size() != 1 || s.user_count() == 0 ||
      s.parent()->root_instruction() == &s) {
    return false;
  }
  for (const HloInstruction* u : s.users()) {
    if (u->opcode() != HloOpcode::kGetTupleElement) return false;
  }
  const HloComputation* cmp = s.to_apply();
  return cmp->num_parameters() == 2 * s.operand_count() &&
         CallSites(m, cmp) == 1;
}

bool Unused(const HloComputation& c, int64_t p) {
  const HloInstruction* i = c.parameter_instruction(p);
  return i != nullptr && i->user_count() == 0 && i != c.root_instruction();
}

// A copy of `cmp` without the parameters of the operands in `drop`
// (renumbered), under cmp's name; cmp is renamed out of the way.
HloComputation* ComparatorWithout(EditableCase& e, HloComputation* cmp,
                                  const std::set<int64_t>& drop) {
  const std::string name = cmp->name();
  cmp->set_name(FreshName(e, name + ".old"));
  auto out = std::make_unique<HloComputation>(name);
  std::map<const HloInstruction*, HloInstruction*> map;
  int64_t number = 0;
  for (int64_t p = 0; p < cmp->num_parameters(); ++p) {
    const HloInstruction* i = cmp->parameter_instruction(p);
    if (drop.count(p / 2)) continue;
    map[i] = out->AddInstruction(
        HloInstruction::CreateParameter(number++, i->shape(), i->name()));
  }
  for (const HloInstruction* i : cmp->MakeInstructionPostOrder()) {
    if (i->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> ops;
    for (const HloInstruction* o : i->operands()) ops.push_back(map.at(o));
    std::unique_ptr<HloInstruction> clone = i->CloneWithOperands(ops, "");
    clone->set_name(i->name());
    map[i] = out->AddInstruction(std::move(clone));
  }
  out->set_root_instruction(map.at(cmp->root_instruction()));
  return e.module->AddComputation(std::move(out));
}

// Replaces `s` by a sort without the operands in `drop`.
void DropOperands(EditableCase& e, HloInstruction* s,
                  const std::set<int64_t>& drop) {
  HloComputation* cmp = ComparatorWithout(e, s->to_apply(), drop);
  std::vector<HloInstruction*> kept;
  std::vector<Shape> shapes;
  std::map<int64_t, int64_t> index;  // Old operand index -> new.
  for (int64_t k = 0; k < s->operand_count(); ++k) {
    if (drop.count(k)) continue;
    index[k] = static_cast<int64_t>(kept.size());
    kept.push_back(s->operand(k));
    shapes.push_back(s->operand(k)->shape());
  }
  std::unique_ptr<HloInstruction> clone = s->CloneWithOperands(kept, "");
  const std::string name = s->name();
  s->set_name(FreshName(e, name + ".old"));
  clone->set_name(name);
  clone->set_shape(kept.size() == 1 ? shapes[0]
                                    : Shape::Tuple(std::move(shapes)));
  clone->set_called_computation(0, cmp);
  HloInstruction* sorted = s->parent()->AddInstruction(std::move(clone));
  const std::vector<HloInstruction*> users = s->users();
  for (HloInstruction* u : users) {
    const int64_t k = u->tuple_index();
    if (drop.count(k)) {
      u->ReplaceAllUsesWith(s->operand(k));
    } else if (kept.size() == 1) {
      u->ReplaceAllUsesWith(sorted);
    } else {
      u->ReplaceOperandWith(0, sorted);
      u->mutable_attrs().tuple_index = index.at(k);
    }
  }
}

class SortOperandsPass : public OpportunityListPass<Opportunity> {
 public:
  SortOperandsPass()
      : OpportunityListPass(
            "sort-operands",
            "drop operands of a variadic sort its comparator does not "
            "read") {}

 private:
  std::vector<Opportunity> Opportunities(const hlo_diff::Case&,
                                         const EditableCase& e) const final {
    std::vector<Opportunity> out;
    for (const HloComputation* comp : e.module->computations()) {
      for (HloInstruction* i : comp->MakeInstructionPostOrder()) {
        if (!Eligible(*e.module, *i)) continue;
        for (int64_t k = 0; k < i->operand_count(); ++k) {
          if (Unused(*i->to_apply(), 2 * k) &&
              Unused(*i->to_apply(), 2 * k + 1)) {
            out.push_back({i, k});
          }
        }
      }
    }
    return out;
  }

  StatusOr<hlo_diff::Case> ApplyChosen(
      const hlo_diff::Case& c, EditableCase& e,
      const std::vector<Opportunity>& chosen) const final {
    std::vector<std::pair<HloInstruction*, std::set<int64_t>>> sorts;
    for (const Opportunity& o : chosen) {
      if (sorts.empty() || sorts.back().first != o.sort) {
        sorts.push_back({o.sort, {}});
      }
      sorts.back().second.insert(o.operand);
    }
    for (auto& [s, drop] : sorts) {
      if (static_cast<int64_t>(drop.size()) == s->operand_count()) {
        return FailedPrecondition("sort-operands: every operand of %" +
                                  s->name() + " chosen");
      }
    }
    for (auto& [s, drop] : sorts) DropOperands(e, s, drop);
    return FinishCase(e, c);
  }
};

}  // namespace

std::unique_ptr<ReductionPass> MakeSortOperandsPass() {
  return std::make_unique<SortOperandsPass>();
}

}  // namespace trench::hlo_reduce
