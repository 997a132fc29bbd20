// shrink-mesh: an SPMD case on fewer devices. Opportunity 0 halves the
// replicas, 1 halves the partitions (of those that exceed 1; an odd count
// goes to 1). The devices kept are the first replicas and partitions:
// device (r, p) of the new R' x P' mesh is device (r, p) of the old one,
// and keeps its inputs. Each device op's replica_groups (list or iota) and
// source_target_pairs keep their kept ids, renumbered for the new mesh;
// emptied groups and pairs with a dropped end go. An iota form stays one
// when the kept groups are those of [G,S]<=[n] or [G,S]<=[S,G]T(1,0);
// else it becomes the list. A mesh of one device is offered only to a
// module without device ops (the single-device oracle runs no
// collective). A candidate the SPMD oracle cannot evaluate (a group that
// shrank under an all-gather, an all-to-all that no longer splits) is
// FailedPrecondition, so it costs no test run.
#include <map>

#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "oracle/spmd.h"
#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

using Groups = std::vector<std::vector<int64_t>>;

bool HasDeviceOps(const HloModule& m) {
  for (const HloComputation* c : m.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (IsDeviceOp(i->opcode())) return true;
    }
  }
  return false;
}

int64_t Half(int64_t n) { return n % 2 == 0 ? n / 2 : 1; }

// The new id of old id `id` in a space of the kind `mode` names, or -1
// when its device is dropped.
int64_t NewId(CollectiveGroupMode mode, int64_t id, const DeviceMesh& from,
              const DeviceMesh& to) {
  switch (mode) {
    case CollectiveGroupMode::kCrossPartition:
      return id < to.partitions ? id : -1;
    case CollectiveGroupMode::kFlattenedId: {
      const int64_t r = id / from.partitions, p = id % from.partitions;
      return r < to.replicas && p < to.partitions ? r * to.partitions + p : -1;
    }
    default:
      return id < to.replicas ? id : -1;
  }
}

std::string Text(const Groups& groups) {
  std::string s = "{";
  for (size_t g = 0; g < groups.size(); ++g) {
    s += g ? ",{" : "{";
    for (size_t k = 0; k < groups[g].size(); ++k) {
      s += (k ? "," : "") + std::to_string(groups[g][k]);
    }
    s += "}";
  }
  return s + "}";
}

// `groups` in the iota form when one of the two simple ones gives them.
std::string GroupsText(const Groups& groups, bool iota) {
  if (!iota || groups.empty()) return Text(groups);
  const int64_t g = static_cast<int64_t>(groups.size());
  const int64_t s = static_cast<int64_t>(groups[0].size());
  const std::string shape =
      "[" + std::to_string(g) + "," + std::to_string(s) + "]<=";
  for (const std::string& form : {shape + "[" + std::to_string(g * s) + "]",
                                  shape + "[" + std::to_string(s) + "," +
                                      std::to_string(g) + "]T(1,0)"}) {
    if (auto v = ParseReplicaGroups(form); v.ok() && *v == groups) return form;
  }
  return Text(groups);
}

std::string* MutableRaw(HloInstruction& i, const char* key) {
  for (auto& [k, v] : i.mutable_attrs().raw) {
    if (k == key) return &v;
  }
  return nullptr;
}

Status Rewrite(HloInstruction& i, const DeviceMesh& from,
               const DeviceMesh& to) {
  if (!IsCollective(i.opcode())) return Status::Ok();
  ASSIGN_OR_RETURN(CollectiveGroupMode mode, GroupModeOf(i));
  if (std::string* v = MutableRaw(i, "replica_groups")) {
    ASSIGN_OR_RETURN(Groups old, ParseReplicaGroups(*v));
    Groups kept;
    for (const auto& g : old) {
      kept.emplace_back();
      for (int64_t id : g) {
        if (int64_t n = NewId(mode, id, from, to); n >= 0) {
          kept.back().push_back(n);
        }
      }
      if (kept.back().empty()) kept.pop_back();
    }
    if (!old.empty()) {
      *v = GroupsText(kept, v->find("<=") != std::string::npos);
    }
  }
  if (std::string* v = MutableRaw(i, "source_target_pairs")) {
    ASSIGN_OR_RETURN(auto old, ParseSourceTargetPairs(*v));
    Groups kept;
    for (const auto& [s, t] : old) {
      const int64_t a = NewId(mode, s, from, to), b = NewId(mode, t, from, to);
      if (a >= 0 && b >= 0) kept.push_back({a, b});
    }
    *v = Text(kept);
  }
  return Status::Ok();
}

