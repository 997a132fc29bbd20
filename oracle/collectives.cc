#include "oracle/collectives.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <system_error>

#include "compiler/ir/dtype.h"
#include "compiler/ir/hlo_computation.h"
#include "oracle/elementwise.h"

namespace trench::oracle {
namespace {

std::string Name(const HloInstruction& instr) {
  return std::string(OpcodeName(instr.opcode())) + " %" + instr.name();
}

// Checks that every member brought `n` array operands of the element type
// of `shapes` (dims are checked by each op).
Status CheckMembers(const HloInstruction& instr, const GroupOperands& members,
                    const std::vector<Shape>& shapes) {
  for (size_t j = 0; j < members.size(); ++j) {
    if (members[j].size() != shapes.size()) {
      return InvalidArgument(Name(instr) + ": member " + std::to_string(j) +
                             " brought " + std::to_string(members[j].size()) +
                             " operands, the op has " +
                             std::to_string(shapes.size()) + " results");
    }
    for (size_t k = 0; k < shapes.size(); ++k) {
      const Literal& v = *members[j][k];
      if (!v.shape().IsArray() ||
          v.element_type() != shapes[k].element_type()) {
        return InvalidArgument(Name(instr) + ": operand " + std::to_string(k) +
                               " is " + v.shape().ToString(false) +
                               ", the result is " + shapes[k].ToString(false));
      }
    }
  }
  return Status::Ok();
}

// Elements before, along and after dimension `dim` of `dims`.
struct Split {
  int64_t outer = 1, along = 1, inner = 1;
};
Split SplitAt(const std::vector<int64_t>& dims, int64_t dim) {
  Split s;
  for (int64_t k = 0; k < static_cast<int64_t>(dims.size()); ++k) {
    (k < dim ? s.outer : k == dim ? s.along : s.inner) *= dims[k];
  }
  return s;
}

// `parts` concatenated along `dim` into `shape`.
StatusOr<Literal> Concat(const std::vector<const Literal*>& parts, int64_t dim,
                         const Shape& shape, const HloInstruction& instr) {
  const int64_t width = ByteWidth(shape.element_type());
  const Split out = SplitAt(shape.dims(), dim);
  int64_t total = 0;
  for (const Literal* p : parts) {
    std::vector<int64_t> want = shape.dims();
    want[dim] =
        p->shape().dims().size() == want.size() ? p->shape().dims()[dim] : -1;
    if (p->shape().dims() != want) {
      return InvalidArgument(
          Name(instr) + ": a member's " + p->shape().ToString(false) +
          " does not fit the result " + shape.ToString(false));
    }
    total += want[dim];
  }
  if (total != out.along) {
    return InvalidArgument(Name(instr) + ": the members' operands add up to " +
                           std::to_string(total) + " along dimension " +
                           std::to_string(dim) + ", the result has " +
                           std::to_string(out.along));
  }
  Literal result = Literal::CreateUninitialized(shape);
  uint8_t* dst = result.mutable_bytes().data();
  const int64_t row = out.inner * width;
  for (int64_t o = 0; o < out.outer; ++o) {
    int64_t at = 0;
    for (const Literal* p : parts) {
      const int64_t d = p->shape().dims()[dim];
      if (d > 0 && row > 0) {
        std::memcpy(dst + (o * out.along + at) * row,
                    p->bytes().data() + o * d * row, d * row);
      }
      at += d;
    }
  }
  return result;
}

// Chunk `c` of `n` equal chunks of `v` along `dim`.
StatusOr<Literal> Chunk(const Literal& v, int64_t dim, int64_t c, int64_t n,
                        const HloInstruction& instr) {
  const std::vector<int64_t>& dims = v.shape().dims();
  if (dim < 0 || dim >= static_cast<int64_t>(dims.size()) ||
      dims[dim] % n != 0) {
    return InvalidArgument(Name(instr) + ": " + v.shape().ToString(false) +
                           " does not split into " + std::to_string(n) +
                           " chunks along dimension " + std::to_string(dim));
  }
  std::vector<int64_t> cd = dims;
  cd[dim] /= n;
  Literal out = Literal::CreateUninitialized(Shape(v.element_type(), cd));
  const int64_t width = ByteWidth(v.element_type());
  const Split s = SplitAt(dims, dim);
  const int64_t row = s.inner * width, size = cd[dim];
  for (int64_t o = 0; o < s.outer && size > 0 && row > 0; ++o) {
    std::memcpy(out.mutable_bytes().data() + o * size * row,
                v.bytes().data() + (o * s.along + c * size) * row, size * row);
  }
  return out;
}

// to_apply(a, b) elementwise over arrays of `shape`; `a` is dead
// afterwards (its buffer may become the result's).
StatusOr<Literal> Combine(const HloComputation& fn, const Shape& shape,
                          Literal& a, const Literal& b, CallContext& ctx,
                          int threads) {
  const HloInstruction* root = fn.root_instruction();
  if (fn.num_parameters() != 2) {
    return InvalidArgument("the reduction " + fn.name() + " takes " +
                           std::to_string(fn.num_parameters()) +
                           " parameters, not 2");
  }
  // One elementwise op of the two parameters: applied to whole arrays.
  if (root != nullptr && IsElementwise(root->opcode()) &&
      fn.instruction_count() == 3 && root->operand_count() == 2 &&
      root->shape().rank() == 0 &&
      root->shape().element_type() == shape.element_type()) {
    std::vector<const Literal*> args;
    for (const HloInstruction* o : root->operands()) {
      if (o->opcode() != HloOpcode::kParameter) break;
      args.push_back(o->parameter_number() == 0 ? &a : &b);
    }
    if (args.size() == 2) {
      return EvalElementwiseInto(*root, shape, args, &a, threads);
    }
  }
  Literal sa(Shape(shape.element_type(), {})), sb(sa.shape());
  const Literal* args[] = {&sa, &sb};
  Literal out(shape);
  const int64_t w = ByteWidth(shape.element_type());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    std::memcpy(sa.mutable_bytes().data(), a.bytes().data() + i * w, w);
    std::memcpy(sb.mutable_bytes().data(), b.bytes().data() + i * w, w);
    ASSIGN_OR_RETURN(Literal r, ctx.Call(fn, args));
    if (!r.shape().IsArray() || r.element_type() != shape.element_type() ||
        r.element_count() != 1) {
      return InvalidArgument("the reduction " + fn.name() + " returned " +
                             r.shape().ToString(false));
    }
    std::memcpy(out.mutable_bytes().data() + i * w, r.bytes().data(), w);
  }
  return out;
}

// Each operand folded over the members (group order) with to_apply.
StatusOr<std::vector<Literal>> Reduced(const HloInstruction& instr,
                                       const GroupOperands& members,
                                       CallContext& ctx, int threads) {
  if (instr.called_computations().empty()) {
    return InvalidArgument(Name(instr) + " has no to_apply");
  }
  const HloComputation& fn = *instr.to_apply();
  std::vector<Literal> out;
  for (size_t k = 0; k < members[0].size(); ++k) {
    const Shape& s = members[0][k]->shape();
    for (const auto& m : members) {
      if (m[k]->shape().dims() != s.dims()) {
        return InvalidArgument(Name(instr) + ": members bring " +
                               s.ToString(false) + " and " +
                               m[k]->shape().ToString(false));
      }
    }
    Literal acc(*members[0][k]);
    for (size_t j = 1; j < members.size(); ++j) {
      ASSIGN_OR_RETURN(acc, Combine(fn, s, acc, *members[j][k], ctx, threads));
    }
    out.push_back(std::move(acc));
  }
  return out;
}

StatusOr<int64_t> Dimension(const HloInstruction& instr) {
  const std::vector<int64_t>& d = instr.attrs().dimensions;
  if (d.size() != 1) {
    return InvalidArgument(Name(instr) + " needs dimensions={d}");
  }
  return d[0];
}

}  // namespace

