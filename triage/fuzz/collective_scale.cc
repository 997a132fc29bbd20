#include "triage/fuzz/collective_scale.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/opcode.h"

namespace trench::fuzz {
namespace {

using O = HloOpcode;

std::string Name(const HloInstruction& i) { return "%" + i.name(); }

// The result leaves of a collective, one per operand.
std::vector<Shape> Results(const HloInstruction& i) {
  if (!i.shape().IsTuple()) return {i.shape()};
  return i.shape().tuple_shapes();
}

Status Bad(const HloInstruction& i, const std::string& what) {
  return InvalidArgument(Name(i) + " (" + std::string(OpcodeName(i.opcode())) +
                         "): " + what);
}

// The one dimensions={d} of an all-gather / reduce-scatter / all-to-all.
StatusOr<int64_t> Dim(const HloInstruction& i, const Shape& s) {
  const std::vector<int64_t>& d = i.attrs().dimensions;
  if (d.size() != 1 || d[0] < 0 || d[0] >= s.rank()) {
    return Bad(
        i, "needs dimensions={d} naming a dimension of " + s.ToString(false));
  }
  return d[0];
}

// Checks the shapes of an all-gather / reduce-scatter / all-to-all /
// all-reduce with groups of size n.
Status CheckGroupShapes(const HloInstruction& i, int64_t n) {
  const std::vector<Shape> results = Results(i);
  const O op = i.opcode();
  if (op == O::kAllToAll && i.attrs().dimensions.empty()) {
    if (static_cast<int64_t>(i.operand_count()) != n) {
      return Bad(i, "without dimensions takes one operand per group member (" +
                        std::to_string(n) + ")");
    }
  } else if (results.size() != static_cast<size_t>(i.operand_count())) {
    return Bad(i, "needs one result per operand");
  }
  for (size_t k = 0; k < results.size() && k < i.operand_count(); ++k) {
    const Shape& in = i.operand(k)->shape();
    const Shape& out = results[k];
    if (!in.IsArray() || !out.IsArray() || in.rank() != out.rank()) {
      return Bad(i, "operand " + std::to_string(k) + " is " +
                        in.ToString(false) + ", the result " +
                        out.ToString(false));
    }
    std::vector<int64_t> want = in.dims();
    if (op == O::kAllGather || op == O::kReduceScatter ||
        (op == O::kAllToAll && !i.attrs().dimensions.empty())) {
      ASSIGN_OR_RETURN(int64_t d, Dim(i, in));
      if (op == O::kAllGather) want[d] *= n;
      if (op == O::kReduceScatter || op == O::kAllToAll) {
        if (want[d] % n != 0) {
          return Bad(i, "dimension " + std::to_string(d) + " of " +
                            in.ToString(false) + " does not split into " +
                            std::to_string(n) + " chunks");
        }
        if (op == O::kReduceScatter) want[d] /= n;
      }
    }
    if (want != out.dims()) {
      return Bad(i, "operand " + in.ToString(false) + " and result " +
                        out.ToString(false) + " do not fit groups of " +
                        std::to_string(n));
    }
  }
  return Status::Ok();
}

Status CheckOne(const HloInstruction& i, const DeviceMesh& mesh) {
  const O op = i.opcode();
  if (op == O::kPartitionId || op == O::kReplicaId) return Status::Ok();
  if (op == O::kCollectivePermute) {
    RETURN_IF_ERROR(PermutePairs(i, mesh).status());
    const std::vector<Shape> results = Results(i);
    for (size_t k = 0; k < results.size() && k < i.operand_count(); ++k) {
      if (i.operand(k)->shape().dims() != results[k].dims()) {
        return Bad(i, "changes the shape of operand " + std::to_string(k));
      }
    }
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups,
                   DeviceGroups(i, mesh));
  if (groups.empty() || groups[0].empty()) return Bad(i, "has no group");
  for (const auto& g : groups) {
    if (g.size() != groups[0].size() && op != O::kAllReduce) {
      return Bad(i, "has groups of different sizes");
    }
  }
  return CheckGroupShapes(i, static_cast<int64_t>(groups[0].size()));
}

// The ids of a mode's space on `mesh`.
int64_t Space(CollectiveGroupMode mode, const DeviceMesh& mesh) {
  switch (mode) {
    case CollectiveGroupMode::kCrossPartition:
      return mesh.partitions;
    case CollectiveGroupMode::kFlattenedId:
      return mesh.size();
    default:
      return mesh.replicas;
  }
}

// Scaled sizes, one per factor, each a power of two (or the factor
// itself) at most the factor, whose product is `space`: every factor > 1
// takes 2 first (largest first), then the factor shrunk most doubles.
// nullopt when no such sizes exist.
std::optional<std::vector<int64_t>> FactorOnto(
    const std::vector<int64_t>& sizes, int64_t space) {
  int64_t all = 1;
  for (int64_t s : sizes) all *= s;
  if (all == space) return sizes;
  std::vector<int64_t> scaled(sizes.size(), 1);
  std::vector<size_t> order(sizes.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  int64_t product = 1;
  for (size_t k : order) {
    if (sizes[k] >= 2 && space % (product * 2) == 0) {
      scaled[k] = 2;
      product *= 2;
    }
  }
  while (product < space && space % (product * 2) == 0) {
    std::optional<size_t> best;
    for (size_t k : order) {
      if (scaled[k] * 2 > sizes[k]) continue;
      if (!best || sizes[k] * scaled[*best] > sizes[*best] * scaled[k]) {
        best = k;
      }
    }
    if (!best) break;
    scaled[*best] *= 2;
    product *= 2;
  }
  if (product != space) return std::nullopt;
  return scaled;
}

// The integers of `s` in order ("[2,64]<=[128]" -> 2, 64, 128).
std::vector<int64_t> Numbers(std::string_view s) {
  std::vector<int64_t> out;
  for (size_t k = 0; k < s.size();) {
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) {
      ++k;
      continue;
    }
    int64_t v = 0;
    for (; k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]));
         ++k) {
      v = std::min<int64_t>(v * 10 + (s[k] - '0'), int64_t{1} << 40);
    }
    out.push_back(v);
  }
  return out;
}

