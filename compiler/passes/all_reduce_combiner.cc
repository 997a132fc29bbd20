#include "compiler/passes/all_reduce_combiner.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/collective_groups.h"
#include "compiler/passes/pass_util.h"

namespace trench {
namespace {

constexpr std::string_view kPass = "all-reduce-combiner";

// Raw attributes that annotate an instruction without changing its value.
bool IsAnnotation(const std::string& key) {
  return key == "metadata" || key == "frontend_attributes" ||
         key == "sharding" || key == "statistics";
}

HloAttributes WithoutAnnotations(HloAttributes attrs) {
  std::erase_if(attrs.raw,
                [](const auto& kv) { return IsAnnotation(kv.first); });
  return attrs;
}

// The reduction's op when `fn` is two scalar parameters and one binary op
// of them, else null: XLA combines no other reductions.
const HloInstruction* ScalarReductionOp(const HloComputation& fn) {
  const HloInstruction* root = fn.root_instruction();
  if (fn.num_parameters() != 2 || fn.instruction_count() != 3 ||
      root == nullptr || root->operand_count() != 2 ||
      !root->called_computations().empty() || !root->shape().IsArray() ||
      root->shape().rank() != 0) {
    return nullptr;
  }
  for (const HloInstruction* p : root->operands()) {
    if (p->opcode() != HloOpcode::kParameter || !p->shape().IsArray() ||
        p->shape().rank() != 0) {
      return nullptr;
    }
  }
  return root;
}

// Structural equality of two reductions' ops (ScalarReductionOp): same
// opcode, shapes, attributes and parameters in the same order.
bool SameReduction(const HloInstruction& a, const HloInstruction& b) {
  if (&a == &b) return true;
  if (a.opcode() != b.opcode() || !a.shape().Compatible(b.shape()) ||
      !(WithoutAnnotations(a.attrs()) == WithoutAnnotations(b.attrs()))) {
    return false;
  }
  for (int64_t i = 0; i < a.operand_count(); ++i) {
    const HloInstruction* pa = a.operand(i);
    const HloInstruction* pb = b.operand(i);
    if (pa->parameter_number() != pb->parameter_number() ||
        !pa->shape().Compatible(pb->shape())) {
      return false;
    }
  }
  return true;
}

// What two all-reduces must share to be combined (XLA's AllReduceKey).
struct CombineKey {
  const HloInstruction* reduction = nullptr;  // ScalarReductionOp.
  bool channel = false;
  bool global_ids = false;
  std::vector<std::vector<int64_t>> groups;  // Expanded, as written.
};

bool SameKey(const CombineKey& a, const CombineKey& b) {
  return a.channel == b.channel && a.global_ids == b.global_ids &&
         a.groups == b.groups && SameReduction(*a.reduction, *b.reduction);
}

// `instr`'s key, or nullopt when it cannot be combined with anything.
std::optional<CombineKey> KeyOf(const HloInstruction& instr) {
  if (instr.opcode() != HloOpcode::kAllReduce || instr.operand_count() != 1 ||
      instr.called_computations().size() != 1 || instr.to_apply() == nullptr ||
      !instr.shape().IsArray()) {
    return std::nullopt;
  }
  CombineKey key;
  key.reduction = ScalarReductionOp(*instr.to_apply());
  const PrimitiveType type = instr.shape().element_type();
  if (key.reduction == nullptr ||
      key.reduction->shape().element_type() != type ||
      instr.operand(0)->shape().element_type() != type) {
    return std::nullopt;
  }
  StatusOr<CollectiveGroupMode> mode = GroupModeOf(instr);
  if (!mode.ok()) return std::nullopt;
  key.channel = instr.attrs().FindRaw("channel_id") != nullptr;
  key.global_ids = *mode == CollectiveGroupMode::kFlattenedId;
  if (const std::string* g = instr.attrs().FindRaw("replica_groups")) {
    StatusOr<std::vector<std::vector<int64_t>>> groups = ParseReplicaGroups(*g);
    if (!groups.ok()) return std::nullopt;
    key.groups = std::move(groups).value();
  }
  return key;
}

bool ConstrainsLayout(const HloInstruction& instr) {
  const std::string* v = instr.attrs().FindRaw("constrain_layout");
  return v != nullptr && *v == "true";
}

// XLA's tuple sharding of a combined op: each member's, replicated for
// members without one. Empty when no member has one.
std::string TupleSharding(const std::vector<HloInstruction*>& members) {
  bool any = false;
  for (const HloInstruction* m : members) {
    any |= m->attrs().FindRaw("sharding") != nullptr;
  }
  if (!any) return "";
  std::string out = "{";
  for (size_t i = 0; i < members.size(); ++i) {
    const std::string* s = members[i]->attrs().FindRaw("sharding");
    out += (i ? ", " : "") + (s ? *s : std::string("{replicated}"));
  }
  return out + "}";
}

// Replaces `members` (REQUIRES: at least two, one key, independent) by
// one all-reduce of their operands and a get-tuple-element per member.
Status Combine(HloComputation* comp,
               const std::vector<HloInstruction*>& members,
               NameUniquer* names) {
  std::vector<HloInstruction*> operands;
  std::vector<Shape> shapes;
  for (HloInstruction* m : members) {
    operands.push_back(m->operand(0));
    shapes.push_back(m->shape());
  }
  const HloInstruction& first = *members.front();
  HloInstruction* combined =
      AddNew(comp, names, HloOpcode::kAllReduce, Shape::Tuple(shapes),
             std::move(operands), "all-reduce");
  combined->AddCalledComputation(first.to_apply());
  auto& raw = combined->mutable_attrs().raw;
  for (const char* key :
       {"channel_id", "replica_groups", "use_global_device_ids"}) {
    if (const std::string* v = first.attrs().FindRaw(key)) {
      raw.emplace_back(key, *v);
    }
  }
  if (std::string s = TupleSharding(members); !s.empty()) {
    raw.emplace_back("sharding", std::move(s));
  }
  for (HloInstruction* m : members) {
    for (HloInstruction* p : m->control_predecessors()) {
      combined->AddControlPredecessor(p);
    }
  }
  for (size_t i = 0; i < members.size(); ++i) {
    HloInstruction* m = members[i];
    HloInstruction* gte = AddNew(comp, names, HloOpcode::kGetTupleElement,
                                 m->shape(), {combined}, "get-tuple-element");
    gte->mutable_attrs().tuple_index = static_cast<int64_t>(i);
    for (const auto& [k, v] : m->attrs().raw) {
      if (IsAnnotation(k)) gte->mutable_attrs().raw.emplace_back(k, v);
    }
    const std::vector<HloInstruction*> successors = m->control_successors();
    for (HloInstruction* s : successors) {
      s->RemoveControlPredecessor(m);
      s->AddControlPredecessor(combined);
    }
    m->ReplaceAllUsesWith(gte);
    RETURN_IF_ERROR(comp->RemoveInstruction(m));
  }
  return Status::Ok();
}

class ComputationCombiner {
 public:
  ComputationCombiner(HloComputation* comp, int64_t threshold_bytes,
                      int64_t threshold_count)
      : comp_(comp),
        threshold_bytes_(threshold_bytes),
        threshold_count_(threshold_count) {}

