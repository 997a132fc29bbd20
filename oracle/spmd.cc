#include "oracle/spmd.h"

#include <algorithm>
#include <functional>
#include <map>
#include <thread>

#include "oracle/collectives.h"
#include "oracle/evaluator_internal.h"

namespace trench {
namespace oracle {
namespace {

// The value of a collective on this device given every member's operands
// (`members`, group order) and its position `me` in the group.
StatusOr<Literal> CollectiveValue(const HloInstruction& instr,
                                  const GroupOperands& members, int64_t me,
                                  CallContext& ctx, int threads) {
  const std::vector<Shape> shapes = CollectiveShapes(instr);
  StatusOr<std::vector<Literal>> v = [&]() -> StatusOr<std::vector<Literal>> {
    switch (instr.opcode()) {
      case HloOpcode::kAllReduce:
        return AllReduceValues(instr, members, ctx, threads);
      case HloOpcode::kAllGather:
        return AllGatherValues(instr, shapes, members);
      case HloOpcode::kReduceScatter: {
        ASSIGN_OR_RETURN(std::vector<Literal> sums,
                         AllReduceValues(instr, members, ctx, threads));
        return Chunks(instr, shapes, sums, me,
                      static_cast<int64_t>(members.size()));
      }
      case HloOpcode::kAllToAll:
        return AllToAllValues(instr, shapes, members, me);
      default:
        return Unimplemented("unsupported op " +
                             std::string(OpcodeName(instr.opcode())));
    }
  }();
  if (!v.ok()) return v.status();
  return CollectiveResult(std::move(v).value(), instr);
}

// One device of a mesh, for the plain evaluator.
class MeshDevice final : public DeviceCollectives {
 public:
  MeshDevice(int64_t device, const DeviceMesh& mesh, Rendezvous* rendezvous)
      : place_(device, mesh, rendezvous), mesh_(mesh) {}

  StatusOr<Literal> Evaluate(const HloInstruction& instr, Operands ops,
                             CallContext& ctx, int threads) override {
    const HloOpcode op = instr.opcode();
    if (op == HloOpcode::kPartitionId || op == HloOpcode::kReplicaId) {
      return place_.Id(instr);
    }
    std::vector<const Literal*> mine(ops.begin(), ops.end());
    if (op == HloOpcode::kCollectivePermute) {
      ASSIGN_OR_RETURN(auto pairs, PermutePairs(instr, mesh_));
      return place_.Meet(
          instr, std::move(mine),
          [&](const GroupOperands& members, int64_t) -> StatusOr<Literal> {
            ASSIGN_OR_RETURN(std::vector<Literal> v,
                             PermuteValues(instr, CollectiveShapes(instr),
                                           members, place_.device(), pairs));
            return CollectiveResult(std::move(v), instr);
          });
    }
    return place_.Meet(
        instr, std::move(mine), [&](const GroupOperands& members, int64_t me) {
          return CollectiveValue(instr, members, me, ctx, threads);
        });
  }

 private:
  MeshPlace place_;
  DeviceMesh mesh_;
};

}  // namespace

StatusOr<Literal> EvaluateCollectiveAlone(const HloInstruction& instr,
                                          Operands ops, CallContext& ctx,
                                          int threads) {
  MeshDevice alone(0, DeviceMesh{}, nullptr);
  return alone.Evaluate(instr, ops, ctx, threads);
}

}  // namespace oracle

Status CheckMeshArguments(const DeviceMesh& mesh, size_t argument_lists) {
  RETURN_IF_ERROR(CheckMesh(mesh));
  if (static_cast<int64_t>(argument_lists) != mesh.size()) {
    return InvalidArgument("the mesh has " + std::to_string(mesh.size()) +
                           " devices, got arguments for " +
                           std::to_string(argument_lists));
  }
  return Status::Ok();
}

int ThreadsPerDevice(const EvaluatorOptions& options, int64_t devices) {
  const int64_t hw = options.threads > 0
                         ? options.threads
                         : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(std::max<int64_t>(1, hw / devices));
}

StatusOr<std::vector<Literal>> EvaluateSpmd(
    const HloModule& module, std::span<const std::vector<Literal>> args,
    const SpmdOptions& options) {
  const DeviceMesh& mesh = options.mesh;
  RETURN_IF_ERROR(CheckMeshArguments(mesh, args.size()));
  const int64_t n = mesh.size();
  EvaluatorOptions eo = options.evaluator;
  eo.threads = ThreadsPerDevice(options.evaluator, n);
  std::vector<Literal> out(n);
  RETURN_IF_ERROR(oracle::RunDevices(
      n, [&](int64_t d, oracle::Rendezvous& rendezvous) -> Status {
        oracle::MeshDevice device(d, mesh, &rendezvous);
        ASSIGN_OR_RETURN(out[d], oracle::EvaluateEntryOn(module, args[d], eo,
                                                         nullptr, &device));
        return Status::Ok();
      }));
  return out;
}

}  // namespace trench