std::string Join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t k = 0; k < v.size(); ++k) {
    s += (k ? "," : "") + std::to_string(v[k]);
  }
  return s;
}

StatusOr<std::string> ScaleListGroups(
    const std::vector<std::vector<int64_t>>& groups, int64_t space) {
  size_t members = groups[0].size();
  for (const auto& g : groups) members = std::min(members, g.size());
  if (members == 0) return InvalidArgument("an empty replica group");
  const std::optional<std::vector<int64_t>> f = FactorOnto(
      {static_cast<int64_t>(groups.size()), static_cast<int64_t>(members)},
      space);
  if (!f) {
    return InvalidArgument("cannot scale " + std::to_string(groups.size()) +
                           " groups of " + std::to_string(members) + " onto " +
                           std::to_string(space) + " ids");
  }
  std::vector<std::vector<int64_t>> kept;
  std::set<int64_t> ids;
  for (int64_t g = 0; g < (*f)[0]; ++g) {
    kept.emplace_back(groups[g].begin(), groups[g].begin() + (*f)[1]);
    ids.insert(kept.back().begin(), kept.back().end());
  }
  std::map<int64_t, int64_t> rank;
  for (int64_t id : ids) rank.emplace(id, static_cast<int64_t>(rank.size()));
  for (auto& g : kept) {
    for (int64_t& id : g) id = rank.at(id);
  }
  return ReplicaGroupsText(kept);
}

std::string ScalePairs(const std::vector<std::pair<int64_t, int64_t>>& pairs,
                       int64_t space) {
  std::set<int64_t> sources, targets;
  std::vector<std::vector<int64_t>> kept;
  for (const auto& [s, t] : pairs) {
    const int64_t a = s % space, b = t % space;
    if (sources.count(a) || targets.count(b)) continue;
    sources.insert(a);
    targets.insert(b);
    kept.push_back({a, b});
  }
  return ReplicaGroupsText(kept);
}

std::string* MutableRaw(HloInstruction& i, const char* key) {
  for (auto& [k, v] : i.mutable_attrs().raw) {
    if (k == key) return &v;
  }
  return nullptr;
}

// The group size an all-gather or reduce-scatter was written for, from
// its shapes (its first operand's dimension d).
StatusOr<SizeRatio> ShapeRatio(const HloInstruction& i) {
  if (i.operand_count() < 1) return Bad(i, "has no operand");
  const Shape& in = i.operand(0)->shape();
  const Shape out = Results(i)[0];
  if (!in.IsArray() || !out.IsArray() || in.rank() != out.rank()) {
    return Bad(i, "operand and result ranks differ");
  }
  ASSIGN_OR_RETURN(int64_t d, Dim(i, in));
  SizeRatio r;
  r.small = i.opcode() == O::kAllGather ? in.dims()[d] : out.dims()[d];
  r.large = i.opcode() == O::kAllGather ? out.dims()[d] : in.dims()[d];
  if (r.small <= 0 || r.large % r.small != 0) {
    return Bad(i, "its shapes give no group size");
  }
  r.ratio = r.large / r.small;
  return r;
}

