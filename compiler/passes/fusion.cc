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
          // A value another group copies stays for it: copy, never own.
          if (all_inside && CopiedByOther(p, gi)) all_inside = false;
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

  // True if some alive group other than `gi` copies `i`.
  bool CopiedByOther(const HloInstruction* i, int gi) const {
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (static_cast<int>(g) != gi && groups_[g].alive &&
          groups_[g].copied.count(const_cast<HloInstruction*>(i))) {
        return true;
      }
    }
    return false;
  }

  // Cycle check. The graph the module will have once every alive group is
  // a fusion: each alive group is one node; every other instruction
  // (including the originals of copied members, which stay for their
  // outside users) is its own node. Edges: operand -> user, where a user
  // owned by group H is node H, and a member copied into H also makes its
  // operands feed H; an edge whose operand is a member of the same group
  // is internal (no edge). Returns true if group `gi` lies on a cycle,
  // i.e. forming it would make the module fail verification ("fusion is
  // part of a cycle"): some path leaves the group and comes back through
  // an instruction outside it. This is the XLA condition checked before
  // (multi-output) fusion, applied to the contracted graph so that paths
  // through other fusions and through copied cheap ops count too.
  // Complexity: one DFS, O(V + E) of the module (each node and edge is
  // visited at most once), plus O(sum of copied-set sizes) to index the
  // copies; it runs once per merge candidate that passed AnalyzeFusion.
  bool OnCycle(int gi) const {
    const size_t ng = groups_.size();
    std::unordered_map<const HloInstruction*, std::vector<int>> copiers;
    for (size_t g = 0; g < ng; ++g) {
      if (!groups_[g].alive) continue;
      for (const HloInstruction* c : groups_[g].copied) {
        copiers[c].push_back(static_cast<int>(g));
      }
    }
    auto alive_owner = [&](const HloInstruction* x) {
      const int o = Owner(x);
      return o >= 0 && groups_[o].alive ? o : -1;
    };
    std::vector<char> seen(ng + order_.size(), 0);
    std::vector<size_t> stack;
    // Pushes the nodes that value `x` (an instruction) feeds.
    auto push_users = [&](const HloInstruction* x) {
      for (const HloInstruction* u : x->users()) {
        const int o = alive_owner(u);
        if (o >= 0) {
          if (!groups_[o].Has(x)) stack.push_back(static_cast<size_t>(o));
        } else {
          stack.push_back(ng + index_.at(u));
        }
        auto it = copiers.find(u);
        if (it == copiers.end()) continue;
        for (int h : it->second) {
          if (!groups_[h].Has(x)) stack.push_back(static_cast<size_t>(h));
        }
      }
    };
    for (const HloInstruction* m : groups_[gi].owned) push_users(m);
    while (!stack.empty()) {
      const size_t n = stack.back();
      stack.pop_back();
      if (n == static_cast<size_t>(gi)) return true;
      if (seen[n]) continue;
      seen[n] = 1;
      if (n < ng) {
        for (const HloInstruction* m : groups_[n].owned) push_users(m);
      } else {
        push_users(order_[n - ng]);
      }
    }
    return false;
  }

  // Whether the original of `c`, a member copied into `g`, stays after `g`
  // becomes a fusion: it is the entry root or has a user other than an
  // owned member or a copied member whose original goes.
  bool OriginalSurvives(const Group& g, const HloInstruction* c) const {
    if (c == entry_->root_instruction()) return true;
    for (const HloInstruction* u : c->users()) {
      HloInstruction* uu = const_cast<HloInstruction*>(u);
      if (g.owned.count(uu)) continue;
      if (g.copied.count(uu) && !OriginalSurvives(g, u)) continue;
      return true;
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
      for (const HloInstruction* u : mm->users()) {
        // A copied original that stays still reads this value.
        HloInstruction* uu = const_cast<HloInstruction*>(u);
        outside |= !g.owned.count(uu) &&
                   (!g.copied.count(uu) || OriginalSurvives(g, u));
      }
      if (outside) roots.push_back(mm);
    }
    return roots;
  }

  // Merges group `bi` into `ai` (a multi-output fusion reading `shared`)
  // if the result is a fusion AnalyzeFusion accepts, creates no cycle
  // (OnCycle) and the rewrite decision allows it.
  bool TryMerge(int ai, int bi, const HloInstruction* shared) {
    Group m;
    m.owned = groups_[ai].owned;
    m.owned.insert(groups_[bi].owned.begin(), groups_[bi].owned.end());
    for (const Group* g : {&groups_[ai], &groups_[bi]}) {
      for (HloInstruction* c : g->copied) {
        if (!m.owned.count(c)) m.copied.insert(c);
      }
    }
    m.roots = RootsOf(m);
    if (m.roots.size() < 2 || !Analyze(m).ok()) return false;
    // Install the merged group tentatively to check for cycles.
    Group saved_a = std::move(groups_[ai]);
    groups_[ai] = std::move(m);
    groups_[bi].alive = false;
    for (HloInstruction* x : groups_[bi].owned) owner_[x] = ai;
    if (OnCycle(ai) ||
        !ctx_->ShouldRewrite(kPass, "multi-output", shared->name())) {
      groups_[ai] = std::move(saved_a);
      groups_[bi].alive = true;
      for (HloInstruction* x : groups_[bi].owned) owner_[x] = bi;
      return false;
    }
    groups_[ai].formed = true;
    groups_[bi].owned.clear();
    groups_[bi].copied.clear();
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