  StatusOr<bool> Run(NameUniquer* names, PassContext* ctx) {
    FindCandidates();
    bool changed = false;
    // Every round takes at least its first candidate out of key_of_.
    while (!key_of_.empty()) {
      const std::vector<HloInstruction*> set = NextSet();
      if (set.size() < 2) continue;
      if (!ctx->ShouldRewrite(kPass, "combine", set.front()->name())) continue;
      RETURN_IF_ERROR(Combine(comp_, set, names));
      changed = true;
    }
    return changed;
  }

 private:
  // Gives every all-reduce that may be combined the index of its key.
  void FindCandidates() {
    for (HloInstruction* instr : comp_->MakeInstructionPostOrder()) {
      std::optional<CombineKey> key = KeyOf(*instr);
      if (!key || instr->shape().byte_size() > threshold_bytes_) continue;
      size_t k = 0;
      while (k < keys_.size() && !SameKey(keys_[k], *key)) ++k;
      if (k == keys_.size()) keys_.push_back(std::move(*key));
      key_of_[instr] = k;
    }
  }

  // One round: the first candidate left in post order and the later ones
  // of its key that fit, up to the first that does not fit or depends on
  // the set. Takes the members out of key_of_.
  std::vector<HloInstruction*> NextSet() {
    std::vector<HloInstruction*> set;
    int64_t bytes = 0;
    size_t active = 0;
    // Instructions that depend on a member. Post order visits operands and
    // control predecessors first, so one sweep sees all of them.
    std::unordered_set<const HloInstruction*> downstream;
    for (HloInstruction* instr : comp_->MakeInstructionPostOrder()) {
      bool depends = false;
      for (const HloInstruction* o : instr->operands()) {
        depends |= downstream.count(o) != 0;
      }
      for (const HloInstruction* p : instr->control_predecessors()) {
        depends |= downstream.count(p) != 0;
      }
      auto it = key_of_.find(instr);
      if (it == key_of_.end() || (!set.empty() && it->second != active)) {
        if (depends) downstream.insert(instr);
        continue;
      }
      const int64_t size = instr->shape().byte_size();
      if (depends || size > threshold_bytes_ - bytes) break;
      active = it->second;
      set.push_back(instr);
      bytes += size;
      key_of_.erase(it);
      downstream.insert(instr);
      if (static_cast<int64_t>(set.size()) >= threshold_count_) break;
    }
    return set;
  }

  HloComputation* comp_;
  int64_t threshold_bytes_, threshold_count_;
  std::vector<CombineKey> keys_;
  std::unordered_map<const HloInstruction*, size_t> key_of_;
};

bool HasDomain(const HloComputation& comp) {
  for (const HloInstruction* i : comp.instructions()) {
    if (i->opcode() == HloOpcode::kDomain) return true;
  }
  return false;
}

}  // namespace

StatusOr<bool> AllReduceCombiner::Run(HloModule* module, PassContext* ctx) {
  if (threshold_bytes_ <= 0 || threshold_count_ <= 0) return false;
  bool any = false;
  for (const HloComputation* comp : module->computations()) {
    for (const HloInstruction* instr : comp->instructions()) {
      if (instr->opcode() != HloOpcode::kAllReduce) continue;
      if (ConstrainsLayout(*instr)) {
        ctx->Log(std::string(kPass) + ": %" + instr->name() +
                 " has constrain_layout=true; the module is left alone");
        return false;
      }
      any = true;
    }
  }
  if (!any) return false;
  NameUniquer names(*module);
  bool changed = false;
  for (HloComputation* comp : module->computations()) {
    if (comp->fusion_instruction() != nullptr || HasDomain(*comp)) continue;
    ComputationCombiner combiner(comp, threshold_bytes_, threshold_count_);
    ASSIGN_OR_RETURN(bool c, combiner.Run(&names, ctx));
    changed |= c;
  }
  return changed;
}

}  // namespace trench
