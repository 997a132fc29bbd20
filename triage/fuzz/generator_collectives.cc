// Collectives of SPMD programs (GeneratorOptions::spmd_share): all-reduce,
// all-gather, reduce-scatter, all-to-all (with and without dimensions),
// collective-permute, partition-id and replica-id over the program's mesh,
// in every group mode XLA derives (collective_groups.h) and both
// replica_groups forms; an all-reduce's groups may differ in size, and an
// all-reduce may be a near-copy of an earlier one (the same key but for
// its groups' draw: what a combiner's key must tell apart). Collectives
// go into the entry only: every device runs the entry's instructions, so every
// group meets.
#include <algorithm>
#include <numeric>
#include <optional>

#include "compiler/ir/collective_groups.h"
#include "triage/fuzz/collective_scale.h"
#include "triage/fuzz/generator_internal.h"

namespace trench::fuzz::internal {
namespace {

using O = HloOpcode;
using P = PrimitiveType;

// How a collective names its devices: its attributes (channel_id,
// use_global_device_ids, replica_groups or source_target_pairs) and the
// size of each group it forms on the mesh.
struct Groups {
  std::string attrs;
  int64_t size = 1;
  // How ReduceGroups wrote them (form.ids == 0 for other groups), and the
  // replica_groups text.
  Gen::GroupForm form;
  std::string text;
};

// replica_groups over n ids in groups of `size` (a divisor of n): the
// iota form (contiguous, or strided through a transpose) or a list
// (contiguous, strided or shuffled); empty (all ids) when allowed and
// size == n.
std::string GroupText(Gen& g, int64_t n, int64_t size, bool may_be_empty) {
  const int64_t count = n / size;
  if (size == n && may_be_empty && g.rng.Chance(0.3)) return "{}";
  switch (g.rng.Uniform(0, 3)) {
    case 0:
      return "[" + std::to_string(count) + "," + std::to_string(size) + "]<=[" +
             std::to_string(n) + "]";
    case 1:
      return "[" + std::to_string(count) + "," + std::to_string(size) + "]<=[" +
             std::to_string(size) + "," + std::to_string(count) + "]T(1,0)";
    default: {
      std::vector<int64_t> ids(n);
      std::iota(ids.begin(), ids.end(), 0);
      const bool strided = g.rng.Chance(0.5);
      if (!strided) {
        for (int64_t k = n - 1; k > 0; --k) {
          std::swap(ids[k], ids[g.rng.Uniform(0, k)]);
        }
      }
      std::vector<std::vector<int64_t>> groups(count);
      for (int64_t k = 0; k < n; ++k) {
        groups[strided ? k % count : k / size].push_back(ids[k]);
      }
      return ReplicaGroupsText(groups);
    }
  }
}

// A divisor of n (> 1 when n > 1 and the draw wants one).
int64_t PickSize(Gen& g, int64_t n) {
  std::vector<int64_t> divisors;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) divisors.push_back(d);
  }
  if (n > 1 && g.rng.Chance(0.8)) divisors.erase(divisors.begin());
  return g.rng.Pick(divisors);
}

std::string Channel(Gen& g) {
  return "channel_id=" + std::to_string(++g.channels);
}

// The attributes of groups of `form` written as `text`: a fresh
// channel_id when the form has one, the replica_groups and the suffix.
std::string FormAttrs(Gen& g, const Gen::GroupForm& form,
                      const std::string& text) {
  return (form.channel ? Channel(g) + ", " : std::string()) +
         "replica_groups=" + text + form.suffix;
}

// Groups of an all-reduce, all-gather or reduce-scatter: cross-replica
// (no channel_id), cross-replica-and-partition (channel_id, with or
// without use_global_device_ids=false) or flattened ids.
Groups ReduceGroups(Gen& g) {
  const int64_t R = g.mesh.replicas, Pn = g.mesh.partitions;
  Groups out;
  Gen::GroupForm& form = out.form;
  switch (g.rng.Uniform(0, 2)) {
    case 0:
      form = {false, R, PickSize(g, R), true, ""};
      out.size = form.per_group;
      break;
    case 1:
      form = {true, R, PickSize(g, R), true,
              g.rng.Chance(0.5) ? ", use_global_device_ids=false" : ""};
      out.size = form.per_group * Pn;
      break;
    default:
      form = {true, R * Pn, PickSize(g, R * Pn), false,
              ", use_global_device_ids=true"};
      out.size = form.per_group;
      break;
  }
  out.text = GroupText(g, form.ids, form.per_group, form.may_be_empty);
  out.attrs = FormAttrs(g, form, out.text);
  return out;
}