Status ScaleOne(HloInstruction& i, const DeviceMesh& to,
                std::vector<SizeRatio>* ratios) {
  const O op = i.opcode();
  if (op == O::kPartitionId || op == O::kReplicaId) return Status::Ok();
  ASSIGN_OR_RETURN(CollectiveGroupMode mode, GroupModeOf(i));
  const int64_t space = Space(mode, to);
  if (std::string* pairs = MutableRaw(i, "source_target_pairs")) {
    auto parsed = ParseSourceTargetPairs(*pairs);
    if (!parsed.ok()) return Bad(i, parsed.status().message());
    *pairs = ScalePairs(*parsed, space);
  }
  if (std::string* groups = MutableRaw(i, "replica_groups")) {
    auto parsed = ParseReplicaGroups(*groups);
    if (!parsed.ok()) return Bad(i, parsed.status().message());
    if (!parsed->empty()) {
      StatusOr<std::string> scaled = groups->find("<=") != std::string::npos
                                         ? ScaleIotaGroups(*groups, space)
                                         : ScaleListGroups(*parsed, space);
      if (!scaled.ok()) return Bad(i, scaled.status().message());
      *groups = *scaled;
    }
  }
  if (op != O::kAllGather && op != O::kReduceScatter) return Status::Ok();
  ASSIGN_OR_RETURN(SizeRatio r, ShapeRatio(i));
  ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> g, DeviceGroups(i, to));
  const int64_t n = g.empty() ? 1 : static_cast<int64_t>(g[0].size());
  if (n < 1 || r.ratio % n != 0) {
    return Bad(i, "groups of " + std::to_string(r.ratio) +
                      " cannot shrink to groups of " + std::to_string(n));
  }
  r.ratio /= n;
  if (r.ratio > 1) ratios->push_back(r);
  return Status::Ok();
}

}  // namespace

std::string ReplicaGroupsText(const std::vector<std::vector<int64_t>>& groups) {
  std::string s = "{";
  for (size_t k = 0; k < groups.size(); ++k) {
    s += (k ? ",{" : "{") + Join(groups[k]) + "}";
  }
  return s + "}";
}

Status CheckCollectives(const HloModule& module, const DeviceMesh& mesh) {
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (IsDeviceOp(i->opcode())) RETURN_IF_ERROR(CheckOne(*i, mesh));
    }
  }
  return Status::Ok();
}

DeviceMesh TraceMesh(const HloModule& module) {
  DeviceMesh mesh;
  bool replicas = false, partitions = false;
  for (const auto& [k, v] : module.header_attrs()) {
    const std::vector<int64_t> n = Numbers(v);
    if (n.size() != 1 || n[0] < 1 || n[0] > kMaxMeshDevices) continue;
    if (k == "replica_count") mesh.replicas = n[0], replicas = true;
    if (k == "num_partitions") mesh.partitions = n[0], partitions = true;
  }
  if (replicas && partitions) return mesh;
  int64_t most_replica = 0, most_partition = 0, most_global = 0;
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (!IsCollective(i->opcode())) continue;
      StatusOr<CollectiveGroupMode> mode = GroupModeOf(*i);
      if (!mode.ok()) continue;
      int64_t most = -1;
      if (const std::string* v = i->attrs().FindRaw("replica_groups")) {
        if (auto g = ParseReplicaGroups(*v); g.ok()) {
          for (const auto& grp : *g) {
            for (int64_t id : grp) most = std::max(most, id);
          }
        }
      }
      if (const std::string* v = i->attrs().FindRaw("source_target_pairs")) {
        if (auto p = ParseSourceTargetPairs(*v); p.ok()) {
          for (const auto& [a, b] : *p) most = std::max({most, a, b});
        }
      }
      int64_t& into =
          *mode == CollectiveGroupMode::kCrossPartition ? most_partition
          : *mode == CollectiveGroupMode::kFlattenedId  ? most_global
                                                        : most_replica;
      into = std::max(into, most + 1);
    }
  }
  if (!replicas)
    mesh.replicas = std::clamp<int64_t>(most_replica, 1, kMaxMeshDevices);
  if (!partitions) {
    const int64_t from_global =
        (most_global + mesh.replicas - 1) / mesh.replicas;
    mesh.partitions = std::clamp<int64_t>(std::max(most_partition, from_global),
                                          1, kMaxMeshDevices / mesh.replicas);
  }
  return mesh;
}

