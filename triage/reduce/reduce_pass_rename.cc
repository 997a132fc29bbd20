// rename: shorter names, so that the reduced module reads (and weighs)
// like a hand-written one. Opportunities, each offered only while it
// changes something (so no step can be undone and the pass ends):
//   0  the module's name becomes "m";
//   1  the computations become "main" (the entry) and c0, c1, ... (module
//      order);
//   2  the instructions become a, b, ..., z, aa, ab, ... (computations in
//      module order, instructions in post order): the shortest names
//      (letters only, so never a type like f32), as a text reducer that
//      shortens identifiers ends with.
// Names are only labels: operands, called computations and control edges
// are printed from the graph, so behaviour never changes.
#include <string>
#include <unordered_set>
#include <vector>

#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

std::vector<HloComputation*> Computations(HloModule& m) {
  return m.computations();
}

// The i-th name of a, b, ..., z, aa, ab, ... (bijective base 26).
std::string InstructionName(size_t i) {
  std::string name;
  for (size_t n = i + 1; n > 0; n = (n - 1) / 26) {
    name.insert(name.begin(), static_cast<char>('a' + (n - 1) % 26));
  }
  return name;
}

// The canonical computation names, in module order.
std::vector<std::string> ComputationNames(HloModule& m) {
  std::vector<std::string> names;
  int64_t k = 0;
  for (HloComputation* c : Computations(m)) {
    names.push_back(c == m.entry_computation() ? std::string("main")
                                               : "c" + std::to_string(k++));
  }
  return names;
}

// Instructions in the order they are renamed.
std::vector<HloInstruction*> Instructions(HloModule& m) {
  std::vector<HloInstruction*> out;
  for (HloComputation* c : Computations(m)) {
    for (HloInstruction* i : c->MakeInstructionPostOrder()) out.push_back(i);
  }
  return out;
}

// Which of the three opportunities would change `m` (in order).
std::vector<int> Offered(HloModule& m) {
  std::vector<int> offered;
  if (m.name() != "m") offered.push_back(0);
  const std::vector<std::string> cn = ComputationNames(m);
  const std::vector<HloComputation*> comps = Computations(m);
  for (size_t i = 0; i < comps.size(); ++i) {
    if (comps[i]->name() != cn[i]) {
      offered.push_back(1);
      break;
    }
  }
  const std::vector<HloInstruction*> instrs = Instructions(m);
  for (size_t i = 0; i < instrs.size(); ++i) {
    if (instrs[i]->name() != InstructionName(i)) {
      offered.push_back(2);
      break;
    }
  }
  return offered;
}

class RenamePass : public OpportunityListPass<int> {
 public:
  RenamePass()
      : OpportunityListPass(
            "rename",
            "short names: module m, computations main/c0.., instructions "
            "a, b, ..") {}

 private:
  std::vector<int> Opportunities(const hlo_diff::Case&,
                                 const EditableCase& e) const override {
    return Offered(*e.module);
  }

  StatusOr<hlo_diff::Case> ApplyChosen(
      const hlo_diff::Case& c, EditableCase& e,
      const std::vector<int>& chosen) const override {
    HloModule& m = *e.module;
    for (int k : chosen) {
      switch (k) {
        case 0:
          m.set_name("m");
          break;
        case 1: {
          const std::vector<std::string> names = ComputationNames(m);
          const std::vector<HloComputation*> comps = Computations(m);
          std::unordered_set<std::string> dead;
          for (size_t i = 0; i < comps.size(); ++i) {
            if (e.dead_computations.count(comps[i]->name())) {
              dead.insert(names[i]);
            }
            comps[i]->set_name(names[i]);
          }
          e.dead_computations = std::move(dead);
          break;
        }
        default: {
          // FinishCase knows what was dead by name: carry that over.
          const std::vector<HloInstruction*> instrs = Instructions(m);
          std::unordered_set<std::string> dead;
          e.names.clear();
          for (size_t i = 0; i < instrs.size(); ++i) {
            const std::string name = InstructionName(i);
            if (e.dead_instructions.count(instrs[i]->name())) dead.insert(name);
            instrs[i]->set_name(name);
            e.names.insert(name);
          }
          e.dead_instructions = std::move(dead);
          break;
        }
      }
    }
    return FinishCase(e, c);
  }
};

}  // namespace

std::unique_ptr<ReductionPass> MakeRenamePass() {
  return std::make_unique<RenamePass>();
}

}  // namespace trench::hlo_reduce
