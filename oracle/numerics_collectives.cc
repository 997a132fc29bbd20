// Bounds of collectives across the devices of a mesh (the rules are in
// oracle/numerics_contract.h):
//  - all-reduce: the members' operands reduced as one reduce over their
//    stack [n, ...] (with to_apply's identity as init), so a sum gets the
//    freedom of any order of the n terms (n u sum |x| and the rest of the
//    reduce rule) and a max or min the unspecified sign of zeros;
//  - reduce-scatter: the all-reduce's bound, chunked as the values are;
//  - all-gather, all-to-all, collective-permute: data movement, each
//    element's bound moves with it (zeros a permute writes are exact);
//  - partition-id, replica-id: exact.
#include <cstring>

#include "oracle/index_util.h"
#include "oracle/numerics_internal.h"

namespace trench::oracle::numerics {
namespace {

// Operand `k` of every member stacked along a new dimension 0.
Literal Stack(const GroupOperands& members, size_t k, PrimitiveType type) {
  std::vector<int64_t> dims = members[0][k]->shape().dims();
  dims.insert(dims.begin(), static_cast<int64_t>(members.size()));
  Literal out = Literal::CreateUninitialized(Shape(type, dims));
  size_t at = 0;
  for (const auto& m : members) {
    const auto bytes = m[k]->bytes();
    if (!bytes.empty()) {
      std::memcpy(out.mutable_bytes().data() + at, bytes.data(), bytes.size());
    }
    at += bytes.size();
  }
  return out;
}

// The identity of `kind` in `type` (anything for the other reducers,
// whose bound rules do not use the init's value).
Literal Identity(ReducerKind kind, PrimitiveType type) {
  Literal out(Shape(type, {}));
  const bool fp = IsFloat(type);
  switch (kind) {
    case ReducerKind::kMul:
    case ReducerKind::kAnd:
      out.SetFromDouble(0, 1);
      break;
    case ReducerKind::kMax:
      if (fp) {
        out.SetFromDouble(0, -kInf);
      } else if (type != PrimitiveType::PRED) {
        out.SetFromInt64(0, IsUnsigned(type) ? 0 : INT64_MIN);
      }
      break;
    case ReducerKind::kMin:
      if (fp) {
        out.SetFromDouble(0, kInf);
      } else if (type == PrimitiveType::PRED) {
        out.SetFromDouble(0, 1);
      } else {
        out.SetFromInt64(0, IsUnsigned(type) ? -1 : INT64_MAX);
      }
      break;
    default:
      break;
  }
  return out;
}

// The bounds of an all-reduce's results `values` (one per operand) from
// the members' values and bounds.
StatusOr<std::vector<Literal>> AllReduceBounds(BoundsEvaluator& ev,
                                               const HloInstruction& instr,
                                               const GroupOperands& values_in,
                                               const GroupOperands& bounds_in,
                                               const std::vector<Literal>& y) {
  std::vector<Literal> out;
  for (size_t k = 0; k < y.size(); ++k) {
    if (values_in.size() == 1) {  // Alone: the operand itself.
      out.push_back(*bounds_in[0][k]);
      continue;
    }
    const PrimitiveType t = y[k].element_type();
    const Bounded x{Stack(values_in, k, t),
                    Stack(bounds_in, k, PrimitiveType::F64)};
    const Bounded init{Identity(ClassifyReducer(*instr.to_apply(), t), t),
                       FilledBound(Shape(t, {}), 0)};
    const Bounded* ops[] = {&x, &init};
    const HloInstruction& reduce =
        ev.ReduceOverDevices(instr, static_cast<int64_t>(k), y[k].shape());
    ASSIGN_OR_RETURN(Literal e, ReduceBound(ev, reduce, ops, y[k],
                                            /*across_devices=*/true));
    out.push_back(std::move(e));
  }
  return out;
}

class BoundedMeshDevice final : public BoundedCollectives {
 public:
  BoundedMeshDevice(int64_t device, const DeviceMesh& mesh,
                    Rendezvous* rendezvous)
      : place_(device, mesh, rendezvous), mesh_(mesh) {}