DeviceMesh ScaledMesh(const DeviceMesh& mesh, int64_t max_devices) {
  max_devices = std::max<int64_t>(1, max_devices);
  auto shrink = [](int64_t n, int64_t most) {
    if (n <= most) return n;
    int64_t p = 1;
    while (p * 2 <= most) p *= 2;
    return p;
  };
  DeviceMesh out;
  if (mesh.replicas > 1 && mesh.partitions > 1 && max_devices >= 4) {
    out.replicas = 2;
    out.partitions = 2;
  } else if (mesh.partitions > 1) {
    out.partitions = shrink(mesh.partitions, max_devices);
  } else {
    out.replicas = shrink(mesh.replicas, max_devices);
  }
  return out;
}

StatusOr<std::string> ScaleIotaGroups(std::string_view text, int64_t space) {
  const size_t arrow = text.find("<=");
  const size_t t = text.find('T');
  if (arrow == std::string_view::npos || !ParseReplicaGroups(text).ok()) {
    return InvalidArgument("replica_groups=" + std::string(text) +
                           ": not the iota form");
  }
  const std::vector<int64_t> shape = Numbers(text.substr(0, arrow));
  const std::vector<int64_t> dims = Numbers(text.substr(
      arrow, t == std::string_view::npos ? std::string_view::npos : t - arrow));
  std::vector<int64_t> perm;
  if (t != std::string_view::npos) perm = Numbers(text.substr(t));
  if (perm.empty()) {
    for (size_t k = 0; k < dims.size(); ++k) perm.push_back(k);
  }
  if (shape.size() != 2 || perm.size() != dims.size()) {
    return InvalidArgument("replica_groups=" + std::string(text) +
                           ": expected [groups,size]<=[dims]");
  }
  // Factors of the transposed dims, split at the group boundary.
  struct Factor {
    int64_t size;
    int64_t origin;
    bool group;
  };
  std::vector<Factor> factors;
  int64_t prefix = 1;
  const int64_t groups = shape[0];
  for (int64_t p : perm) {
    const int64_t d = dims[p];
    if (prefix >= groups) {
      factors.push_back({d, p, false});
    } else if (prefix * d <= groups) {
      factors.push_back({d, p, true});
      prefix *= d;
    } else if (groups % prefix == 0 && d % (groups / prefix) == 0) {
      const int64_t a = groups / prefix;
      factors.push_back({a, p, true});
      factors.push_back({d / a, p, false});
      prefix = groups;
    } else {
      return InvalidArgument("replica_groups=" + std::string(text) +
                             ": the groups split a dimension unevenly");
    }
  }
  std::vector<int64_t> sizes;
  for (const Factor& f : factors) sizes.push_back(f.size);
  const std::optional<std::vector<int64_t>> scaled = FactorOnto(sizes, space);
  if (!scaled) {
    return InvalidArgument("replica_groups=" + std::string(text) +
                           ": cannot be scaled onto " + std::to_string(space) +
                           " ids");
  }
  std::vector<int64_t> new_dims(dims.size(), 1);
  int64_t new_groups = 1;
  for (size_t k = 0; k < factors.size(); ++k) {
    new_dims[factors[k].origin] *= (*scaled)[k];
    if (factors[k].group) new_groups *= (*scaled)[k];
  }
  std::string out = "[" + std::to_string(new_groups) + "," +
                    std::to_string(space / new_groups) + "]<=[" +
                    Join(new_dims) + "]";
  if (t != std::string_view::npos) out += "T(" + Join(perm) + ")";
  return out;
}

Status ScaleCollectiveGroups(HloModule* module, const DeviceMesh& to,
                             std::vector<SizeRatio>* ratios) {
  for (HloComputation* c : module->computations()) {
    for (HloInstruction* i : c->instructions()) {
      if (IsDeviceOp(i->opcode())) {
        RETURN_IF_ERROR(ScaleOne(*i, to, ratios));
      }
    }
  }
  return Status::Ok();
}

}  // namespace trench::fuzz