// Groups of different sizes, which only an all-reduce may have (list form,
// over the replicas or the flattened ids): the ids shuffled and cut at
// random points into two or more groups. `size` is the largest group.
// nullopt when the ids are too few to differ (fewer than 3).
std::optional<Groups> UnevenGroups(Gen& g) {
  const int64_t R = g.mesh.replicas, Pn = g.mesh.partitions;
  // Over the flattened ids when the replicas alone are too few.
  const bool flattened = Pn > 1 && (R < 3 || g.rng.Chance(0.5));
  const int64_t n = flattened ? R * Pn : R;
  if (n < 3) return std::nullopt;
  std::vector<int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  for (int64_t k = n - 1; k > 0; --k) {
    std::swap(ids[k], ids[g.rng.Uniform(0, k)]);
  }
  // The first group's size differs from the rest's total split.
  const int64_t first = g.rng.Uniform(1, n - 1);
  std::vector<std::vector<int64_t>> groups(1);
  for (int64_t k = 0; k < n; ++k) {
    if (k == first ||
        (k > first && groups.back().size() >= 1 && g.rng.Chance(0.3))) {
      groups.emplace_back();
    }
    groups.back().push_back(ids[k]);
  }
  Groups out;
  bool differ = false;
  for (const auto& group : groups) {
    out.size = std::max<int64_t>(out.size, group.size());
    differ |= group.size() != groups[0].size();
  }
  if (!differ) {
    // Equal by chance: move one id over.
    groups[1].push_back(groups[0].back());
    groups[0].pop_back();
    if (groups[0].empty()) groups.erase(groups.begin());
    out.size = 0;
    for (const auto& group : groups) {
      out.size = std::max<int64_t>(out.size, group.size());
    }
  }
  out.attrs = (flattened ? Channel(g) + ", " : std::string()) +
              "replica_groups=" + ReplicaGroupsText(groups) +
              (flattened ? ", use_global_device_ids=true" : "");
  return out;
}

// Groups of an all-to-all: cross-replica or, with channel_id,
// cross-partition.
Groups ExchangeGroups(Gen& g) {
  const bool partitions = g.rng.Chance(0.5);
  const int64_t n = partitions ? g.mesh.partitions : g.mesh.replicas;
  Groups out;
  out.size = PickSize(g, n);
  out.attrs = (partitions ? Channel(g) + ", " : std::string()) +
              "replica_groups=" + GroupText(g, n, out.size, true);
  return out;
}

// The reduction `op` for values of type t, with x tamed for n members.
std::string ReducerOf(Gen& g, const std::string& op, P t, Value* x, int64_t n,
                      double* bound) {
  *x = TameFor(g, g.Finite(*x), op, static_cast<double>(n));
  *bound = BoundAfter(op, x->bound, static_cast<double>(n));
  return g.pb.ScalarBinary(t, op);
}

// A reducer for values of type t and x tamed for n members.
std::string Reducer(Gen& g, P t, Value* x, int64_t n, double* bound) {
  return ReducerOf(g, PickReducer(g, t), t, x, n, bound);
}

// A pool value of rank >= 1 satisfying f, else a new operand of rank 1..2
// whose dimension `dim` is a multiple of `multiple`.
Value ArrayOperand(Gen& g, const std::function<bool(const Value&)>& f,
                   int64_t multiple) {
  if (auto v = g.PickValue(
          [&](const Value& v) { return v.shape.rank() >= 1 && f(v); })) {
    return *v;
  }
  std::vector<int64_t> dims = g.PickDims(static_cast<int>(g.rng.Uniform(1, 2)),
                                         g.opt.max_elements / multiple);
  dims[0] = std::max<int64_t>(1, dims[0]) * multiple;
  return g.Operand(g.rng.Pick(g.dtypes), dims);
}

// The partition of the ids that a replica_groups text names: each group
// sorted, the groups sorted ({} and malformed text: none).
std::vector<std::vector<int64_t>> Partition(const std::string& text) {
  StatusOr<std::vector<std::vector<int64_t>>> groups = ParseReplicaGroups(text);
  if (!groups.ok()) return {};
  for (auto& group : *groups) std::sort(group.begin(), group.end());
  std::sort(groups->begin(), groups->end());
  return *std::move(groups);
}

