// Strength reduction of reduce and dot when nothing is actually summed.
//
// reduce-size1: a reduce over dimensions of size 1 reads one element per
// output, so its value is f(init, x) for that element: the rewrite is
// reshape(x), broadcast(init) and one application of f's binary op, in f's
// operand order. Exact for every type.
//
// dot-to-multiply: a dot whose contracting dimensions all have size 1 (or
// that has none) sums a single product per output: the rewrite is
// broadcast(reshape(lhs)) * broadcast(reshape(rhs)). For floats the
// result gets "+ 0.0" because a dot accumulates from +0, which turns a -0
// product into +0; the product itself is exact before its one rounding in
// both forms.
#include <algorithm>

#include "compiler/passes/algsimp_internal.h"

namespace trench::algsimp {
namespace {

using Op = HloOpcode;

bool IsReducerOp(Op op) {
  switch (op) {
    case Op::kAdd:
    case Op::kMultiply:
    case Op::kMaximum:
    case Op::kMinimum:
    case Op::kAnd:
    case Op::kOr:
    case Op::kXor:
      return true;
    default:
      return false;
  }
}

// Adds reshape(x) to `dims` (or returns x when its dims already match).
HloInstruction* Reshaped(HloComputation* comp, Env* env, HloInstruction* x,
                         const std::vector<int64_t>& dims, const Shape& like,
                         const std::string& base) {
  if (x->shape().dims() == dims && !x->shape().is_dynamic()) return x;
  return AddNew(comp, env->names, Op::kReshape,
                ShapeLike(x->shape().element_type(), dims, like), {x}, base);
}

StatusOr<bool> SimplifyReduce(HloInstruction* instr, Env* env) {
  if (instr->operand_count() != 2 || instr->called_computations().size() != 1 ||
      !instr->shape().IsArray() || instr->shape().is_dynamic()) {
    return false;
  }
  HloInstruction* x = instr->operand(0);
  HloInstruction* init = instr->operand(1);
  const HloComputation* f = instr->to_apply();
  const PrimitiveType t = instr->shape().element_type();
  if (f == nullptr || f->num_parameters() != 2 || x->shape().is_dynamic()) {
    return false;
  }
  for (int64_t d : instr->dimensions()) {
    if (d < 0 || d >= x->shape().rank() || x->shape().dim(d) != 1) {
      return false;
    }
  }
  const HloInstruction* root = f->root_instruction();
  const HloInstruction* p0 = f->parameter_instruction(0);
  const HloInstruction* p1 = f->parameter_instruction(1);
  if (root == nullptr || p0 == nullptr || p1 == nullptr ||
      !IsReducerOp(root->opcode()) || root->operand_count() != 2 ||
      root->shape().element_type() != t || x->shape().element_type() != t ||
      init->shape().element_type() != t || init->shape().rank() != 0) {
    return false;
  }
  bool init_first;
  if (root->operand(0) == p0 && root->operand(1) == p1) {
    init_first = true;
  } else if (root->operand(0) == p1 && root->operand(1) == p0) {
    init_first = false;
  } else {
    return false;
  }
  if (!env->Should("reduce-size1", instr)) return false;
  HloComputation* comp = instr->parent();
  const Shape& out = instr->shape();
  HloInstruction* values =
      Reshaped(comp, env, x, out.dims(), out, instr->name() + ".reshape");
  HloInstruction* inits = init;
  if (out.rank() > 0) {
    inits =
        AddNew(comp, env->names, Op::kBroadcast, ShapeLike(t, out.dims(), out),
               {init}, instr->name() + ".init");
    inits->mutable_attrs().has_dimensions = true;
  }
  std::vector<HloInstruction*> operands = {inits, values};
  if (!init_first) std::swap(operands[0], operands[1]);
  HloInstruction* repl = AddNew(comp, env->names, root->opcode(), out, operands,
                                instr->name() + ".apply");
  RETURN_IF_ERROR(ReplaceWith(instr, repl));
  return true;
}

bool IsPrefix(const std::vector<int64_t>& dims) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// The dimensions of `s` that are neither batch nor contracting, in order.
std::vector<int64_t> FreeDims(const Shape& s, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < s.rank(); ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) ==
            contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

// Adds broadcast(reshape(x without its contracting dims)) into `out`:
// x's batch dims go to out dims 0..nb-1 and its free dims to
// first_free, first_free+1, ...
HloInstruction* Spread(HloComputation* comp, Env* env, HloInstruction* x,
                       const std::vector<int64_t>& batch,
                       const std::vector<int64_t>& free, int64_t first_free,
                       const Shape& out, const std::string& base) {
  std::vector<int64_t> kept_dims, bdims;
  for (size_t i = 0; i < batch.size(); ++i) {
    kept_dims.push_back(x->shape().dim(batch[i]));
    bdims.push_back(static_cast<int64_t>(i));
  }
  for (size_t i = 0; i < free.size(); ++i) {
    kept_dims.push_back(x->shape().dim(free[i]));
    bdims.push_back(first_free + static_cast<int64_t>(i));
  }
  HloInstruction* r = Reshaped(comp, env, x, kept_dims, out, base + ".reshape");
  HloInstruction* b =
      AddNew(comp, env->names, Op::kBroadcast,
             ShapeLike(x->shape().element_type(), out.dims(), out), {r},
             base + ".bcast");
  b->mutable_attrs().dimensions = bdims;
  b->mutable_attrs().has_dimensions = true;
  return b;
}

StatusOr<bool> SimplifyDot(HloInstruction* instr, Env* env) {
  if (!instr->attrs().dot_dnums || !instr->shape().IsArray()) return false;
  const DotDimNumbers& dn = *instr->attrs().dot_dnums;
  HloInstruction* lhs = instr->operand(0);
  HloInstruction* rhs = instr->operand(1);
  const Shape& out = instr->shape();
  const PrimitiveType t = out.element_type();
  if (!(IsFloat(t) || IsInteger(t)) || lhs->shape().element_type() != t ||
      rhs->shape().element_type() != t || out.is_dynamic() ||
      lhs->shape().is_dynamic() || rhs->shape().is_dynamic() ||
      !IsPrefix(dn.lhs_batch) || !IsPrefix(dn.rhs_batch)) {
    return false;
  }
  for (int64_t d : dn.lhs_contracting) {
    if (d < 0 || d >= lhs->shape().rank() || lhs->shape().dim(d) != 1) {
      return false;
    }
  }
  for (int64_t d : dn.rhs_contracting) {
    if (d < 0 || d >= rhs->shape().rank() || rhs->shape().dim(d) != 1) {
      return false;
    }
  }
  const std::vector<int64_t> lfree =
      FreeDims(lhs->shape(), dn.lhs_batch, dn.lhs_contracting);
  const std::vector<int64_t> rfree =
      FreeDims(rhs->shape(), dn.rhs_batch, dn.rhs_contracting);
  const int64_t nb = static_cast<int64_t>(dn.lhs_batch.size());
  if (nb + static_cast<int64_t>(lfree.size() + rfree.size()) != out.rank() ||
      !env->Should("dot-to-multiply", instr)) {
    return false;
  }
  HloComputation* comp = instr->parent();
  const std::string& n = instr->name();
  HloInstruction* a =
      Spread(comp, env, lhs, dn.lhs_batch, lfree, nb, out, n + ".lhs");
  HloInstruction* b =
      Spread(comp, env, rhs, dn.rhs_batch, rfree,
             nb + static_cast<int64_t>(lfree.size()), out, n + ".rhs");
  HloInstruction* repl;
  if (IsFloat(t)) {
    HloInstruction* product =
        AddNew(comp, env->names, Op::kMultiply, ShapeLike(t, out.dims(), out),
               {a, b}, n + ".product");
    HloInstruction* zero = AddScalarConstant(comp, env, t, 0.0, out);
    HloInstruction* zeros = AddBroadcastScalar(
        comp, env, zero, ShapeLike(t, out.dims(), out), n + ".zero");
    repl =
        AddNew(comp, env->names, Op::kAdd, out, {product, zeros}, n + ".sum");
  } else {
    repl = AddNew(comp, env->names, Op::kMultiply, out, {a, b}, n + ".product");
  }
  RETURN_IF_ERROR(ReplaceWith(instr, repl));
  return true;
}

}  // namespace

StatusOr<bool> SimplifyReduceOrDot(HloInstruction* instr, Env* env) {
  switch (instr->opcode()) {
    case Op::kReduce:
      return SimplifyReduce(instr, env);
    case Op::kDot:
      return SimplifyDot(instr, env);
    default:
      return false;
  }
}

}  // namespace trench::algsimp
