// Shape propagation for shrink-shapes (reduce_pass_internal.h
// PropagateShapes): after some instructions' shapes shrank, the users'
// shapes follow by shape inference, with the attribute fix-ups that make
// the common cases valid (slices and dynamic slices clamp to the new
// operand, broadcasts and reshapes follow their operand's dims, constant
// and scalar-broadcast operands of elementwise ops shrink along, called
// computations of fusions/calls/whiles/conditionals are re-inferred with
// the new parameter shapes). What cannot follow keeps its declared shape:
// the candidate then fails verification and costs no target run.
#include <algorithm>
#include <numeric>

#include "compiler/ir/shape_inference.h"
#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

// Instructions whose shape changed, with their shape before.
using Changed = std::unordered_map<const HloInstruction*, Shape>;

// `to` with `from`'s layouts where the ranks agree (leaf by leaf).
Shape WithLayoutOf(Shape to, const Shape& from) {
  if (to.IsTuple() && from.IsTuple() && to.tuple_size() == from.tuple_size()) {
    for (int64_t i = 0; i < to.tuple_size(); ++i) {
      to.mutable_tuple_shapes()[i] =
          WithLayoutOf(to.tuple_shape(i), from.tuple_shape(i));
    }
  } else if (to.IsArray() && from.IsArray() && from.has_layout() &&
             to.rank() == from.rank()) {
    to.set_layout(*from.layout());
  }
  return to;
}

// New dims of a reshape from `old_in` -> `old_out` when its input became
// `new_in`: groups of consecutive dims with equal products map onto each
// other; a 1:1 group takes the new size, an unchanged group stays. nullopt
// when a changed group is not 1:1.
std::optional<std::vector<int64_t>> ReshapeDims(
    const std::vector<int64_t>& old_in, const std::vector<int64_t>& old_out,
    const std::vector<int64_t>& new_in) {
  std::vector<int64_t> out = old_out;
  size_t i = 0, o = 0;
  while (i < old_in.size() || o < old_out.size()) {
    const size_t i0 = i, o0 = o;
    int64_t pi = i < old_in.size() ? old_in[i++] : 1;
    int64_t po = o < old_out.size() ? old_out[o++] : 1;
    while (pi != po) {
      if (pi < po && i < old_in.size()) {
        pi *= old_in[i++];
      } else if (po < pi && o < old_out.size()) {
        po *= old_out[o++];
      } else {
        return std::nullopt;
      }
    }
    bool changed = false;
    for (size_t k = i0; k < i; ++k) changed = changed || new_in[k] != old_in[k];
    if (!changed) continue;
    // 1:1 up to size-1 dims on either side.
    std::vector<size_t> big_in, big_out;
    for (size_t k = i0; k < i; ++k) {
      if (old_in[k] != 1) big_in.push_back(k);
    }
    for (size_t k = o0; k < o; ++k) {
      if (old_out[k] != 1) big_out.push_back(k);
    }
    if (big_in.size() != 1 || big_out.size() != 1) return std::nullopt;
    out[big_out[0]] = new_in[big_in[0]];
  }
  return out;
}

// A copy of constant/iota/scalar-broadcast `op` with array dims `dims`, or
// nullptr when `op` is none of those.
HloInstruction* ShrunkCopy(EditableCase& e, HloInstruction* op,
                           const std::vector<int64_t>& dims) {
  Shape shape = op->shape();
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (dims[d] > shape.dim(d)) return nullptr;
    shape.set_dim(d, dims[d]);
  }
  std::unique_ptr<HloInstruction> copy;
  if (op->opcode() == HloOpcode::kConstant && op->has_literal()) {
    copy = HloInstruction::CreateConstant(
        SliceLeadingCorner(op->literal(), dims), "");
  } else if (op->opcode() == HloOpcode::kIota ||
             (op->opcode() == HloOpcode::kBroadcast &&
              op->operand(0)->shape().rank() == 0)) {
    copy = op->CloneWithOperands(op->operands(), "");
  } else {
    return nullptr;
  }
  copy->set_shape(shape);
  copy->set_name(FreshName(e, op->name() + ".shrunk"));
  if (op->opcode() != HloOpcode::kConstant) copy->mutable_attrs() = op->attrs();
  return op->parent()->AddInstruction(std::move(copy));
}