std::vector<Shape> CollectiveShapes(const HloInstruction& instr) {
  if (!instr.shape().IsTuple()) return {instr.shape()};
  return instr.shape().tuple_shapes();
}

Literal CollectiveResult(std::vector<Literal> results,
                         const HloInstruction& instr) {
  if (!instr.shape().IsTuple()) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

StatusOr<std::vector<Literal>> AllReduceValues(const HloInstruction& instr,
                                               const GroupOperands& members,
                                               CallContext& ctx, int threads) {
  const std::vector<Shape> shapes = CollectiveShapes(instr);
  RETURN_IF_ERROR(CheckMembers(instr, members, shapes));
  ASSIGN_OR_RETURN(std::vector<Literal> values,
                   Reduced(instr, members, ctx, threads));
  // A reduce-scatter's results are chunks of these (Chunks checks them).
  if (instr.opcode() != HloOpcode::kAllReduce) return values;
  for (size_t k = 0; k < shapes.size(); ++k) {
    if (values[k].shape().dims() != shapes[k].dims()) {
      return InvalidArgument(Name(instr) + ": operand " + std::to_string(k) +
                             " is " + values[k].shape().ToString(false) +
                             ", the result " + shapes[k].ToString(false));
    }
    values[k].set_layout(shapes[k].layout());
  }
  return values;
}

StatusOr<std::vector<Literal>> AllGatherValues(const HloInstruction& instr,
                                               const std::vector<Shape>& shapes,
                                               const GroupOperands& members) {
  RETURN_IF_ERROR(CheckMembers(instr, members, shapes));
  ASSIGN_OR_RETURN(int64_t dim, Dimension(instr));
  std::vector<Literal> values;
  for (size_t k = 0; k < shapes.size(); ++k) {
    if (dim < 0 || dim >= shapes[k].rank()) {
      return InvalidArgument(Name(instr) + ": dimension " +
                             std::to_string(dim) + " is not one of " +
                             shapes[k].ToString(false));
    }
    std::vector<const Literal*> parts;
    for (const auto& m : members) parts.push_back(m[k]);
    ASSIGN_OR_RETURN(Literal v, Concat(parts, dim, shapes[k], instr));
    values.push_back(std::move(v));
  }
  return values;
}

StatusOr<std::vector<Literal>> Chunks(const HloInstruction& instr,
                                      const std::vector<Shape>& shapes,
                                      const std::vector<Literal>& values,
                                      int64_t me, int64_t n) {
  ASSIGN_OR_RETURN(int64_t dim, Dimension(instr));
  std::vector<Literal> out;
  for (size_t k = 0; k < shapes.size() && k < values.size(); ++k) {
    ASSIGN_OR_RETURN(Literal v, Chunk(values[k], dim, me, n, instr));
    if (v.shape().dims() != shapes[k].dims()) {
      return InvalidArgument(Name(instr) + ": a chunk is " +
                             v.shape().ToString(false) + ", the result " +
                             shapes[k].ToString(false));
    }
    out.push_back(std::move(v));
  }
  return out;
}

StatusOr<std::vector<Literal>> AllToAllValues(const HloInstruction& instr,
                                              const std::vector<Shape>& shapes,
                                              const GroupOperands& members,
                                              int64_t me) {
  RETURN_IF_ERROR(CheckMembers(instr, members, shapes));
  const int64_t n = static_cast<int64_t>(members.size());
  std::vector<Literal> values;
  if (instr.attrs().dimensions.empty()) {
    // The tuple form: operand `me` of member j is result j.
    if (static_cast<int64_t>(shapes.size()) != n) {
      return InvalidArgument(Name(instr) +
                             " without dimensions needs one "
                             "operand per group member (" +
                             std::to_string(n) + "), it has " +
                             std::to_string(shapes.size()));
    }
    for (int64_t j = 0; j < n; ++j) {
      const Literal& v = *members[j][me];
      if (v.shape().dims() != shapes[j].dims()) {
        return InvalidArgument(Name(instr) + ": operand " + std::to_string(me) +
                               " is " + v.shape().ToString(false) +
                               ", result " + std::to_string(j) + " is " +
                               shapes[j].ToString(false));
      }
      values.push_back(v);
      values.back().set_layout(shapes[j].layout());
    }
    return values;
  }
  ASSIGN_OR_RETURN(int64_t dim, Dimension(instr));
  for (size_t k = 0; k < shapes.size(); ++k) {
    std::vector<Literal> chunks;
    for (int64_t j = 0; j < n; ++j) {
      ASSIGN_OR_RETURN(Literal c, Chunk(*members[j][k], dim, me, n, instr));
      chunks.push_back(std::move(c));
    }
    std::vector<const Literal*> parts;
    for (const Literal& c : chunks) parts.push_back(&c);
    ASSIGN_OR_RETURN(Literal v, Concat(parts, dim, shapes[k], instr));
    values.push_back(std::move(v));
  }
  return values;
}

StatusOr<std::vector<Literal>> PermuteValues(
    const HloInstruction& instr, const std::vector<Shape>& shapes,
    const GroupOperands& members, int64_t device,
    const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  RETURN_IF_ERROR(CheckMembers(instr, members, shapes));
  for (const auto& [s, t] : pairs) {
    if (t != device) continue;
    std::vector<Literal> out;
    for (size_t k = 0; k < shapes.size(); ++k) {
      const Literal& v = *members[s][k];
      if (v.shape().dims() != shapes[k].dims()) {
        return InvalidArgument(
            Name(instr) + ": the operand " + v.shape().ToString(false) +
            " is not the result " + shapes[k].ToString(false));
      }
      out.push_back(v);
      out.back().set_layout(shapes[k].layout());
    }
    return out;
  }
  std::vector<Literal> zeros;
  for (const Shape& s : shapes) zeros.emplace_back(s);
  return zeros;
}

// ---- Rendezvous.

Rendezvous::Rendezvous(int64_t devices)
    : finished_(devices, 0), waiting_at_(devices, nullptr), running_(devices) {}

std::string Rendezvous::Stuck(const Key& key,
                              const std::vector<int64_t>& group) const {
  const Meeting& m = meetings_.at(key);
  const HloInstruction* instr = std::get<0>(key);
  for (size_t j = 0; j < group.size(); ++j) {
    if (m.operands[j].empty() && finished_[group[j]]) {
      return "device " + std::to_string(group[j]) + " ended without reaching " +
             Name(*instr) + " (execution " +
             std::to_string(std::get<1>(key) + 1) + ")";
    }
  }
  int64_t waiting = 0;
  for (const HloInstruction* w : waiting_at_) waiting += w != nullptr;
  if (waiting < running_) return "";
  std::string where;
  for (size_t d = 0; d < waiting_at_.size(); ++d) {
    if (waiting_at_[d] == nullptr) continue;
    where += (where.empty() ? "" : ", ") + std::string("device ") +
             std::to_string(d) + " at %" + waiting_at_[d]->name();
  }
  return "the devices wait at collectives no group completes: " + where;
}

StatusOr<Literal> Rendezvous::Exchange(
    int64_t device, const HloInstruction& instr, int64_t occurrence,
    const std::vector<int64_t>& group, std::vector<const Literal*> operands,
    const std::function<StatusOr<Literal>(const GroupOperands&)>& compute,
    bool same_for_all) {
  const size_t size = group.size();
  size_t pos = 0;
  while (pos < size && group[pos] != device) ++pos;
  if (pos == size) {
    return Internal("device " + std::to_string(device) +
                    " is not in its own "
                    "group at " +
                    Name(instr));
  }
  // An operand list may be empty (collective-permute of a device that
  // sends nothing is still given its operand): mark presence apart.
  if (operands.empty()) return Internal(Name(instr) + " without operands");
  const Key key{&instr, occurrence, group[0]};
  std::unique_lock<std::mutex> lock(mu_);
  Meeting& m = meetings_[key];
  if (m.operands.empty()) m.operands.resize(size);
  m.operands[pos] = std::move(operands);
  if (++m.arrived == static_cast<int64_t>(size)) {
    for (int64_t d : group) waiting_at_[d] = nullptr;
    cv_.notify_all();
  } else {
    waiting_at_[device] = &instr;
    cv_.notify_all();  // A deadlock check of the others may now hold.
    while (m.arrived < static_cast<int64_t>(size)) {
      if (broken_.empty()) broken_ = Stuck(key, group);
      if (const std::string why = broken_; !why.empty()) {
        // Leave: nobody may read this device's operands any more.
        m.operands[pos].clear();
        --m.arrived;
        waiting_at_[device] = nullptr;
        cv_.notify_all();
        return FailedPrecondition(why);
      }
      cv_.wait(lock);
    }
  }
  StatusOr<Literal> value = Internal("not computed");
  if (!same_for_all) {
    lock.unlock();
    value = compute(m.operands);
    lock.lock();
  } else {
    // The first member computes for the group; the others copy.
    if (!m.shared && !m.computing) {
      m.computing = true;
      lock.unlock();
      StatusOr<Literal> v = compute(m.operands);
      lock.lock();
      m.shared.emplace(std::move(v));
      cv_.notify_all();
    }
    cv_.wait(lock, [&] { return m.shared.has_value(); });
    const StatusOr<Literal>* shared = &*m.shared;
    lock.unlock();
    value = *shared;  // Stays until every member has left.
    lock.lock();
  }
  if (++m.left == static_cast<int64_t>(size)) {
    meetings_.erase(key);
    cv_.notify_all();
  } else {
    cv_.wait(lock, [&] { return meetings_.find(key) == meetings_.end(); });
  }
  return value;
}

void Rendezvous::Finished(int64_t device) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_[device]) return;
  finished_[device] = 1;
  waiting_at_[device] = nullptr;
  --running_;
  cv_.notify_all();
}

