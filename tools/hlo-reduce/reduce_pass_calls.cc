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
#include "tools/hlo-reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

struct Opportunity {
  HloInstruction* site = nullptr;  // Null: remove `computation`.
  int64_t variant = 0;             // Branch, or 0 remove / 1 body (while).
  std::string computation;
};

std::vector<Opportunity> Opportunities(const EditableCase& e, bool fusions) {
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

class CallsPass : public ReductionPass {
 public:
  explicit CallsPass(bool fusions) : fusions_(fusions) {}
  std::string_view name() const override {
    return fusions_ ? "unfuse" : "inline-calls";
  }
  std::string_view description() const override {
    return fusions_ ? "inline fused computations (unfuse)"
                    : "inline calls, conditionals to one branch, while to its "
                      "init or one body, remove unreachable computations";
  }

  int64_t Count(const hlo_diff::Case& c) const override {
    StatusOr<EditableCase> e = OpenCase(c);
    return e.ok() ? static_cast<int64_t>(Opportunities(*e, fusions_).size())
                  : 0;
  }

  StatusOr<hlo_diff::Case> Apply(
      const hlo_diff::Case& c, std::span<const int64_t> chosen) const override {
    ASSIGN_OR_RETURN(EditableCase e, OpenCase(c));
    const std::vector<Opportunity> ops = Opportunities(e, fusions_);
    RETURN_IF_ERROR(CheckChosen(chosen, static_cast<int64_t>(ops.size())));
    std::vector<HloInstruction*> gone;
    for (int64_t k : chosen) {
      const Opportunity& o = ops[k];
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

 private:
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
