#include "compiler/passes/fusion.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/opcode.h"
#include "compiler/passes/fusion_order.h"
#include "compiler/passes/fusion_support.h"
#include "compiler/passes/pass_util.h"

namespace trench {
namespace {

constexpr char kPass[] = "fusion";

// Nodes a multi-output merge's cycle check may visit (ContractionOrder):
// siblings further apart than this stay separate fusions.
constexpr int64_t kCycleCheckBudget = 512;

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
    RETURN_IF_ERROR(FormMultiOutputFusions());
    bool changed = false;
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (!groups_[g].alive || !groups_[g].formed) continue;
      RETURN_IF_ERROR(Materialize(groups_[g]));
      changed = true;
    }
    RETURN_IF_ERROR(entry_->RemoveInstructions(dead_));
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
          } else {
            copiers_[p].push_back(gi);
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
      // A reduce with nothing but its init values: a fused kernel gains
      // nothing over the unfused reduce (which takes the inits as scalars)
      // and loses its cross-lane fold.
      if (OnlyInitsOf(grown, c)) {
        for (HloInstruction* m : grown.owned) {
          if (m != c) owner_.erase(m);
        }
        grown.owned = {c};
        DropCopies(gi);
        continue;
      }
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
      DropCopies(gi);
    }
  }

  // True when `seed` is a reduce and every other member of `g` is one of
  // its init operands.
  static bool OnlyInitsOf(const Group& g, const HloInstruction* seed) {
    if (seed->opcode() != HloOpcode::kReduce) return false;
    const int64_t n = seed->operand_count() / 2;
    auto is_init = [&](const HloInstruction* m) {
      for (int64_t k = n; k < seed->operand_count(); ++k) {
        if (seed->operand(k) == m) return true;
      }
      return false;
    };
    for (const HloInstruction* m : g.owned) {
      if (m != seed && !is_init(m)) return false;
    }
    for (const HloInstruction* m : g.copied) {
      if (!is_init(m)) return false;
    }
    return true;
  }

  // True if some alive group other than `gi` copies `i`.
  bool CopiedByOther(const HloInstruction* i, int gi) const {
    auto it = copiers_.find(i);
    if (it == copiers_.end()) return false;
    for (int g : it->second) {
      if (g != gi) return true;
    }
    return false;
  }

  // Clears the copied members of group `gi` (and their copiers_ entries).
  void DropCopies(int gi) {
    for (HloInstruction* c : groups_[gi].copied) {
      std::vector<int>& v = copiers_[c];
      v.erase(std::remove(v.begin(), v.end(), gi), v.end());
      if (v.empty()) copiers_.erase(c);
    }
    groups_[gi].copied.clear();
  }

  // The graph the module will have once every alive group is a fusion,
  // for the cycle check: each alive group is one node (its group index);
  // every other instruction (including the originals of copied members,
  // which stay for their outside users) is its own node (groups_.size()
  // plus its post-order index). Edges: operand -> user, where a user
  // owned by group H is node H, and a member copied into H also makes its
  // operands feed H; an edge whose operand is a member of the same group
  // is internal (no edge). Forming the fusions is legal iff this graph is
  // acyclic ("fusion is part of a cycle" otherwise): paths through other
  // fusions and through copied cheap ops count.
  int Node(const HloInstruction* x) const {
    const int o = Owner(x);
    if (o >= 0 && groups_[o].alive) return o;
    return static_cast<int>(groups_.size() + index_.at(x));
  }

  // Appends the nodes that value `x` (an instruction) feeds.
  void PushUsers(const HloInstruction* x, std::vector<int>& out) const {
    for (const HloInstruction* u : x->users()) {
      const int o = Owner(u);
      if (o >= 0 && groups_[o].alive) {
        if (!groups_[o].Has(x)) out.push_back(o);
      } else {
        out.push_back(static_cast<int>(groups_.size() + index_.at(u)));
      }
      auto it = copiers_.find(u);
      if (it == copiers_.end()) continue;
      for (int h : it->second) {
        if (!groups_[h].Has(x)) out.push_back(h);
      }
    }
  }

  void Successors(int n, std::vector<int>& out) const {
    const size_t ng = groups_.size();
    if (static_cast<size_t>(n) < ng) {
      for (const HloInstruction* m : groups_[n].owned) PushUsers(m, out);
    } else {
      PushUsers(order_[n - ng], out);
    }
  }

  // The inverse of Successors.
  void Predecessors(int n, std::vector<int>& out) const {
    const size_t ng = groups_.size();
    if (static_cast<size_t>(n) >= ng) {
      for (const HloInstruction* x : order_[n - ng]->operands()) {
        out.push_back(Node(x));
      }
      return;
    }
    const Group& g = groups_[n];
    for (const auto* members : {&g.owned, &g.copied}) {
      for (const HloInstruction* m : *members) {
        for (const HloInstruction* x : m->operands()) {
          if (!g.Has(x)) out.push_back(Node(x));
        }
      }
    }
  }

  // A topological order of that graph (Kahn's algorithm, taking first the
  // ready node whose earliest instruction comes first in the post order,
  // so that nodes stay near their instructions and the cycle check's
  // regions stay small); Internal if it has a cycle (loop/input/output
  // fusions never make one).
  StatusOr<std::vector<int>> TopologicalNodes() const {
    const size_t ng = groups_.size();
    std::vector<size_t> first(ng + order_.size(), order_.size());
    std::vector<int> nodes;
    for (size_t g = 0; g < ng; ++g) {
      if (!groups_[g].alive) continue;
      nodes.push_back(static_cast<int>(g));
      for (const HloInstruction* m : groups_[g].owned) {
        first[g] = std::min(first[g], index_.at(m));
      }
    }
    for (size_t i = 0; i < order_.size(); ++i) {
      const int o = Owner(order_[i]);
      if (o >= 0 && groups_[o].alive) continue;
      nodes.push_back(static_cast<int>(ng + i));
      first[ng + i] = i;
    }
    std::vector<int> in_degree(ng + order_.size(), 0), out;
    for (int n : nodes) {
      out.clear();
      Successors(n, out);
      for (int s : out) ++in_degree[s];
    }
    using Entry = std::pair<size_t, int>;  // (first instruction, node)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
    for (int n : nodes) {
      if (in_degree[n] == 0) ready.push({first[n], n});
    }
    std::vector<int> result;
    while (!ready.empty()) {
      const int n = ready.top().second;
      ready.pop();
      result.push_back(n);
      out.clear();
      Successors(n, out);
      for (int s : out) {
        if (--in_degree[s] == 0) ready.push({first[s], s});
      }
    }
    if (result.size() != nodes.size()) {
      return Internal("fusion: consumer fusions form a cycle");
    }
    return result;
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
  // (ContractionOrder::Check within kCycleCheckBudget nodes) and the
  // rewrite decision allows it.
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
    const auto succ = [this](int n, std::vector<int>& out) {
      Successors(n, out);
    };
    const auto pred = [this](int n, std::vector<int>& out) {
      Predecessors(n, out);
    };
    if (order_check_->Check(ai, bi, succ, pred, kCycleCheckBudget) !=
            ContractionOrder::Verdict::kAcyclic ||
        !ctx_->ShouldRewrite(kPass, "multi-output", shared->name())) {
      return false;
    }
    order_check_->Contract(ai);
    DropCopies(ai);
    DropCopies(bi);
    groups_[ai] = std::move(m);
    groups_[ai].formed = true;
    groups_[bi].alive = false;
    groups_[bi].owned.clear();
    for (HloInstruction* x : groups_[ai].owned) owner_[x] = ai;
    for (HloInstruction* c : groups_[ai].copied) copiers_[c].push_back(ai);
    // Producers that join now only feed the group, and copies only add
    // edges from values before it: the order stays topological.
    Grow(ai);
    groups_[ai].roots = RootsOf(groups_[ai]);
    return true;
  }

  Status FormMultiOutputFusions() {
    ASSIGN_OR_RETURN(std::vector<int> topological, TopologicalNodes());
    order_check_ = std::make_unique<ContractionOrder>(
        topological, static_cast<int>(groups_.size() + order_.size()));
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
    return Status::Ok();
  }

  // "base", else "base.N" for the smallest N free (k fusions: O(k)).
  std::string ComputationName(const std::string& base) {
    if (computation_names_.empty()) {
      for (const HloComputation* c : module_->computations()) {
        computation_names_.insert(c->name());
      }
    }
    int64_t& n = next_computation_[base];
    std::string name = base;
    while (computation_names_.count(name)) {
      name = base + "." + std::to_string(++n);
    }
    computation_names_.insert(name);
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
    // Members leave the graph now (so user counts stay exact) and the
    // computation at the end of the pass, all at once.
    for (auto it = members.rbegin(); it != members.rend(); ++it) {
      HloInstruction* m = const_cast<HloInstruction*>(*it);
      const bool dead_copy = !g.owned.count(m) && m->user_count() == 0 &&
                             m != entry_->root_instruction();
      if (g.owned.count(m) || dead_copy) {
        if (m->user_count() != 0) {
          return Internal("fusion: member %" + m->name() +
                          " still has users outside its fusion");
        }
        m->DetachOperands();
        dead_.push_back(m);
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
  // The alive groups that copy an instruction (CopiedByOther, the graph).
  std::unordered_map<const HloInstruction*, std::vector<int>> copiers_;
  std::unique_ptr<ContractionOrder> order_check_;
  std::unique_ptr<NameUniquer> names_;
  std::vector<HloInstruction*> dead_;  // Materialized members, detached.
  std::unordered_set<std::string> computation_names_;
  std::unordered_map<std::string, int64_t> next_computation_;
};

}  // namespace

StatusOr<bool> FusionPass::Run(HloModule* module, PassContext* ctx) {
  if (module->entry_computation() == nullptr) return false;
  Fuser fuser(module, ctx);
  return fuser.Run();
}

}  // namespace trench