Status RunDevices(int64_t n,
                  const std::function<Status(int64_t, Rendezvous&)>& body) {
  Rendezvous rendezvous(n);
  std::vector<Status> status(n);
  {
    std::vector<std::thread> threads;
    for (int64_t d = 0; d < n; ++d) {
      try {
        threads.emplace_back([&, d] {
          status[d] = body(d, rendezvous);
          rendezvous.Finished(d);
        });
      } catch (const std::system_error& e) {
        // No thread for this device (the machine's limit): the devices
        // not started end at once, so the started ones stop waiting.
        for (int64_t k = d; k < n; ++k) {
          status[k] = ResourceExhausted("no thread for the device: " +
                                        std::string(e.what()));
          rendezvous.Finished(k);
        }
        break;
      }
    }
    for (std::thread& t : threads) t.join();
  }
  // A device's own error first; the waits it broke come after.
  for (bool own : {true, false}) {
    for (int64_t d = 0; d < n; ++d) {
      const Status& s = status[d];
      if (s.ok() || (own && s.code() == StatusCode::kFailedPrecondition)) {
        continue;
      }
      return Status(s.code(),
                    "device " + std::to_string(d) + ": " + s.message());
    }
  }
  return Status::Ok();
}

// ---- MeshPlace.

StatusOr<Literal> MeshPlace::Id(const HloInstruction& instr) const {
  if (!instr.shape().IsArray() || instr.shape().rank() != 0) {
    return InvalidArgument(Name(instr) + " must be a scalar, not " +
                           instr.shape().ToString(false));
  }
  Literal out(instr.shape());
  out.SetFromInt64(0, instr.opcode() == HloOpcode::kReplicaId
                          ? device_ / mesh_.partitions
                          : device_ % mesh_.partitions);
  return out;
}

