// replace-subgraphs: cuts the subgraph computing an entry instruction off
// by replacing the instruction with its value, computed by the oracle on
// the case's inputs (zeros when the oracle cannot say):
//   * as a new entry parameter whose input is that value (on an SPMD
//     case, each device's own), or
//   * as a constant, for small arrays (at most kMaxConstantElements) that
//     every device has alike.
// Opportunities, per eligible instruction in post order: "by parameter",
// then "by constant" where offered; when both are chosen the constant wins.
// Everything only the instruction used goes with it.
#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

inline constexpr int64_t kMaxConstantElements = 16;

struct Opportunity {
  HloInstruction* instr;
  bool constant;
};

std::vector<Opportunity> SubgraphOpportunities(const HloModule& m,
                                               const ValueMap& values,
                                               int64_t devices) {
  std::vector<Opportunity> out;
  const HloComputation* entry = m.entry_computation();
  for (HloInstruction* i : entry->MakeInstructionPostOrder()) {
    const bool used = i->user_count() > 0 || i == entry->root_instruction();
    bool token = false;
    ForEachLeafShape(i->shape(),
                     [&](const Shape& s) { token = token || s.IsToken(); });
    if (!used || token || i->operand_count() == 0) continue;
    out.push_back({i, false});
    auto it = values.find(i->name());
    // A constant is the same on every device.
    if (it != values.end() && i->shape().IsArray() &&
        i->shape().element_count() <= kMaxConstantElements &&
        ConstantValue(it->second, devices) != nullptr) {
      out.push_back({i, true});
    }
  }
  return out;
}

class ReplaceSubgraphsPass : public OpportunityListPass<Opportunity> {
 public:
  ReplaceSubgraphsPass()
      : OpportunityListPass(
            "replace-subgraphs",
            "replace an entry instruction and what only it uses by its "
            "value (oracle), as a parameter or a small constant") {}

 private:
  std::vector<Opportunity> Opportunities(const hlo_diff::Case& c,
                                         const EditableCase& e) const override {
    return SubgraphOpportunities(*e.module, *OracleValues(c), e.devices);
  }

  StatusOr<hlo_diff::Case> ApplyChosen(
      const hlo_diff::Case& c, EditableCase& e,
      const std::vector<Opportunity>& chosen) const override {
    std::shared_ptr<const ValueMap> values = OracleValues(c);  // Cached.
    HloComputation* entry = e.module->entry_computation();
    std::vector<HloInstruction*> gone;
    for (size_t k = 0; k < chosen.size(); ++k) {
      const Opportunity& op = chosen[k];
      // "By parameter" directly followed by "by constant": the constant.
      if (!op.constant && k + 1 < chosen.size() &&
          chosen[k + 1].instr == op.instr) {
        continue;
      }
      HloInstruction* x = op.instr;
      auto it = values->find(x->name());
      HloInstruction* with;
      if (op.constant) {
        Literal value = *ConstantValue(it->second, e.devices);
        value.set_layout(x->shape().layout());
        with = entry->AddInstruction(HloInstruction::CreateConstant(
            std::move(value), FreshName(e, x->name() + ".value")));
        with->set_shape(x->shape());
      } else {
        with = AddEntryParameter(e, x->shape(), x->name() + ".value",
                                 it != values->end() ? LiteralLeaves(it->second)
                                                     : ZeroLeaves(x->shape()));
      }
      x->ReplaceAllUsesWith(with);
      if (entry->root_instruction() == x) entry->set_root_instruction(with);
      gone.push_back(x);
    }
    return FinishCase(e, c, gone);
  }
};

}  // namespace

std::unique_ptr<ReductionPass> MakeReplaceSubgraphsPass() {
  return std::make_unique<ReplaceSubgraphsPass>();
}

}  // namespace trench::hlo_reduce
