// SPMD programs for fuzzing: whether a program's collectives fit a mesh,
// and the mesh scaling of the trace cutter (subgraph.h), which shrinks a
// 128-device program to a few devices as ScaleShapes shrinks its arrays.
//
// Mesh scaling keeps each collective's group structure:
//   iota groups   [G,S]<=[d0,d1,..]T(p..) is split into factors at the
//                 group boundary (the transposed dims, one of them split
//                 in two where G falls inside it), each factor shrunk to a
//                 power of two at most its size so that their product is
//                 the scaled id space; every factor > 1 keeps at least 2
//                 where the space allows: [2,64]<=[128] -> [2,2]<=[4],
//                 [64,2]<=[2,64]T(1,0) -> [2,2]<=[2,2]T(1,0);
//   list groups   the first G' groups, the first S' members of each
//                 (G' x S' chosen as for the iota form), ids renumbered
//                 by rank: {{0,2},{1,3},{4,6},{5,7}} -> {{0,2},{1,3}};
//   source_target_pairs  each id taken modulo the scaled space (a ring
//                 stays a ring with the same shift when the space divides
//                 the old one); duplicate pairs and pairs that would give
//                 a device two sources or two targets are dropped.
// The id space of a collective follows its group mode
// (collective_groups.h): replicas (cross-replica, cross-replica-and-
// partition), partitions (cross-partition) or every device (flattened).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_module.h"

namespace trench::fuzz {

// Ok when every device op of `module` (IsDeviceOp, any computation) fits
// `mesh`: its groups or pairs resolve (DeviceGroups, PermutePairs), and its
// shapes fit its group size S: all-reduce and collective-permute keep each
// operand's dims; all-gather multiplies dimensions={d} by S; reduce-scatter
// divides it by S; all-to-all keeps dims with dimension d divisible by S,
// or (without dimensions) takes S operands with results of their shapes.
// InvalidArgument naming the instruction and the rule otherwise.
Status CheckCollectives(const HloModule& module, const DeviceMesh& mesh);

// The mesh a trace was written for: the module header's replica_count and
// num_partitions when given; else as many replicas as the largest replica
// id its cross-replica collectives name, and as many partitions as its
// largest partition id, or global id over the replicas (at least 1 each).
DeviceMesh TraceMesh(const HloModule& module);

// The mesh a trace of `mesh` is scaled to, with at most `max_devices`
// (>= 1) devices: replicas and partitions each kept when 1, both 2 when
// both exceed 1 and max_devices >= 4, else the one that exceeds 1 shrunk
// to at most max_devices.
DeviceMesh ScaledMesh(const DeviceMesh& mesh, int64_t max_devices);

// The group-size change of one all-gather or reduce-scatter: the size
// `large` of its gathered (scattered) dim over the size `small` of the
// other side was S, is S' now; ScaleShapes must give large the factor
// g(large) = g(small) * S / S' (subgraph.h ScaleConstraints).
struct SizeRatio {
  int64_t small = 1, large = 1;
  int64_t ratio = 1;  // S / S', a power of two.
};

// Rewrites the replica_groups and source_target_pairs of every device op
// of *module for mesh `to` (see the file comment; the old id spaces are
// those the attributes name) and
// appends the size relations its all-gathers and reduce-scatters need to
// *ratios. Shapes are left as they are. Errors (InvalidArgument naming the
// instruction): attributes that do not parse, an id space that cannot be
// factored onto the scaled one (a group size that is not a power of two
// times what fits), an all-gather or reduce-scatter whose shapes do not
// give its group size. *module is then partly rewritten.
Status ScaleCollectiveGroups(HloModule* module, const DeviceMesh& to,
                             std::vector<SizeRatio>* ratios);

// The list form of groups (or of source_target_pairs, pairs being groups
// of two): "{{0,1},{2,3}}"; "{}" for none.
std::string ReplicaGroupsText(const std::vector<std::vector<int64_t>>& groups);

// ScaleCollectiveGroups' rewrite of one iota replica_groups value onto an
// id space of `space` ids (exposed for tests): "[2,64]<=[128]", 4 ->
// "[2,2]<=[4]". InvalidArgument when `text` is not the iota form or
// cannot be factored onto `space`.
StatusOr<std::string> ScaleIotaGroups(std::string_view text, int64_t space);

}  // namespace trench::fuzz
