// The values collectives produce on one device from the operands every
// member of its group brought (operation_semantics.md: AllReduce,
// AllGather, ReduceScatter, AllToAll, CollectivePermute), and the
// rendezvous where the devices of an SPMD evaluation meet (spmd.h).
// Internal to oracle/.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/literal.h"
#include "oracle/kernels.h"

namespace trench::oracle {

// members[j]: the operands of the group's j-th device (group order);
// `me`: this device's position in the group; `shapes`: the results, one
// per operand (CollectiveShapes, or the same with F64 leaves when the
// members' operands are the contract's bounds). Each returns this
// device's results, one per operand. Errors: operands that do not match
// the op's shapes or attributes.
//  all-reduce      each operand folded over the members in group order
//                  with to_apply, elementwise (also a reduce-scatter's
//                  sums, before Chunks);
//  all-gather      each operand's members concatenated along dimensions[0];
//  all-to-all      with dimensions={d}: chunk `me` (along d) of every
//                  member, concatenated along d in member order; without:
//                  operand `me` of every member;
//  reduce-scatter  Chunks of the all-reduce's results: chunk `me` of `n`
//                  along dimensions[0];
//  collective-permute  the operand of the device whose pair targets
//                  `device` (members indexed by device), else zeros.
using GroupOperands = std::vector<std::vector<const Literal*>>;
std::vector<Shape> CollectiveShapes(const HloInstruction& instr);
// The op's value from its results: the tuple of them when its shape is a
// tuple, else the one result.
Literal CollectiveResult(std::vector<Literal> results,
                         const HloInstruction& instr);
StatusOr<std::vector<Literal>> AllReduceValues(const HloInstruction& instr,
                                               const GroupOperands& members,
                                               CallContext& ctx, int threads);
StatusOr<std::vector<Literal>> AllGatherValues(const HloInstruction& instr,
                                               const std::vector<Shape>& shapes,
                                               const GroupOperands& members);
StatusOr<std::vector<Literal>> AllToAllValues(const HloInstruction& instr,
                                              const std::vector<Shape>& shapes,
                                              const GroupOperands& members,
                                              int64_t me);
StatusOr<std::vector<Literal>> Chunks(const HloInstruction& instr,
                                      const std::vector<Shape>& shapes,
                                      const std::vector<Literal>& values,
                                      int64_t me, int64_t n);
StatusOr<std::vector<Literal>> PermuteValues(
    const HloInstruction& instr, const std::vector<Shape>& shapes,
    const GroupOperands& members, int64_t device,
    const std::vector<std::pair<int64_t, int64_t>>& pairs);

// Where the devices of one SPMD evaluation meet at their collectives. A
// device arriving at an instruction (its n-th execution there) waits for
// the other members of its group; all then read each other's operands,
// and none leaves before every member has read (the operands belong to
// the members' evaluations). A member that ended (finished, or failed)
// without arriving, or every running device waiting at a place no group
// completes, turns the waits into errors that name the devices: the first
// such diagnosis, for every wait from then on.
class Rendezvous {
 public:
  explicit Rendezvous(int64_t devices);

  // Device `device` arrives with `operands` at the `occurrence`-th
  // execution of `instr`, for the group `group` (global ids, group order;
  // it holds `device`). `compute` runs with every member's operands while
  // they are all present; its value is returned. With `same_for_all` (the
  // value does not depend on the member) it runs once, for the first
  // member to get there, and the others receive copies.
  StatusOr<Literal> Exchange(
      int64_t device, const HloInstruction& instr, int64_t occurrence,
      const std::vector<int64_t>& group, std::vector<const Literal*> operands,
      const std::function<StatusOr<Literal>(const GroupOperands&)>& compute,
      bool same_for_all = false);

  // `device`'s evaluation ended; waits for it fail.
  void Finished(int64_t device);

 private:
  using Key = std::tuple<const HloInstruction*, int64_t, int64_t>;
  struct Meeting {
    GroupOperands operands;  // By group position; filled as members come.
    int64_t arrived = 0, left = 0;
    // same_for_all: the value, once the member computing it is done.
    bool computing = false;
    std::optional<StatusOr<Literal>> shared;
  };
  // Why the meeting `key` of `group` cannot complete, or "" while it can.
  std::string Stuck(const Key& key, const std::vector<int64_t>& group) const;

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, Meeting> meetings_;
  std::vector<char> finished_;
  std::vector<const HloInstruction*> waiting_at_;  // Null: not waiting.
  int64_t running_;
  // The first diagnosis of a meeting that cannot complete: every wait
  // then fails with it ("" while none).
  std::string broken_;
};

// Runs body(d, rendezvous) for every device d < n, each on a thread of its
// own, sharing one rendezvous (Finished(d) is called when body returns).
// Returns the first device's own error (in device order), else the first
// failed wait, each prefixed "device d: "; Ok when every body is. A
// device no thread can be made for is ResourceExhausted (the started
// ones are not left waiting for it).
Status RunDevices(int64_t n,
                  const std::function<Status(int64_t, Rendezvous&)>& body);

// One device's place in an SPMD evaluation: its ids, the group it joins
// at each collective, and the rendezvous (null: the device is alone, a
// 1 x 1 mesh). Used by the plain evaluator (spmd.cc) and the contract's
// (numerics_collectives.cc). Not thread-safe: one per device.
class MeshPlace {
 public:
  MeshPlace(int64_t device, const DeviceMesh& mesh, Rendezvous* rendezvous)
      : device_(device), mesh_(mesh), rendezvous_(rendezvous) {}

  int64_t device() const { return device_; }
  // The value of partition-id or replica-id `instr` on this device.
  StatusOr<Literal> Id(const HloInstruction& instr) const;
  // Joins this device's group at `instr` (every device of the mesh for a
  // collective-permute, whose members are then indexed by device) with
  // `mine`; compute(members, me) gives the value, `me` this device's
  // position in the group. With `share`, an all-reduce's value (the same
  // on every member) is computed once for the group.
  StatusOr<Literal> Meet(
      const HloInstruction& instr, std::vector<const Literal*> mine,
      const std::function<StatusOr<Literal>(const GroupOperands&, int64_t)>&
          compute,
      bool share = true);

 private:
  int64_t device_;
  DeviceMesh mesh_;
  Rendezvous* rendezvous_;
  std::map<const HloInstruction*, int64_t> occurrences_;
};

}  // namespace trench::oracle
