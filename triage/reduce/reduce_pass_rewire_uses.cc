// rewire-uses: uses of a value go to ANOTHER existing value of the same
// shape in the same computation (remove-instructions only offers a value's
// own operands). Per computation (module order), with depth(v) = 0 for
// leaves and 1 + the largest depth of v's operands (and control
// predecessors) otherwise, in post order:
//   1. per used instruction x (not a parameter of a called computation):
//      "replace x by v" for up to kMaxPerSite values v of x's array shape,
//      v not x's operand, depth(v) <= depth(x) (so v cannot depend on x),
//      shallowest first. x and whatever only it used go.
//   2. per operand o of an instruction u: "operand o of u becomes v" for up
//      to kMaxPerSite values v of the operand's array shape with
//      depth(operand) < depth(v) <= depth(u), v != u (so v cannot depend
//      on u), deepest first. The old operand goes when that was its last
//      use.
// Well-founded: 1 removes an instruction; 2 removes one or keeps their
// number and strictly lowers the sum over operand edges of (instructions -
// depth(operand)) (depths only grow), so no sequence of steps undoes one.
// Combinations: applied in order; the first chosen for an x or a use wins;
// a later one that would now make a cycle (or touches a replaced
// instruction) is skipped; a replaced value's replacement stands in for it.
#include <algorithm>
#include <set>
#include <string>

#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

inline constexpr int kMaxPerSite = 2;

struct Opportunity {
  HloInstruction* site;  // 1: the replaced x; 2: the user u.
  int64_t operand;       // 2: u's operand index; 1: -1.
  HloInstruction* with;  // v.
};

std::vector<Opportunity> RewireOpportunities(const HloModule& m) {
  std::vector<Opportunity> out;
  const HloComputation* entry = m.entry_computation();
  for (const HloComputation* comp : m.computations()) {
    const std::vector<HloInstruction*> order = comp->MakeInstructionPostOrder();
    std::unordered_map<const HloInstruction*, int64_t> depth;
    for (HloInstruction* i : order) {
      int64_t d = -1;
      for (const HloInstruction* o : i->operands()) d = std::max(d, depth[o]);
      for (const HloInstruction* o : i->control_predecessors()) {
        d = std::max(d, depth[o]);
      }
      depth[i] = d + 1;
    }
    // Candidate values: arrays, bucketed by shape, by depth then post
    // order within a bucket.
    std::unordered_map<std::string, std::vector<HloInstruction*>> buckets;
    for (HloInstruction* i : order) {
      if (i->shape().IsArray())
        buckets[i->shape().ToString(false)].push_back(i);
    }
    for (auto& [key, values] : buckets) {
      std::stable_sort(values.begin(), values.end(),
                       [&](const HloInstruction* a, const HloInstruction* b) {
                         return depth[a] < depth[b];
                       });
    }
    auto bucket = [&](const Shape& s) -> const std::vector<HloInstruction*>& {
      static const std::vector<HloInstruction*> kNone;
      auto it = buckets.find(s.ToString(false));
      return it == buckets.end() ? kNone : it->second;
    };
    for (HloInstruction* x : order) {
      const bool used = x->user_count() > 0 || x == comp->root_instruction();
      if (!used || !x->shape().IsArray() ||
          (x->opcode() == HloOpcode::kParameter && comp != entry)) {
        continue;
      }
      int found = 0;
      for (HloInstruction* v : bucket(x->shape())) {
        if (found == kMaxPerSite || depth[v] > depth[x]) break;
        const auto& ops = x->operands();
        if (v == x || !v->shape().Compatible(x->shape()) ||
            std::find(ops.begin(), ops.end(), v) != ops.end()) {
          continue;
        }
        out.push_back({x, -1, v});
        ++found;
      }
    }
    for (HloInstruction* u : order) {
      for (int64_t o = 0; o < u->operand_count(); ++o) {
        const HloInstruction* w = u->operand(o);
        if (!w->shape().IsArray()) continue;
        const std::vector<HloInstruction*>& values = bucket(w->shape());
        // Deepest first, from the last value with depth <= depth(u).
        auto it = std::upper_bound(
            values.begin(), values.end(), depth[u],
            [&](int64_t d, const HloInstruction* v) { return d < depth[v]; });
        int found = 0;
        while (it != values.begin() && found < kMaxPerSite) {
          HloInstruction* v = *--it;
          if (depth[v] <= depth[w]) break;
          if (v == u || !v->shape().Compatible(w->shape())) continue;
          out.push_back({u, o, v});
          ++found;
        }
      }
    }
  }
  return out;
}

// True when `a` is `b` or depends on it (operands, control predecessors).
bool DependsOn(const HloInstruction* a, const HloInstruction* b) {
  std::vector<const HloInstruction*> stack = {a};
  std::unordered_set<const HloInstruction*> seen = {a};
  while (!stack.empty()) {
    const HloInstruction* i = stack.back();
    stack.pop_back();
    if (i == b) return true;
    auto push = [&](const HloInstruction* o) {
      if (seen.insert(o).second) stack.push_back(o);
    };
    for (const HloInstruction* o : i->operands()) push(o);
    for (const HloInstruction* o : i->control_predecessors()) push(o);
  }
  return false;
}

class RewireUsesPass : public OpportunityListPass<Opportunity> {
 public:
  RewireUsesPass()
      : OpportunityListPass(
            "rewire-uses",
            "replace a value, or one use of it, by another existing value "
            "of the same shape") {}

 private:
  std::vector<Opportunity> Opportunities(const hlo_diff::Case&,
                                         const EditableCase& e) const override {
    return RewireOpportunities(*e.module);
  }

  StatusOr<hlo_diff::Case> ApplyChosen(
      const hlo_diff::Case& c, EditableCase& e,
      const std::vector<Opportunity>& chosen) const override {
    std::unordered_map<const HloInstruction*, HloInstruction*> replaced;
    auto resolve = [&](HloInstruction* v) {
      for (auto it = replaced.find(v); it != replaced.end();
           it = replaced.find(v)) {
        v = it->second;
      }
      return v;
    };
    std::vector<HloInstruction*> gone;
    std::set<std::pair<const HloInstruction*, int64_t>> rewired;
    for (const Opportunity& op : chosen) {
      HloInstruction* site = op.site;
      if (replaced.contains(site)) continue;  // First wins.
      HloInstruction* with = resolve(op.with);
      if (op.operand >= 0) {
        if (!rewired.insert({site, op.operand}).second ||  // First wins.
            site->operand(op.operand) == with || DependsOn(with, site)) {
          continue;
        }
        site->ReplaceOperandWith(op.operand, with);
        continue;
      }
      if (DependsOn(with, site)) continue;
      site->ReplaceAllUsesWith(with);
      HloComputation* comp = site->parent();
      if (comp->root_instruction() == site) comp->set_root_instruction(with);
      replaced[site] = with;
      gone.push_back(site);
    }
    return FinishCase(e, c, gone);
  }
};

}  // namespace

std::unique_ptr<ReductionPass> MakeRewireUsesPass() {
  return std::make_unique<RewireUsesPass>();
}

}  // namespace trench::hlo_reduce
