// Which devices a collective combines (operation_semantics.md, "AllReduce",
// "AllGather", "AllToAll", "CollectivePermute", "ReduceScatter"; XLA's
// collective_ops_utils GetParticipatingDevicesGroups): the raw attributes
// replica_groups (list form {{0,1},{2,3}}, iota form
// [G,S]<=[d0,d1,...] with an optional T(p0,p1,...)) and
// source_target_pairs, and the group mode XLA derives from channel_id and
// use_global_device_ids.
//
// Devices form a mesh of R replicas x P partitions; a device's global id
// is replica * P + partition. Modes (ids in the groups are):
//   cross-replica               no channel_id: replica ids; one group per
//                               listed group and partition.
//   cross-partition             channel_id, no use_global_device_ids
//                               attribute (all-to-all, collective-permute):
//                               partition ids; one group per listed group
//                               and replica.
//   cross-replica-and-partition channel_id, use_global_device_ids=false:
//                               replica ids; each group holds every
//                               partition of its replicas (replica major).
//   flattened-id                channel_id, use_global_device_ids=true:
//                               global ids as written.
// Empty replica_groups mean one group of every replica (every partition in
// cross-partition mode); flattened-id mode needs them written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench {

// A replica_groups attribute's groups, ids as written ({} gives none).
// InvalidArgument naming the problem and its column (1-based) otherwise:
// a malformed list, an iota form whose sizes do not match or that holds
// more than 2^20 ids, a bad permutation, a negative id.
StatusOr<std::vector<std::vector<int64_t>>> ParseReplicaGroups(
    std::string_view text);

// A source_target_pairs attribute: {{0,1},{1,2}}. Errors as above; a pair
// must have two ids.
StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParseSourceTargetPairs(
    std::string_view text);

enum class CollectiveGroupMode {
  kCrossReplica,
  kCrossPartition,
  kCrossReplicaAndPartition,
  kFlattenedId,
};
const char* CollectiveGroupModeName(CollectiveGroupMode mode);

struct DeviceMesh {
  int64_t replicas = 1, partitions = 1;
  int64_t size() const { return replicas * partitions; }
  bool operator==(const DeviceMesh&) const = default;
};

// The meshes the project models: 1..kMaxMeshDevices devices.
inline constexpr int64_t kMaxMeshDevices = 4096;
// InvalidArgument naming the field ("mesh.partitions: expected an integer
// in 1..4096, got 0") unless `mesh` has 1..kMaxMeshDevices devices.
Status CheckMesh(const DeviceMesh& mesh);

// Whether `op` exchanges data between devices (all-reduce, all-gather,
// reduce-scatter, all-to-all, collective-permute).
bool IsCollective(HloOpcode op);

// IsCollective, or partition-id / replica-id: the ops whose value depends
// on the device that runs them.
bool IsDeviceOp(HloOpcode op);

// `instr`'s group mode (see the file comment). InvalidArgument for
// use_global_device_ids=true without channel_id, or an attribute value
// that is not a boolean or an integer.
StatusOr<CollectiveGroupMode> GroupModeOf(const HloInstruction& instr);

// Every group of devices `instr` (an all-reduce, all-gather,
// reduce-scatter or all-to-all) combines on `mesh`: global ids, in the
// order the members' operands are combined or concatenated. Errors
// (InvalidArgument, naming the instruction): an id outside the mesh, a
// device in two groups or in none, groups of different sizes where the op
// needs one size (all-gather, reduce-scatter, all-to-all).
StatusOr<std::vector<std::vector<int64_t>>> DeviceGroups(
    const HloInstruction& instr, const DeviceMesh& mesh);

// A collective-permute's (source, target) pairs as global ids on `mesh`
// (each listed pair once per replica in cross-partition mode, once per
// partition in cross-replica mode). Errors: an id outside the mesh, a
// device that is the source or the target of two pairs.
StatusOr<std::vector<std::pair<int64_t, int64_t>>> PermutePairs(
    const HloInstruction& instr, const DeviceMesh& mesh);

}  // namespace trench
