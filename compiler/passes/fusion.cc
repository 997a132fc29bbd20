#include "compiler/passes/fusion.h"

#include <algorithm>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/opcode.h"
#include "compiler/passes/fusion_support.h"
#include "compiler/passes/pass_util.h"

namespace trench {
namespace {

constexpr char kPass[] = "fusion";

const char* KindSite(FusionKind k) {
  switch (k) {
    case FusionKind::kInput:
      return "input";
    case FusionKind::kOutput:
      return "output";
    default:
      return "loop";
  }
}

// A fusion being formed. `owned` members move into the fusion (all their
// users are members); `copied` members are cheap and are cloned into it
// while the original stays for users outside.
struct Group {
  std::set<HloInstruction*> owned;
  std::set<HloInstruction*> copied;
  std::vector<HloInstruction*> roots;
  bool alive = true;
  bool formed = false;  // Allowed by a rewrite decision (or merged).

  bool Has(const HloInstruction* i) const {
    return owned.count(const_cast<HloInstruction*>(i)) ||
           copied.count(const_cast<HloInstruction*>(i));
  }
  size_t size() const { return owned.size() + copied.size(); }
};

class Fuser {
 public:
  Fuser(HloModule* module, PassContext* ctx)
      : module_(module), entry_(module->entry_computation()), ctx_(ctx) {
    order_ = entry_->MakeInstructionPostOrder();
    for (size_t i = 0; i < order_.size(); ++i) index_[order_[i]] = i;
  }

  StatusOr<bool> Run() {
    FormConsumerFusions();
    FormMultiOutputFusions();
    bool changed = false;
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (!groups_[g].alive || !groups_[g].formed) continue;
      RETURN_IF_ERROR(Materialize(groups_[g]));
      changed = true;
    }
    return changed;
  }

 private:
  static bool Cheap(const HloInstruction* i) {
    const FusedOpClass c = ClassifyFusedOp(*i);
    return c == FusedOpClass::kConstant || c == FusedOpClass::kIota ||
           i->opcode() == HloOpcode::kBroadcast;
  }

  static bool Seed(const HloInstruction* i) {
    const FusedOpClass c = ClassifyFusedOp(*i);
    return c == FusedOpClass::kElementwise || c == FusedOpClass::kReduce;
  }

  std::vector<const HloInstruction*> Members(const Group& g) const {
    std::vector<const HloInstruction*> m(g.owned.begin(), g.owned.end());
    m.insert(m.end(), g.copied.begin(), g.copied.end());
    std::sort(m.begin(), m.end(),
              [&](auto* a, auto* b) { return index_.at(a) < index_.at(b); });
    return m;
  }

  StatusOr<FusionSpec> Analyze(const Group& g) const {
    std::vector<const HloInstruction*> roots(g.roots.begin(), g.roots.end());
    return AnalyzeFusion(Members(g), roots);
  }

  int Owner(const HloInstruction* i) const {
    auto it = owner_.find(i);
    return it == owner_.end() ? -1 : it->second;
  }

  // Pulls producers into group `gi` while the predicate accepts them.
  void Grow(int gi) {
    for (bool changed = true; changed;) {
      changed = false;
      Group& g = groups_[gi];
      std::vector<HloInstruction*> members(g.owned.begin(), g.owned.end());
      members.insert(members.end(), g.copied.begin(), g.copied.end());
      for (HloInstruction* m : members) {
        for (HloInstruction* p : m->operands()) {
          if (g.Has(p) || p->opcode() == HloOpcode::kParameter) continue;
          // A producer may leave a single-op group nobody formed.
          const int o = Owner(p);
          if (o >= 0 && (groups_[o].formed || groups_[o].size() != 1)) {
            continue;
          }
          const FusedOpClass c = ClassifyFusedOp(*p);
          if (c == FusedOpClass::kUnsupported || c == FusedOpClass::kReduce) {
            continue;
          }
          bool all_inside = p != entry_->root_instruction();
          for (const HloInstruction* u : p->users()) {
            all_inside &= Owner(u) == gi;
          }
          if (!all_inside && !Cheap(p)) continue;
          (all_inside ? g.owned : g.copied).insert(p);
          if (!Analyze(g).ok()) {
            g.owned.erase(p);
            g.copied.erase(p);
            continue;
          }
          if (all_inside) {
            if (o >= 0) groups_[o].alive = false;
            owner_[p] = gi;
          } else if (o >= 0) {
            g.copied.erase(p);  // Still its own group's seed.
            continue;
          }
          changed = true;
        }
      }
    }
  }