  StatusOr<Bounded> Evaluate(BoundsEvaluator& ev, const HloInstruction& instr,
                             BoundedOps ops) override {
    const HloOpcode op = instr.opcode();
    if (op == HloOpcode::kPartitionId || op == HloOpcode::kReplicaId) {
      ASSIGN_OR_RETURN(Literal v, place_.Id(instr));
      Literal e = FilledBound(v.shape(), 0);
      return Bounded{std::move(v), std::move(e)};
    }
    // Each member brings its values, then their bounds. Each computes its
    // own result (not shared): the reasons for undetermined elements are
    // noted in its own evaluator.
    std::vector<const Literal*> mine;
    for (const Bounded* b : ops) mine.push_back(&b->v);
    for (const Bounded* b : ops) mine.push_back(&b->e);
    std::vector<std::pair<int64_t, int64_t>> pairs;
    if (op == HloOpcode::kCollectivePermute) {
      ASSIGN_OR_RETURN(pairs, PermutePairs(instr, mesh_));
    }
    const size_t m = ops.size();
    ASSIGN_OR_RETURN(
        Literal both,
        place_.Meet(
            instr, std::move(mine),
            [&](const GroupOperands& members, int64_t me) -> StatusOr<Literal> {
              GroupOperands v_in, e_in;
              for (const auto& mem : members) {
                v_in.emplace_back(mem.begin(), mem.begin() + m);
                e_in.emplace_back(mem.begin() + m, mem.end());
              }
              return Results(ev, instr, v_in, e_in, me, pairs);
            },
            /*share=*/false));
    auto& parts = both.mutable_tuple_elements();
    return Bounded{std::move(parts[0]), std::move(parts[1])};
  }

 private:
  // (value, bound) of `instr` on this device, as a pair.
  StatusOr<Literal> Results(
      BoundsEvaluator& ev, const HloInstruction& instr,
      const GroupOperands& v_in, const GroupOperands& e_in, int64_t me,
      const std::vector<std::pair<int64_t, int64_t>>& pairs) {
    const std::vector<Shape> shapes = CollectiveShapes(instr);
    std::vector<Shape> f64;
    for (const Shape& s : shapes) f64.push_back(F64Shape(s));
    const int64_t n = static_cast<int64_t>(v_in.size());
    std::vector<Literal> v, e;
    switch (instr.opcode()) {
      case HloOpcode::kAllReduce:
      case HloOpcode::kReduceScatter: {
        ASSIGN_OR_RETURN(v, AllReduceValues(instr, v_in, ev, ev.threads()));
        ASSIGN_OR_RETURN(e, AllReduceBounds(ev, instr, v_in, e_in, v));
        if (instr.opcode() == HloOpcode::kReduceScatter) {
          ASSIGN_OR_RETURN(v, Chunks(instr, shapes, v, me, n));
          ASSIGN_OR_RETURN(e, Chunks(instr, f64, e, me, n));
        }
        break;
      }
      case HloOpcode::kAllGather: {
        ASSIGN_OR_RETURN(v, AllGatherValues(instr, shapes, v_in));
        ASSIGN_OR_RETURN(e, AllGatherValues(instr, f64, e_in));
        break;
      }
      case HloOpcode::kAllToAll: {
        ASSIGN_OR_RETURN(v, AllToAllValues(instr, shapes, v_in, me));
        ASSIGN_OR_RETURN(e, AllToAllValues(instr, f64, e_in, me));
        break;
      }
      case HloOpcode::kCollectivePermute: {
        ASSIGN_OR_RETURN(
            v, PermuteValues(instr, shapes, v_in, place_.device(), pairs));
        ASSIGN_OR_RETURN(
            e, PermuteValues(instr, f64, e_in, place_.device(), pairs));
        break;
      }
      default:
        return Unimplemented("unsupported op " +
                             std::string(OpcodeName(instr.opcode())));
    }
    std::vector<Literal> pair;
    pair.push_back(CollectiveResult(std::move(v), instr));
    pair.push_back(CollectiveResult(std::move(e), instr));
    return Literal::Tuple(std::move(pair));
  }

  MeshPlace place_;
  DeviceMesh mesh_;
};

}  // namespace

std::unique_ptr<BoundedCollectives> MakeBoundedDevice(int64_t device,
                                                      const DeviceMesh& mesh,
                                                      Rendezvous* rendezvous) {
  return std::make_unique<BoundedMeshDevice>(device, mesh, rendezvous);
}

}  // namespace trench::oracle::numerics
