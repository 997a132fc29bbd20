// Rewrites of data-movement ops: identities, folding of chains
// (reshape/reshape, transpose/transpose, broadcast/broadcast, slice/slice,
// slice/concatenate) and moving scalar broadcasts outward. All are exact:
// they move the same elements to the same places.
#include <numeric>

#include "compiler/passes/algsimp_internal.h"

namespace trench::algsimp {
namespace {

using Op = HloOpcode;

bool IsIdentityPermutation(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

StatusOr<bool> Use(HloInstruction* instr, HloInstruction* repl,
                   std::string_view site, Env* env) {
  if (!CanReplace(instr, repl) || !env->Should(site, instr)) return false;
  RETURN_IF_ERROR(ReplaceWith(instr, repl));
  return true;
}

// Makes instr read `new_operand` instead of its operand 0 (whose removal
// is then attempted). The caller has set any new attributes.
Status Rewire(HloInstruction* instr, HloInstruction* new_operand) {
  HloInstruction* old = instr->operand(0);
  instr->ReplaceOperandWith(0, new_operand);
  return RemoveIfDead(old);
}

// op(broadcast(scalar)) = broadcast(scalar) for ops that only move
// elements: every output element is the scalar.
StatusOr<bool> FoldScalarBroadcast(HloInstruction* instr, Env* env) {
  const HloInstruction* b = instr->operand(0);
  if (b->opcode() != Op::kBroadcast || b->operand_count() != 1 ||
      b->operand(0)->shape().rank() != 0 || !b->operand(0)->shape().IsArray() ||
      b->shape().element_type() != instr->shape().element_type() ||
      !env->Should("broadcast-scalar-fold", instr)) {
    return false;
  }
  HloInstruction* repl =
      AddNew(instr->parent(), env->names, Op::kBroadcast, instr->shape(),
             {b->operand(0)}, instr->name() + ".bcast");
  repl->mutable_attrs().has_dimensions = true;
  RETURN_IF_ERROR(ReplaceWith(instr, repl));
  return true;
}

bool SameTypeAndDims(const HloInstruction* a, const HloInstruction* b) {
  return a->shape().element_type() == b->shape().element_type() &&
         a->shape().SameDimensions(b->shape());
}

StatusOr<bool> SimplifyReshape(HloInstruction* instr, Env* env) {
  HloInstruction* x = instr->operand(0);
  if (SameTypeAndDims(instr, x)) {
    return Use(instr, x, "reshape-identity", env);
  }
  if (x->opcode() == Op::kReshape) {
    // Reshapes only regroup the row-major element sequence.
    if (!env->Should("reshape-reshape", instr)) return false;
    RETURN_IF_ERROR(Rewire(instr, x->operand(0)));
    return true;
  }
  return FoldScalarBroadcast(instr, env);
}

StatusOr<bool> SimplifyTranspose(HloInstruction* instr, Env* env) {
  HloInstruction* x = instr->operand(0);
  const std::vector<int64_t>& perm = instr->dimensions();
  if (IsIdentityPermutation(perm)) {
    return Use(instr, x, "transpose-identity", env);
  }
  if (x->opcode() == Op::kTranspose && x->dimensions().size() == perm.size()) {
    // Output dim i is x's dim perm[i], which is source dim inner[perm[i]].
    std::vector<int64_t> composed(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) {
      composed[i] = x->dimensions()[perm[i]];
    }
    HloInstruction* source = x->operand(0);
    if (IsIdentityPermutation(composed)) {
      return Use(instr, source, "transpose-transpose", env);
    }
    if (!env->Should("transpose-transpose", instr)) return false;
    instr->mutable_attrs().dimensions = composed;
    RETURN_IF_ERROR(Rewire(instr, source));
    return true;
  }
  return FoldScalarBroadcast(instr, env);
}

StatusOr<bool> SimplifyBroadcast(HloInstruction* instr, Env* env) {
  HloInstruction* x = instr->operand(0);
  const std::vector<int64_t>& dims = instr->dimensions();
  if (SameTypeAndDims(instr, x) && IsIdentityPermutation(dims)) {
    return Use(instr, x, "broadcast-identity", env);
  }
  if (x->opcode() == Op::kBroadcast) {
    // Source dim i lands in x's dim inner[i], which lands in dims[inner[i]].
    std::vector<int64_t> composed;
    for (int64_t d : x->dimensions()) {
      if (d < 0 || d >= static_cast<int64_t>(dims.size())) return false;
      composed.push_back(dims[d]);
    }
    if (!env->Should("broadcast-broadcast", instr)) return false;
    instr->mutable_attrs().dimensions = composed;
    instr->mutable_attrs().has_dimensions = true;
    RETURN_IF_ERROR(Rewire(instr, x->operand(0)));
    return true;
  }
  return false;
}

StatusOr<bool> SimplifySliceOfSlice(HloInstruction* instr, Env* env) {
  HloInstruction* x = instr->operand(0);
  const auto& outer = instr->attrs().slice;
  const auto& inner = x->attrs().slice;
  if (inner.size() != outer.size() || instr->shape().element_count() == 0) {
    return false;
  }
  // Element j of the result is x[a + (c + j*d) * b] for inner start a,
  // stride b and outer start c, stride d.
  std::vector<SliceDim> composed(outer.size());
  for (size_t i = 0; i < outer.size(); ++i) {
    const int64_t n = instr->shape().dim(i);
    composed[i].start = inner[i].start + outer[i].start * inner[i].stride;
    composed[i].stride = inner[i].stride * outer[i].stride;
    composed[i].limit = composed[i].start + (n - 1) * composed[i].stride + 1;
  }
  if (!env->Should("slice-slice", instr)) return false;
  instr->mutable_attrs().slice = composed;
  RETURN_IF_ERROR(Rewire(instr, x->operand(0)));
  return true;
}

// A slice whose range along the concatenated dimension lies within one
// operand becomes a slice of that operand.
StatusOr<bool> SimplifySliceOfConcat(HloInstruction* instr, Env* env) {
  HloInstruction* concat = instr->operand(0);
  if (concat->dimensions().size() != 1) return false;
  const int64_t cd = concat->dimensions()[0];
  const auto& slice = instr->attrs().slice;
  if (cd < 0 || cd >= static_cast<int64_t>(slice.size()) ||
      instr->shape().element_count() == 0) {
    return false;
  }
  const int64_t first = slice[cd].start;
  const int64_t last = first + (instr->shape().dim(cd) - 1) * slice[cd].stride;
  int64_t offset = 0;
  for (HloInstruction* op : concat->operands()) {
    const int64_t size = op->shape().dim(cd);
    if (first >= offset && last < offset + size) {
      if (!env->Should("slice-concat", instr)) return false;
      instr->mutable_attrs().slice[cd].start = first - offset;
      instr->mutable_attrs().slice[cd].limit = last - offset + 1;
      RETURN_IF_ERROR(Rewire(instr, op));
      return true;
    }
    offset += size;
  }
  return false;
}

StatusOr<bool> SimplifySlice(HloInstruction* instr, Env* env) {
  HloInstruction* x = instr->operand(0);
  if (SameTypeAndDims(instr, x)) {
    // With equal sizes and start 0, element j is x[j * stride] with
    // j * stride < limit <= size, which forces stride 1 (or size <= 1).
    bool whole = true;
    for (const SliceDim& s : instr->attrs().slice) whole &= s.start == 0;
    if (whole) return Use(instr, x, "slice-identity", env);
  }
  if (x->opcode() == Op::kSlice) return SimplifySliceOfSlice(instr, env);
  if (x->opcode() == Op::kConcatenate) return SimplifySliceOfConcat(instr, env);
  return FoldScalarBroadcast(instr, env);
}

StatusOr<bool> SimplifyPad(HloInstruction* instr, Env* env) {
  for (const PaddingDim& p : instr->attrs().padding) {
    if (p.lo != 0 || p.hi != 0 || p.interior != 0) return false;
  }
  return Use(instr, instr->operand(0), "pad-zero", env);
}

}  // namespace

StatusOr<bool> SimplifyShape(HloInstruction* instr, Env* env) {
  if (!instr->shape().IsArray() || instr->operand_count() < 1 ||
      !instr->operand(0)->shape().IsArray()) {
    return false;
  }
  switch (instr->opcode()) {
    case Op::kReshape:
      return SimplifyReshape(instr, env);
    case Op::kTranspose:
      return SimplifyTranspose(instr, env);
    case Op::kBroadcast:
      return SimplifyBroadcast(instr, env);
    case Op::kSlice:
      return SimplifySlice(instr, env);
    case Op::kReverse:
      return FoldScalarBroadcast(instr, env);
    case Op::kPad:
      return SimplifyPad(instr, env);
    case Op::kCopy: {
      ASSIGN_OR_RETURN(bool c,
                       Use(instr, instr->operand(0), "copy-identity", env));
      if (c) return true;
      return FoldScalarBroadcast(instr, env);
    }
    case Op::kConcatenate:
      if (instr->operand_count() != 1) return false;
      return Use(instr, instr->operand(0), "concat-single", env);
    default:
      return false;
  }
}

}  // namespace trench::algsimp