class ShrinkMeshPass : public ReductionPass {
 public:
  std::string_view name() const override { return "shrink-mesh"; }
  std::string_view description() const override {
    return "run an SPMD case on fewer devices (halve replicas or "
           "partitions), rewriting groups, pairs and per-device inputs";
  }

  int64_t Count(const hlo_diff::Case& c) const override {
    return static_cast<int64_t>(Meshes(c).size());
  }

  StatusOr<hlo_diff::Case> Apply(
      const hlo_diff::Case& c, std::span<const int64_t> chosen) const override {
    const std::vector<DeviceMesh> options = Meshes(c);
    DeviceMesh to = c.mesh;
    for (int64_t k : chosen) {
      if (k < 0 || k >= static_cast<int64_t>(options.size())) {
        return InvalidArgument("shrink-mesh: no opportunity " +
                               std::to_string(k));
      }
      if (options[k].replicas != c.mesh.replicas) {
        to.replicas = options[k].replicas;
      }
      if (options[k].partitions != c.mesh.partitions) {
        to.partitions = options[k].partitions;
      }
    }
    ASSIGN_OR_RETURN(auto module,
                     hlo_diff::ParseCaseModule(c.module_text, "case"));
    if (to.size() == 1 && HasDeviceOps(*module)) {
      return FailedPrecondition("shrink-mesh: device ops need two devices");
    }
    for (HloComputation* comp : module->computations()) {
      for (HloInstruction* i : comp->instructions()) {
        if (Status s = Rewrite(*i, c.mesh, to); !s.ok()) {
          return FailedPrecondition("shrink-mesh: " + s.message());
        }
      }
    }
    hlo_diff::Case out = c;
    out.module_text = PrintHloModule(*module);
    out.mesh = to;
    out.inputs.clear();
    const size_t per = c.inputs.size() / static_cast<size_t>(c.mesh.size());
    for (int64_t r = 0; r < to.replicas; ++r) {
      for (int64_t p = 0; p < to.partitions; ++p) {
        const size_t d = static_cast<size_t>(r * c.mesh.partitions + p);
        for (size_t k = 0; k < per; ++k) {
          out.inputs.push_back(c.inputs[d * per + k]);
        }
      }
    }
    if (to.size() > 1) RETURN_IF_ERROR(Evaluates(out));
    return out;
  }

 private:
  // The meshes of the opportunities: halved replicas, halved partitions.
  static std::vector<DeviceMesh> Meshes(const hlo_diff::Case& c) {
    std::vector<DeviceMesh> out;
    if (c.mesh.replicas > 1) {
      out.push_back({Half(c.mesh.replicas), c.mesh.partitions});
    }
    if (c.mesh.partitions > 1) {
      out.push_back({c.mesh.replicas, Half(c.mesh.partitions)});
    }
    return out;
  }

  // FailedPrecondition unless the SPMD oracle evaluates `c`.
  static Status Evaluates(const hlo_diff::Case& c) {
    ASSIGN_OR_RETURN(auto module,
                     hlo_diff::ParseCaseModule(c.module_text, "candidate"));
    auto args = hlo_diff::DeviceArguments(*module, c);
    if (!args.ok()) return FailedPrecondition(args.status().message());
    SpmdOptions options;
    options.mesh = c.mesh;
    options.evaluator.threads = 1;
    auto out = EvaluateSpmd(*module, *args, options);
    if (!out.ok()) {
      return FailedPrecondition("shrink-mesh: the oracle refuses it: " +
                                out.status().message());
    }
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<ReductionPass> MakeShrinkMeshPass() {
  return std::make_unique<ShrinkMeshPass>();
}

}  // namespace trench::hlo_reduce