// A near-copy of an earlier all-reduce `k`, as partitioned programs have
// them (gradients reduced alike; one tensor reduced along two axes of the
// mesh): the same element type, reduction and group mode, on a value
// independent of k's result (k's own operand, or a new parameter), over
// k's groups (which XLA's combiner may merge) or, where the ids can be
// split another way into as many groups of the same size, over those
// (which it must keep apart).
bool EmitSiblingAllReduce(Gen& g, const Gen::AllReduceKey& k) {
  Value x = k.operand;
  double bound = BoundAfter(k.op, x.bound, static_cast<double>(k.members));
  if (g.rng.Chance(0.5)) {
    x = g.Param(g.MakeShape(k.type, g.PickDims()));
    ReducerOf(g, k.op, k.type, &x, k.members, &bound);
  }
  std::string text = k.groups;
  const bool splits = k.form.per_group > 1 && k.form.per_group < k.form.ids;
  if (splits && g.rng.Chance(0.5)) {
    for (int tries = 0; tries < 8; ++tries) {
      std::string other =
          GroupText(g, k.form.ids, k.form.per_group, k.form.may_be_empty);
      if (Partition(other) != Partition(k.groups)) {
        text = std::move(other);
        break;
      }
    }
  }
  g.Emit(g.Like(x), "all-reduce", {x},
         FormAttrs(g, k.form, text) +
             ", to_apply=" + g.pb.ScalarBinary(k.type, k.op),
         bound);
  return true;
}

bool EmitAllReduce(Gen& g, const Value& v) {
  if (!g.all_reduces.empty() && g.rng.Chance(0.4)) {
    return EmitSiblingAllReduce(g, g.rng.Pick(g.all_reduces));
  }
  Value x = v;
  std::optional<Groups> uneven;
  if (g.rng.Chance(0.25)) uneven = UnevenGroups(g);
  const Groups groups = uneven ? *uneven : ReduceGroups(g);
  const PrimitiveType t = x.shape.element_type();
  const std::string op = PickReducer(g, t);
  double bound = 0;
  const std::string red = ReducerOf(g, op, t, &x, groups.size, &bound);
  g.Emit(g.Like(x), "all-reduce", {x}, groups.attrs + ", to_apply=" + red,
         bound);
  if (groups.form.ids > 0) {
    g.all_reduces.push_back({t, op, x, groups.form, groups.text, groups.size});
  }
  return true;
}

bool EmitAllGather(Gen& g) {
  const Groups groups = ReduceGroups(g);
  const int64_t n = groups.size;
  Value x = ArrayOperand(
      g,
      [&](const Value& v) {
        return v.shape.element_count() * n <= g.opt.max_elements;
      },
      1);
  const int64_t d = g.rng.Uniform(0, x.shape.rank() - 1);
  std::vector<int64_t> out = x.shape.dims();
  out[d] *= n;
  g.Emit(g.MakeShape(x.shape.element_type(), out), "all-gather", {x},
         groups.attrs + ", dimensions={" + std::to_string(d) + "}", x.bound);
  return true;
}

bool EmitReduceScatter(Gen& g) {
  const Groups groups = ReduceGroups(g);
  const int64_t n = groups.size;
  Value x = ArrayOperand(
      g, [&](const Value& v) { return v.shape.dims()[0] % n == 0; }, n);
  std::vector<int64_t> dims;
  for (int64_t k = 0; k < x.shape.rank(); ++k) {
    if (x.shape.dims()[k] % n == 0) dims.push_back(k);
  }
  const int64_t d = g.rng.Pick(dims);
  double bound = 0;
  const std::string red = Reducer(g, x.shape.element_type(), &x, n, &bound);
  std::vector<int64_t> out = x.shape.dims();
  out[d] /= n;
  g.Emit(g.MakeShape(x.shape.element_type(), out), "reduce-scatter", {x},
         groups.attrs + ", dimensions={" + std::to_string(d) +
             "}, to_apply=" + red,
         bound);
  return true;
}

bool EmitAllToAll(Gen& g) {
  const Groups groups = ExchangeGroups(g);
  const int64_t n = groups.size;
  if (g.rng.Chance(0.3)) {
    // The tuple form: one operand per member, operand j goes to member j.
    const Value x = ArrayOperand(
        g, [](const Value&) { return true; }, 1);
    std::vector<Value> ops;
    std::vector<Shape> shapes;
    for (int64_t k = 0; k < n; ++k) {
      ops.push_back(k == 0 ? x
                           : g.Operand(x.shape.element_type(), x.shape.dims()));
      shapes.push_back(g.Like(x));
    }
    double bound = 0;
    for (const Value& v : ops) bound = std::max(bound, v.bound);
    const Value t = g.Emit(Shape::Tuple(shapes), "all-to-all", ops,
                           groups.attrs, bound, false);
    for (int64_t k = 0; k < n; ++k) {
      g.Emit(shapes[k], "get-tuple-element", {t}, "index=" + std::to_string(k),
             bound);
    }
    return true;
  }
  Value x = ArrayOperand(
      g, [&](const Value& v) { return v.shape.dims()[0] % n == 0; }, n);
  std::vector<int64_t> dims;
  for (int64_t k = 0; k < x.shape.rank(); ++k) {
    if (x.shape.dims()[k] % n == 0) dims.push_back(k);
  }
  g.Emit(
      g.Like(x), "all-to-all", {x},
      groups.attrs + ", dimensions={" + std::to_string(g.rng.Pick(dims)) + "}",
      x.bound);
  return true;
}

