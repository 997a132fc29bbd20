#include "compiler/ir/collective_groups.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <set>

namespace trench {
namespace {

// A cursor over an attribute's text; errors name the 1-based column.
class Cursor {
 public:
  Cursor(std::string_view text, const char* what) : s_(text), what_(what) {}

  void SkipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])))
      ++i_;
  }
  bool Peek(char c) {
    SkipSpace();
    return i_ < s_.size() && s_[i_] == c;
  }
  bool Eat(char c) {
    if (!Peek(c)) return false;
    ++i_;
    return true;
  }
  Status Expect(char c) {
    if (Eat(c)) return Status::Ok();
    return Error(std::string("expected '") + c + "'");
  }
  bool Eat(std::string_view word) {
    SkipSpace();
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  StatusOr<int64_t> Number() {
    SkipSpace();
    const size_t start = i_;
    int64_t v = 0;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
      if (v > (INT64_MAX - 9) / 10) return Error("number too large", start);
      v = v * 10 + (s_[i_++] - '0');
    }
    if (i_ == start) return Error("expected a non-negative integer");
    return v;
  }
  // A comma-separated list of numbers between `open` and `close`.
  StatusOr<std::vector<int64_t>> Numbers(char open, char close) {
    RETURN_IF_ERROR(Expect(open));
    std::vector<int64_t> out;
    if (Eat(close)) return out;
    do {
      ASSIGN_OR_RETURN(int64_t v, Number());
      out.push_back(v);
    } while (Eat(','));
    RETURN_IF_ERROR(Expect(close));
    return out;
  }
  Status End() {
    SkipSpace();
    if (i_ == s_.size()) return Status::Ok();
    return Error("unexpected text after the value");
  }
  Status Error(const std::string& message) const { return Error(message, i_); }
  Status Error(const std::string& message, size_t at) const {
    return InvalidArgument(std::string(what_) + " '" + std::string(s_) +
                           "', column " + std::to_string(at + 1) + ": " +
                           message);
  }

 private:
  std::string_view s_;
  const char* what_;
  size_t i_ = 0;
};

// The iota form's groups: iota over prod(dims), reshaped to dims,
// transposed by perm, read row major into G groups of S.
StatusOr<std::vector<std::vector<int64_t>>> IotaGroups(Cursor& c) {
  ASSIGN_OR_RETURN(std::vector<int64_t> gs, c.Numbers('[', ']'));
  if (gs.size() != 2) return c.Error("the iota form starts with [groups,size]");
  if (!c.Eat("<=")) return c.Error("expected '<='");
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, c.Numbers('[', ']'));
  if (dims.empty()) return c.Error("the iota form needs reshape dimensions");
  std::vector<int64_t> perm(dims.size());
  for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int64_t>(k);
  if (c.Eat('T')) {
    ASSIGN_OR_RETURN(perm, c.Numbers('(', ')'));
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    bool permutation = sorted.size() == dims.size();
    for (size_t k = 0; permutation && k < sorted.size(); ++k) {
      permutation = sorted[k] == static_cast<int64_t>(k);
    }
    if (!permutation) {
      return c.Error("T(...) is not a permutation of the reshape dimensions");
    }
  }
  RETURN_IF_ERROR(c.End());
  // Meshes have thousands of devices; 2^20 ids bound the work here.
  constexpr int64_t kMaxIds = int64_t{1} << 20;
  int64_t total = 1;
  for (int64_t d : dims) {
    if (d == 0 || total > kMaxIds / d) {
      return c.Error("the reshape must hold between 1 and " +
                     std::to_string(kMaxIds) + " ids");
    }
    total *= d;
  }
  // Divide rather than multiply: groups and size may each be near 2^63.
  if (gs[0] == 0 || gs[1] == 0 || total % gs[0] != 0 ||
      total / gs[0] != gs[1]) {
    return c.Error(std::to_string(gs[0]) + " groups of " +
                   std::to_string(gs[1]) + " do not hold the " +
                   std::to_string(total) + " ids of the reshape");
  }
  const size_t rank = dims.size();
  std::vector<int64_t> stride(rank, 1);
  for (size_t k = rank - 1; k > 0; --k) stride[k - 1] = stride[k] * dims[k];
  std::vector<int64_t> tdims(rank);
  for (size_t k = 0; k < rank; ++k) tdims[k] = dims[perm[k]];
  std::vector<int64_t> j(rank, 0);
  std::vector<std::vector<int64_t>> groups(gs[0]);
  for (int64_t n = 0; n < total; ++n) {
    int64_t linear = 0;
    for (size_t k = 0; k < rank; ++k) linear += j[k] * stride[perm[k]];
    groups[n / gs[1]].push_back(linear);
    for (size_t k = rank; k-- > 0;) {
      if (++j[k] < tdims[k]) break;
      j[k] = 0;
    }
  }
  return groups;
}