  void FormConsumerFusions() {
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      HloInstruction* c = *it;
      if (Owner(c) >= 0 || !Seed(c)) continue;
      if (c->user_count() == 0 && c != entry_->root_instruction()) continue;
      Group g;
      g.owned.insert(c);
      g.roots.push_back(c);
      if (!Analyze(g).ok()) continue;
      const int gi = static_cast<int>(groups_.size());
      groups_.push_back(std::move(g));
      owner_[c] = gi;
      Grow(gi);
      Group& grown = groups_[gi];
      if (grown.size() < 2) continue;  // A single op: nothing fused yet.
      auto spec = Analyze(grown);
      if (spec.ok() &&
          ctx_->ShouldRewrite(kPass, KindSite(spec->kind), c->name())) {
        grown.formed = true;
        continue;
      }
      // Not allowed: the producers are free again; the seed stays a
      // single-op group (a multi-output candidate).
      for (HloInstruction* m : grown.owned) {
        if (m != c) owner_.erase(m);
      }
      grown.owned = {c};
      grown.copied.clear();
    }
  }

  // True if some path leaves the union of groups a and b and re-enters it
  // (merging would create a cycle).
  bool PathThroughOutside(const Group& a, const Group& b) const {
    auto in = [&](const HloInstruction* i) { return a.Has(i) || b.Has(i); };
    std::vector<const HloInstruction*> stack;
    std::unordered_set<const HloInstruction*> seen;
    for (const Group* g : {&a, &b}) {
      for (const HloInstruction* m : g->owned) {
        for (const HloInstruction* u : m->users()) {
          if (!in(u)) stack.push_back(u);
        }
      }
    }
    while (!stack.empty()) {
      const HloInstruction* x = stack.back();
      stack.pop_back();
      if (!seen.insert(x).second) continue;
      for (const HloInstruction* u : x->users()) {
        if (in(u)) return true;
        stack.push_back(u);
      }
    }
    return false;
  }

  // The members of `g` whose values are used outside it.
  std::vector<HloInstruction*> RootsOf(const Group& g) const {
    std::vector<HloInstruction*> roots;
    for (const HloInstruction* m : Members(g)) {
      HloInstruction* mm = const_cast<HloInstruction*>(m);
      if (!g.owned.count(mm)) continue;
      bool outside = mm == entry_->root_instruction();
      for (const HloInstruction* u : mm->users()) outside |= !g.Has(u);
      if (outside) roots.push_back(mm);
    }
    return roots;
  }

  bool TryMerge(int ai, int bi, const HloInstruction* shared) {
    Group& a = groups_[ai];
    Group& b = groups_[bi];
    if (PathThroughOutside(a, b)) return false;
    Group m;
    m.owned = a.owned;
    m.owned.insert(b.owned.begin(), b.owned.end());
    for (const Group* g : {&a, &b}) {
      for (HloInstruction* c : g->copied) {
        if (!m.owned.count(c)) m.copied.insert(c);
      }
    }
    m.roots = RootsOf(m);
    if (m.roots.size() < 2 || !Analyze(m).ok()) return false;
    if (!ctx_->ShouldRewrite(kPass, "multi-output", shared->name())) {
      return false;
    }
    m.formed = true;
    for (HloInstruction* x : m.owned) owner_[x] = ai;
    b.alive = false;
    a = std::move(m);
    Grow(ai);
    groups_[ai].roots = RootsOf(groups_[ai]);
    return true;
  }

  void FormMultiOutputFusions() {
    for (HloInstruction* x : order_) {
      // Sharing a splat or an iota saves nothing.
      if (Cheap(x) && x->opcode() != HloOpcode::kParameter) continue;
      std::vector<int> candidates;
      for (const HloInstruction* u : x->users()) {
        const int g = Owner(u);
        if (g < 0 || !groups_[g].alive || groups_[g].Has(x)) continue;
        if (std::find(candidates.begin(), candidates.end(), g) ==
            candidates.end()) {
          candidates.push_back(g);
        }
      }
      if (candidates.size() < 2) continue;
      const int base = candidates[0];
      for (size_t k = 1; k < candidates.size(); ++k) {
        if (groups_[candidates[k]].alive) TryMerge(base, candidates[k], x);
      }
    }
  }

