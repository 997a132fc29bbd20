// remove-outputs: opportunity i drops element i of the entry's tuple-shaped
// root. The root becomes the remaining elements (a tuple of them, or the
// one left itself); what only the dropped outputs used goes too. A root
// tuple of one element has one opportunity: the root becomes the element.
#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

// Opportunity: the index of the output to drop.
class RemoveOutputsPass : public OpportunityListPass<int64_t> {
 public:
  RemoveOutputsPass()
      : OpportunityListPass("remove-outputs",
                            "drop elements of the entry's tuple root") {}

 private:
  std::vector<int64_t> Opportunities(const hlo_diff::Case&,
                                     const EditableCase& e) const override {
    const Shape& s = e.module->entry_computation()->root_instruction()->shape();
    std::vector<int64_t> out(s.IsTuple() ? s.tuple_size() : 0);
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(i);
    return out;
  }

  StatusOr<hlo_diff::Case> ApplyChosen(
      const hlo_diff::Case& c, EditableCase& e,
      const std::vector<int64_t>& chosen) const override {
    HloComputation* entry = e.module->entry_computation();
    HloInstruction* root = entry->root_instruction();
    const int64_t n = root->shape().IsTuple() ? root->shape().tuple_size() : 0;
    if (n > 1 && static_cast<int64_t>(chosen.size()) == n) {
      return FailedPrecondition("remove-outputs: cannot drop every output");
    }
    // A tuple of one element: its one opportunity unwraps it.
    const size_t dropped = n == 1 ? 0 : chosen.size();
    std::vector<HloInstruction*> kept;
    size_t next = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (next < dropped && chosen[next] == i) {
        ++next;
        continue;
      }
      if (root->opcode() == HloOpcode::kTuple) {
        kept.push_back(root->operand(i));
      } else {
        auto gte = HloInstruction::Create(
            HloOpcode::kGetTupleElement, root->shape().tuple_shape(i), {root},
            FreshName(e, root->name() + ".output"));
        gte->mutable_attrs().tuple_index = i;
        kept.push_back(entry->AddInstruction(std::move(gte)));
      }
    }
    HloInstruction* new_root;
    if (kept.size() == 1) {
      new_root = kept[0];
    } else {
      std::vector<Shape> shapes;
      for (const HloInstruction* k : kept) shapes.push_back(k->shape());
      new_root = entry->AddInstruction(HloInstruction::Create(
          HloOpcode::kTuple, Shape::Tuple(std::move(shapes)), kept,
          FreshName(e, "outputs")));
    }
    entry->set_root_instruction(new_root);
    return FinishCase(e, c);
  }
};

}  // namespace

std::unique_ptr<ReductionPass> MakeRemoveOutputsPass() {
  return std::make_unique<RemoveOutputsPass>();
}

}  // namespace trench::hlo_reduce