// Whether the raw attribute `key` is present; its value in *value.
bool Raw(const HloInstruction& instr, const char* key, std::string* value) {
  const std::string* v = instr.attrs().FindRaw(key);
  if (v == nullptr) return false;
  *value = *v;
  return true;
}

Status OnMesh(const HloInstruction& instr, int64_t id, int64_t limit,
              const char* kind) {
  if (id < limit) return Status::Ok();
  return InvalidArgument("%" + instr.name() + ": " + kind + " id " +
                         std::to_string(id) + " is outside the mesh (" +
                         std::to_string(limit) + " " + kind + "s)");
}

}  // namespace

StatusOr<std::vector<std::vector<int64_t>>> ParseReplicaGroups(
    std::string_view text) {
  Cursor c(text, "replica_groups");
  if (c.Peek('[')) return IotaGroups(c);
  RETURN_IF_ERROR(c.Expect('{'));
  std::vector<std::vector<int64_t>> groups;
  if (!c.Eat('}')) {
    do {
      ASSIGN_OR_RETURN(std::vector<int64_t> g, c.Numbers('{', '}'));
      groups.push_back(std::move(g));
    } while (c.Eat(','));
    RETURN_IF_ERROR(c.Expect('}'));
  }
  RETURN_IF_ERROR(c.End());
  return groups;
}

StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParseSourceTargetPairs(
    std::string_view text) {
  Cursor c(text, "source_target_pairs");
  RETURN_IF_ERROR(c.Expect('{'));
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (!c.Eat('}')) {
    do {
      ASSIGN_OR_RETURN(std::vector<int64_t> p, c.Numbers('{', '}'));
      if (p.size() != 2) return c.Error("a pair needs a source and a target");
      pairs.emplace_back(p[0], p[1]);
    } while (c.Eat(','));
    RETURN_IF_ERROR(c.Expect('}'));
  }
  RETURN_IF_ERROR(c.End());
  return pairs;
}

Status CheckMesh(const DeviceMesh& mesh) {
  for (const auto& [name, v] :
       {std::pair<const char*, int64_t>{"replicas", mesh.replicas},
        {"partitions", mesh.partitions}}) {
    if (v < 1 || v > kMaxMeshDevices) {
      return InvalidArgument(
          std::string("mesh.") + name + ": expected an integer in 1.." +
          std::to_string(kMaxMeshDevices) + ", got " + std::to_string(v));
    }
  }
  if (mesh.size() > kMaxMeshDevices) {
    return InvalidArgument("mesh: " + std::to_string(mesh.size()) +
                           " devices, at most " +
                           std::to_string(kMaxMeshDevices));
  }
  return Status::Ok();
}

const char* CollectiveGroupModeName(CollectiveGroupMode mode) {
  switch (mode) {
    case CollectiveGroupMode::kCrossReplica:
      return "cross-replica";
    case CollectiveGroupMode::kCrossPartition:
      return "cross-partition";
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      return "cross-replica-and-partition";
    case CollectiveGroupMode::kFlattenedId:
      return "flattened-id";
  }
  return "?";
}

bool IsCollective(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllGather:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectivePermute:
      return true;
    default:
      return false;
  }
}

bool IsDeviceOp(HloOpcode op) {
  return IsCollective(op) || op == HloOpcode::kPartitionId ||
         op == HloOpcode::kReplicaId;
}

StatusOr<CollectiveGroupMode> GroupModeOf(const HloInstruction& instr) {
  std::string v;
  const bool channel = Raw(instr, "channel_id", &v);
  if (channel &&
      (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)) {
    return InvalidArgument("%" + instr.name() + ": channel_id=" + v +
                           " is not a non-negative integer");
  }
  const HloOpcode op = instr.opcode();
  const bool takes_global = op == HloOpcode::kAllReduce ||
                            op == HloOpcode::kAllGather ||
                            op == HloOpcode::kReduceScatter;
  bool global = false;
  if (Raw(instr, "use_global_device_ids", &v)) {
    if (v != "true" && v != "false") {
      return InvalidArgument("%" + instr.name() + ": use_global_device_ids=" +
                             v + " is not true or false");
    }
    global = v == "true";
  }
  if (!channel) {
    if (global) {
      return InvalidArgument("%" + instr.name() +
                             ": use_global_device_ids=true needs a channel_id");
    }
    return CollectiveGroupMode::kCrossReplica;
  }
  if (!takes_global) return CollectiveGroupMode::kCrossPartition;
  return global ? CollectiveGroupMode::kFlattenedId
                : CollectiveGroupMode::kCrossReplicaAndPartition;
}