  std::string ComputationName(const std::string& base) {
    std::string name = base;
    for (int n = 1; module_->GetComputationWithName(name) != nullptr; ++n) {
      name = base + "." + std::to_string(n);
    }
    return name;
  }

  Status Materialize(Group& g) {
    if (names_ == nullptr) names_ = std::make_unique<NameUniquer>(*module_);
    g.roots = RootsOf(g);
    ASSIGN_OR_RETURN(FusionSpec spec, Analyze(g));
    std::vector<const HloInstruction*> members = Members(g);
    auto comp =
        std::make_unique<HloComputation>(ComputationName("fused_computation"));
    std::unordered_map<const HloInstruction*, HloInstruction*> map;
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* m : members) {
      std::vector<HloInstruction*> ops;
      for (HloInstruction* o : m->operands()) {
        if (!map.count(o)) {
          const int64_t n = static_cast<int64_t>(operands.size());
          operands.push_back(o);
          map[o] = comp->AddInstruction(HloInstruction::CreateParameter(
              n, o->shape(), names_->Get("param_" + std::to_string(n))));
        }
        ops.push_back(map.at(o));
      }
      auto clone = m->CloneWithOperands(std::move(ops), "");
      if (g.copied.count(const_cast<HloInstruction*>(m))) {
        clone->set_name(names_->Get(m->name()));
      }
      map[m] = comp->AddInstruction(std::move(clone));
    }
    Shape shape;
    if (g.roots.size() == 1) {
      shape = g.roots[0]->shape();
      comp->set_root_instruction(map.at(g.roots[0]));
    } else {
      std::vector<Shape> shapes;
      std::vector<HloInstruction*> outs;
      for (const HloInstruction* r : g.roots) {
        shapes.push_back(r->shape());
        outs.push_back(map.at(r));
      }
      shape = Shape::Tuple(shapes);
      comp->set_root_instruction(comp->AddInstruction(HloInstruction::Create(
          HloOpcode::kTuple, shape, outs, names_->Get("tuple"))));
    }
    HloComputation* fused = module_->AddComputation(std::move(comp));
    auto f = HloInstruction::Create(HloOpcode::kFusion, shape, operands,
                                    names_->Get("fusion"));
    f->mutable_attrs().fusion_kind = spec.kind;
    f->AddCalledComputation(fused);
    HloInstruction* fusion = entry_->AddInstruction(std::move(f));
    fused->set_fusion_instruction(fusion);
    for (size_t i = 0; i < g.roots.size(); ++i) {
      HloInstruction* r = g.roots[i];
      HloInstruction* repl = fusion;
      if (g.roots.size() > 1) {
        auto gte =
            HloInstruction::Create(HloOpcode::kGetTupleElement, r->shape(),
                                   {fusion}, names_->Get("get-tuple-element"));
        gte->mutable_attrs().tuple_index = static_cast<int64_t>(i);
        repl = entry_->AddInstruction(std::move(gte));
      }
      std::vector<HloInstruction*> users = r->users();
      for (HloInstruction* u : users) {
        if (g.owned.count(u)) continue;
        for (int64_t j = 0; j < u->operand_count(); ++j) {
          if (u->operand(j) == r) u->ReplaceOperandWith(j, repl);
        }
      }
      if (entry_->root_instruction() == r) entry_->set_root_instruction(repl);
    }
    for (auto it = members.rbegin(); it != members.rend(); ++it) {
      HloInstruction* m = const_cast<HloInstruction*>(*it);
      if (g.owned.count(m)) {
        RETURN_IF_ERROR(entry_->RemoveInstruction(m));
      } else if (m->user_count() == 0 && m != entry_->root_instruction()) {
        RETURN_IF_ERROR(entry_->RemoveInstruction(m));  // A dead copy.
      }
    }
    return Status::Ok();
  }

  HloModule* module_;
  HloComputation* entry_;
  PassContext* ctx_;
  std::vector<HloInstruction*> order_;
  std::unordered_map<const HloInstruction*, size_t> index_;
  std::vector<Group> groups_;
  std::unordered_map<const HloInstruction*, int> owner_;
  std::unique_ptr<NameUniquer> names_;
};

}  // namespace

StatusOr<bool> FusionPass::Run(HloModule* module, PassContext* ctx) {
  if (module->entry_computation() == nullptr) return false;
  Fuser fuser(module, ctx);
  return fuser.Run();
}

}  // namespace trench
