// inline-calls and unfuse: called computations go away.
//
// inline-calls, per instruction (computations in module order, post order):
//   call        -> 1 opportunity: inline the callee;
//   conditional -> one per branch b: the conditional becomes branch b
//                  inlined on its operand (the predicate/index goes);
//   while       -> 2: "remove" (its value becomes the init operand; the
//                  loop runs zero times) and "body once" (the body inlined
//                  on the init);
// then one per computation that nothing reaches from the entry: remove it.
// When several opportunities of one instruction are chosen, the first
// wins.
// unfuse: per fusion, inline its fused computation.
#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

struct Opportunity {
  HloInstruction* site = nullptr;  // Null: remove `computation`.
  int64_t variant = 0;             // Branch, or 0 remove / 1 body (while).
  std::string computation;
};

std::vector<Opportunity> CallOpportunities(const EditableCase& e,
                                           bool fusions) {
  std::vector<Opportunity> out;
  for (const HloComputation* comp : e.module->computations()) {
    for (HloInstruction* i : comp->MakeInstructionPostOrder()) {
      const int64_t n = static_cast<int64_t>(i->called_computations().size());
      if (fusions) {
        if (i->opcode() == HloOpcode::kFusion && n == 1)
          out.push_back({i, 0, ""});
        continue;
      }
      if (i->opcode() == HloOpcode::kCall && n == 1) out.push_back({i, 0, ""});
      if (i->opcode() == HloOpcode::kConditional &&
          i->operand_count() == n + 1) {
        for (int64_t b = 0; b < n; ++b) out.push_back({i, b, ""});
      }
      if (i->opcode() == HloOpcode::kWhile && n == 2 &&
          i->operand_count() == 1) {
        out.push_back({i, 0, ""});
        out.push_back({i, 1, ""});
      }
    }
  }
  if (!fusions) {
    for (const HloComputation* comp : e.module->computations()) {
      if (e.dead_computations.count(comp->name())) {
        out.push_back({nullptr, 0, comp->name()});
      }
    }
  }
  return out;
}

// The value replacing `o.site`.
HloInstruction* Replacement(EditableCase& e, const Opportunity& o) {
  HloInstruction* site = o.site;
  switch (site->opcode()) {
    case HloOpcode::kConditional:
      return InlineComputation(e, site, *site->called_computations()[o.variant],
                               {site->operand(o.variant + 1)});
    case HloOpcode::kWhile:
      if (o.variant == 0) return site->operand(0);
      return InlineComputation(e, site, *site->while_body(),
                               {site->operand(0)});
    default:  // call, fusion
      return InlineComputation(e, site, *site->called_computations()[0],
                               site->operands());
  }
}

class CallsPass : public OpportunityListPass<Opportunity> {
 public:
  explicit CallsPass(bool fusions)
      : OpportunityListPass(
            fusions ? "unfuse" : "inline-calls",
            fusions ? "inline fused computations (unfuse)"
                    : "inline calls, conditionals to one branch, while to its "
                      "init or one body, remove unreachable computations"),
        fusions_(fusions) {}

 private:
  std::vector<Opportunity> Opportunities(const hlo_diff::Case&,
                                         const EditableCase& e) const override {
    return CallOpportunities(e, fusions_);
  }

  StatusOr<hlo_diff::Case> ApplyChosen(
      const hlo_diff::Case& c, EditableCase& e,
      const std::vector<Opportunity>& chosen) const override {
    std::vector<HloInstruction*> gone;
    for (const Opportunity& o : chosen) {
      if (o.site == nullptr) {
        e.dead_computations.erase(o.computation);
        continue;
      }
      if (!gone.empty() && gone.back() == o.site) continue;  // First wins.
      HloInstruction* with = Replacement(e, o);
      HloComputation* comp = o.site->parent();
      o.site->ReplaceAllUsesWith(with);
      if (comp->root_instruction() == o.site) comp->set_root_instruction(with);
      gone.push_back(o.site);
    }
    return FinishCase(e, c, gone);
  }

  bool fusions_;
};

}  // namespace

std::unique_ptr<ReductionPass> MakeInlineCallsPass() {
  return std::make_unique<CallsPass>(false);
}
std::unique_ptr<ReductionPass> MakeUnfusePass() {
  return std::make_unique<CallsPass>(true);
}

}  // namespace trench::hlo_reduce