StatusOr<std::vector<std::vector<int64_t>>> DeviceGroups(
    const HloInstruction& instr, const DeviceMesh& mesh) {
  ASSIGN_OR_RETURN(CollectiveGroupMode mode, GroupModeOf(instr));
  std::vector<std::vector<int64_t>> listed;
  if (std::string v; Raw(instr, "replica_groups", &v)) {
    ASSIGN_OR_RETURN(listed, ParseReplicaGroups(v));
  }
  const int64_t R = mesh.replicas, P = mesh.partitions;
  if (listed.empty()) {
    if (mode == CollectiveGroupMode::kFlattenedId) {
      return InvalidArgument("%" + instr.name() +
                             ": use_global_device_ids=true needs "
                             "replica_groups");
    }
    const int64_t n = mode == CollectiveGroupMode::kCrossPartition ? P : R;
    listed.emplace_back();
    for (int64_t k = 0; k < n; ++k) listed.back().push_back(k);
  }
  std::vector<std::vector<int64_t>> groups;
  for (const std::vector<int64_t>& g : listed) {
    switch (mode) {
      case CollectiveGroupMode::kCrossReplica:
        for (int64_t id : g) RETURN_IF_ERROR(OnMesh(instr, id, R, "replica"));
        for (int64_t p = 0; p < P; ++p) {
          groups.emplace_back();
          for (int64_t r : g) groups.back().push_back(r * P + p);
        }
        break;
      case CollectiveGroupMode::kCrossPartition:
        for (int64_t id : g) {
          RETURN_IF_ERROR(OnMesh(instr, id, P, "partition"));
        }
        for (int64_t r = 0; r < R; ++r) {
          groups.emplace_back();
          for (int64_t p : g) groups.back().push_back(r * P + p);
        }
        break;
      case CollectiveGroupMode::kCrossReplicaAndPartition:
        for (int64_t id : g) RETURN_IF_ERROR(OnMesh(instr, id, R, "replica"));
        groups.emplace_back();
        for (int64_t r : g) {
          for (int64_t p = 0; p < P; ++p) groups.back().push_back(r * P + p);
        }
        break;
      case CollectiveGroupMode::kFlattenedId:
        for (int64_t id : g) {
          RETURN_IF_ERROR(OnMesh(instr, id, R * P, "device"));
        }
        groups.push_back(g);
        break;
    }
  }
  std::vector<int> seen(mesh.size(), 0);
  for (const std::vector<int64_t>& g : groups) {
    if (g.empty()) {
      return InvalidArgument("%" + instr.name() + ": an empty replica group");
    }
    for (int64_t d : g) {
      if (++seen[d] > 1) {
        return InvalidArgument("%" + instr.name() + ": device " +
                               std::to_string(d) + " is in two groups");
      }
    }
  }
  for (int64_t d = 0; d < mesh.size(); ++d) {
    if (seen[d] == 0) {
      return InvalidArgument("%" + instr.name() + ": device " +
                             std::to_string(d) + " is in no group (" +
                             CollectiveGroupModeName(mode) + " mode)");
    }
  }
  if (instr.opcode() != HloOpcode::kAllReduce) {
    for (const std::vector<int64_t>& g : groups) {
      if (g.size() != groups[0].size()) {
        return InvalidArgument("%" + instr.name() +
                               ": groups of different sizes (" +
                               std::to_string(groups[0].size()) + " and " +
                               std::to_string(g.size()) + ")");
      }
    }
  }
  return groups;
}

StatusOr<std::vector<std::pair<int64_t, int64_t>>> PermutePairs(
    const HloInstruction& instr, const DeviceMesh& mesh) {
  ASSIGN_OR_RETURN(CollectiveGroupMode mode, GroupModeOf(instr));
  std::vector<std::pair<int64_t, int64_t>> listed;
  if (std::string v; Raw(instr, "source_target_pairs", &v)) {
    ASSIGN_OR_RETURN(listed, ParseSourceTargetPairs(v));
  }
  const int64_t R = mesh.replicas, P = mesh.partitions;
  const bool by_partition = mode == CollectiveGroupMode::kCrossPartition;
  const int64_t limit = by_partition ? P : R;
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& [s, t] : listed) {
    const char* kind = by_partition ? "partition" : "replica";
    RETURN_IF_ERROR(OnMesh(instr, s, limit, kind));
    RETURN_IF_ERROR(OnMesh(instr, t, limit, kind));
    for (int64_t k = 0; k < (by_partition ? R : P); ++k) {
      out.emplace_back(by_partition ? k * P + s : s * P + k,
                       by_partition ? k * P + t : t * P + k);
    }
  }
  std::set<int64_t> sources, targets;
  for (const auto& [s, t] : out) {
    if (!sources.insert(s).second) {
      return InvalidArgument("%" + instr.name() + ": device " +
                             std::to_string(s) + " is the source of two pairs");
    }
    if (!targets.insert(t).second) {
      return InvalidArgument("%" + instr.name() + ": device " +
                             std::to_string(t) + " is the target of two pairs");
    }
  }
  return out;
}

}  // namespace trench