// source_target_pairs over n ids: a ring with a random shift, a swap of
// halves, or random pairs (each id the source and the target of at most
// one pair; some devices may get nothing, and then receive zeros).
std::string Pairs(Gen& g, int64_t n) {
  std::vector<std::vector<int64_t>> pairs;
  const int64_t kind = g.rng.Uniform(0, 2);
  if (kind == 0) {
    const int64_t shift = g.rng.Uniform(1, std::max<int64_t>(1, n - 1));
    for (int64_t i = 0; i < n; ++i) pairs.push_back({i, (i + shift) % n});
  } else {
    std::vector<int64_t> targets(n);
    std::iota(targets.begin(), targets.end(), 0);
    for (int64_t k = n - 1; k > 0; --k) {
      std::swap(targets[k], targets[g.rng.Uniform(0, k)]);
    }
    for (int64_t i = 0; i < n; ++i) {
      if (kind == 1 || g.rng.Chance(0.6)) pairs.push_back({i, targets[i]});
    }
  }
  return ReplicaGroupsText(pairs);
}

bool EmitCollectivePermute(Gen& g) {
  const bool partitions = g.rng.Chance(0.5);
  const int64_t n = partitions ? g.mesh.partitions : g.mesh.replicas;
  const Value x = ArrayOperand(
      g, [](const Value&) { return true; }, 1);
  const std::string attrs = (partitions ? Channel(g) + ", " : std::string()) +
                            "source_target_pairs=" + Pairs(g, n);
  if (!g.rng.Chance(0.25)) {
    g.Emit(g.Like(x), "collective-permute", {x}, attrs, x.bound);
    return true;
  }
  // The combined form (XLA's collective-permute-combiner): 2..3 operands
  // of any shapes, a tuple of them, each permuted alike.
  std::vector<Value> ops = {x};
  const int64_t k = g.rng.Uniform(2, 3);
  while (static_cast<int64_t>(ops.size()) < k) {
    ops.push_back(ArrayOperand(
        g, [](const Value&) { return true; }, 1));
  }
  std::vector<Shape> shapes;
  double bound = 0;
  for (const Value& v : ops) {
    shapes.push_back(g.Like(v));
    bound = std::max(bound, v.bound);
  }
  const Value t = g.Emit(Shape::Tuple(shapes), "collective-permute", ops, attrs,
                         bound, false);
  for (size_t i = 0; i < shapes.size(); ++i) {
    g.Emit(shapes[i], "get-tuple-element", {t}, "index=" + std::to_string(i),
           bound);
  }
  return true;
}

// partition-id / replica-id, and often the id added to a value (so that
// devices compute differently from the same data).
bool EmitDeviceId(Gen& g, O op) {
  const double most = static_cast<double>(
      (op == O::kPartitionId ? g.mesh.partitions : g.mesh.replicas) - 1);
  const Value id = g.Emit(Shape(P::U32, {}),
                          op == O::kPartitionId ? "partition-id" : "replica-id",
                          {}, "", most);
  if (!g.rng.Chance(0.7)) return true;
  auto x = g.PickValue([](const Value& v) {
    return v.shape.rank() >= 1 && !IsComplex(v.shape.element_type()) &&
           v.shape.element_type() != P::PRED;
  });
  if (!x) return true;
  const P t = x->shape.element_type();
  const Value c = g.Convert(id, t);
  const Value b = g.Emit(g.MakeShape(t, x->shape.dims()), "broadcast", {c},
                         "dimensions={}", most);
  const Value tamed = g.Tame(*x, Limit(t) / 2 - most);
  g.Binary("add", tamed, b, tamed.bound + most);
  return true;
}

}  // namespace

bool EmitCollective(Gen& g, HloOpcode op) {
  if (g.mesh.size() <= 1 || g.depth > 0 || !g.ctx->can_add_params) {
    return false;
  }
  // Counted when it exchanges data (EmitDeviceId's ids do not).
  g.collectives += IsCollective(op);
  switch (op) {
    case O::kAllReduce: {
      auto x = g.AnyOperand([](P) { return true; });
      if (!x) break;
      return EmitAllReduce(g, *x);
    }
    case O::kAllGather:
      return EmitAllGather(g);
    case O::kReduceScatter:
      return EmitReduceScatter(g);
    case O::kAllToAll:
      return EmitAllToAll(g);
    case O::kCollectivePermute:
      return EmitCollectivePermute(g);
    case O::kPartitionId:
    case O::kReplicaId:
      return EmitDeviceId(g, op);
    default:
      break;
  }
  g.collectives -= IsCollective(op);
  return false;
}

}  // namespace trench::fuzz::internal