StatusOr<Literal> MeshPlace::Meet(
    const HloInstruction& instr, std::vector<const Literal*> mine,
    const std::function<StatusOr<Literal>(const GroupOperands&, int64_t)>&
        compute,
    bool share) {
  if (mine.empty()) return InvalidArgument(Name(instr) + " has no operands");
  const int64_t occurrence = occurrences_[&instr]++;
  std::vector<int64_t> group;
  if (instr.opcode() == HloOpcode::kCollectivePermute) {
    for (int64_t d = 0; d < mesh_.size(); ++d) group.push_back(d);
  } else {
    ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups,
                     DeviceGroups(instr, mesh_));
    for (std::vector<int64_t>& g : groups) {
      if (std::find(g.begin(), g.end(), device_) != g.end()) {
        group = std::move(g);
        break;
      }
    }
  }
  const int64_t me =
      std::find(group.begin(), group.end(), device_) - group.begin();
  if (me == static_cast<int64_t>(group.size())) {
    return Internal("device " + std::to_string(device_) + " is in no group");
  }
  auto at_me = [&](const GroupOperands& members) {
    return compute(members, me);
  };
  if (rendezvous_ == nullptr) return at_me(GroupOperands{std::move(mine)});
  // Every member of an all-reduce gets the same sums: computed once. (An
  // all-gather's copies would cost as much as its concatenation: each
  // member makes its own.)
  const bool same_for_all = share && instr.opcode() == HloOpcode::kAllReduce;
  return rendezvous_->Exchange(device_, instr, occurrence, group,
                               std::move(mine), at_me, same_for_all);
}

}  // namespace trench::oracle