void FixAttributes(EditableCase& e, HloInstruction* i, const Changed& changed) {
  auto operand_dims = [&](int64_t k) { return i->operand(k)->shape().dims(); };
  switch (i->opcode()) {
    case HloOpcode::kSlice: {
      const auto dims = operand_dims(0);
      auto& slice = i->mutable_attrs().slice;
      for (size_t d = 0; d < slice.size() && d < dims.size(); ++d) {
        if (slice[d].limit <= dims[d]) continue;
        slice[d].limit = dims[d];
        slice[d].start =
            std::min(slice[d].start, std::max<int64_t>(0, dims[d] - 1));
      }
      return;
    }
    case HloOpcode::kDynamicSlice: {
      const auto dims = operand_dims(0);
      auto& sizes = i->mutable_attrs().dynamic_slice_sizes;
      for (size_t d = 0; d < sizes.size() && d < dims.size(); ++d) {
        sizes[d] = std::min(sizes[d], dims[d]);
      }
      return;
    }
    case HloOpcode::kGather: {
      const auto dims = operand_dims(0);
      auto& sizes = i->mutable_attrs().gather_slice_sizes;
      for (size_t d = 0; d < sizes.size() && d < dims.size(); ++d) {
        sizes[d] = std::min(sizes[d], dims[d]);
      }
      return;
    }
    case HloOpcode::kBroadcast: {
      const auto dims = operand_dims(0);
      const auto& map = i->attrs().dimensions;
      Shape s = i->shape();
      for (size_t d = 0; d < map.size() && d < dims.size(); ++d) {
        if (map[d] >= 0 && map[d] < s.rank()) s.set_dim(map[d], dims[d]);
      }
      i->set_shape(s);
      return;
    }
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
      return;  // Handled with the old operand dims (PropagateShapes).
    default:
      break;
  }
  if (!IsElementwise(i->opcode()) || !i->shape().IsArray()) return;
  const HloInstruction* lead = nullptr;
  for (const HloInstruction* op : i->operands()) {
    if (changed.count(op) && op->shape().IsArray()) lead = op;
  }
  if (lead == nullptr) return;
  for (int64_t k = 0; k < i->operand_count(); ++k) {
    HloInstruction* op = i->operand(k);
    if (changed.count(op) || !op->shape().IsArray() ||
        op->shape().rank() != lead->shape().rank() ||
        op->shape().dims() == lead->shape().dims()) {
      continue;
    }
    if (HloInstruction* copy = ShrunkCopy(e, op, lead->shape().dims())) {
      i->ReplaceOperandWith(k, copy);
    }
  }
}

// A collective-permute of one array operand: its result has the
// operand's shape (it has no shape rule: its other forms differ; all-reduce
// and all-to-all have one).
bool KeepsOperandShapes(const HloInstruction& i) {
  return i.opcode() == HloOpcode::kCollectivePermute &&
         i.operands().size() == 1 && i.operand(0)->shape().IsArray() &&
         i.shape().IsArray();
}

void Reinfer(EditableCase& e, HloComputation& comp, Changed& changed);

// Called computation `callee` gets parameter shapes `params`; re-inferred.
void ReinferCallee(EditableCase& e, HloComputation* callee,
                   const std::vector<Shape>& params, Changed& changed) {
  if (callee == nullptr) return;
  for (int64_t p = 0;
       p < callee->num_parameters() && p < static_cast<int64_t>(params.size());
       ++p) {
    HloInstruction* param = callee->parameter_instruction(p);
    if (param == nullptr || param->shape().Compatible(params[p])) continue;
    changed.emplace(param, param->shape());
    param->set_shape(WithLayoutOf(params[p], param->shape()));
  }
  Reinfer(e, *callee, changed);
}

void Reinfer(EditableCase& e, HloComputation& comp, Changed& changed) {
  for (HloInstruction* i : comp.MakeInstructionPostOrder()) {
    if (i->opcode() == HloOpcode::kParameter) continue;
    const bool affected = std::any_of(
        i->operands().begin(), i->operands().end(),
        [&](const HloInstruction* op) { return changed.count(op); });
    if (!affected) continue;
    const Shape old = i->shape();
    if (i->opcode() == HloOpcode::kReshape ||
        i->opcode() == HloOpcode::kBitcast) {
      const Shape& in = i->operand(0)->shape();
      auto before = changed.find(i->operand(0));
      if (in.IsArray() && old.IsArray() && before != changed.end() &&
          before->second.IsArray() && before->second.rank() == in.rank()) {
        if (auto dims =
                ReshapeDims(before->second.dims(), old.dims(), in.dims())) {
          Shape s = old;
          for (int64_t d = 0; d < s.rank(); ++d) s.set_dim(d, (*dims)[d]);
          i->set_shape(s);
        }
      }
    }
    FixAttributes(e, i, changed);
    std::vector<Shape> operand_shapes;
    for (const HloInstruction* op : i->operands()) {
      operand_shapes.push_back(op->shape());
    }
    switch (i->opcode()) {
      case HloOpcode::kFusion:
      case HloOpcode::kCall:
        if (!i->called_computations().empty()) {
          ReinferCallee(e, i->called_computations()[0], operand_shapes,
                        changed);
        }
        break;
      case HloOpcode::kWhile:
        if (i->called_computations().size() == 2) {
          ReinferCallee(e, i->while_condition(), operand_shapes, changed);
          ReinferCallee(e, i->while_body(), operand_shapes, changed);
        }
        break;
      case HloOpcode::kConditional:
        for (size_t b = 0; b < i->called_computations().size() &&
                           b + 1 < operand_shapes.size();
             ++b) {
          ReinferCallee(e, i->called_computations()[b], {operand_shapes[b + 1]},
                        changed);
        }
        break;
      default:
        break;
    }
    StatusOr<Shape> inferred = InferShape(*i);
    if (inferred.ok()) {
      i->set_shape(WithLayoutOf(*inferred, old));
    } else if (KeepsOperandShapes(*i)) {
      // No inference rule, but the operand's shape.
      Shape s = i->operand(0)->shape();
      i->set_shape(WithLayoutOf(s, old));
    }
    if (!(i->shape() == old)) changed.emplace(i, old);
  }
}

}  // namespace

void PropagateShapes(EditableCase& e, HloComputation& comp,
                     std::unordered_map<const HloInstruction*, Shape> changed) {
  Reinfer(e, comp, changed);
}

}  // namespace trench::hlo_reduce
