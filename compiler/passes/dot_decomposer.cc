#include "compiler/passes/dot_decomposer.h"

#include <algorithm>

#include "compiler/passes/pass_util.h"

namespace trench {
namespace {

int64_t Product(const Shape& s, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= s.dim(d);
  return p;
}

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

bool IsCanonical(const HloInstruction& dot) {
  const DotDimNumbers& dn = *dot.attrs().dot_dnums;
  const int64_t nb = dn.lhs_batch.size();
  const int64_t rank = nb + 2;
  return nb <= 1 && dot.operand(0)->shape().rank() == rank &&
         dot.operand(1)->shape().rank() == rank &&
         (nb == 0 || (dn.lhs_batch[0] == 0 && dn.rhs_batch[0] == 0)) &&
         dn.lhs_contracting == std::vector<int64_t>{rank - 1} &&
         dn.rhs_contracting == std::vector<int64_t>{nb};
}

Shape NewShape(PrimitiveType t, std::vector<int64_t> dims, const Shape& like) {
  Shape s(t, std::move(dims));
  if (like.has_layout()) {
    Layout l;
    for (int64_t d = s.rank() - 1; d >= 0; --d) l.minor_to_major.push_back(d);
    s.set_layout(std::move(l));
  }
  return s;
}

// transpose(x, perm) (skipped when perm is the identity), then reshape to
// `dims` (skipped when the dims already match).
HloInstruction* Arrange(HloComputation* comp, NameUniquer* names,
                        HloInstruction* x, const std::vector<int64_t>& perm,
                        const std::vector<int64_t>& dims, const Shape& like,
                        const std::string& base) {
  const PrimitiveType t = x->shape().element_type();
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == int64_t(i);
  if (!identity) {
    std::vector<int64_t> tdims;
    for (int64_t d : perm) tdims.push_back(x->shape().dim(d));
    HloInstruction* tr =
        AddNew(comp, names, HloOpcode::kTranspose, NewShape(t, tdims, like),
               {x}, base + ".transpose");
    tr->mutable_attrs().dimensions = perm;
    tr->mutable_attrs().has_dimensions = true;
    x = tr;
  }
  if (x->shape().dims() == dims) return x;
  return AddNew(comp, names, HloOpcode::kReshape, NewShape(t, dims, like), {x},
                base + ".reshape");
}

std::vector<int64_t> Concat(std::vector<int64_t> a,
                            const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Status Canonicalize(HloInstruction* dot, NameUniquer* names) {
  const DotDimNumbers dn = *dot->attrs().dot_dnums;
  HloComputation* comp = dot->parent();
  HloInstruction* lhs = dot->operand(0);
  HloInstruction* rhs = dot->operand(1);
  const Shape& ls = lhs->shape();
  const Shape& rs = rhs->shape();
  const std::vector<int64_t> lfree =
      FreeDims(ls, dn.lhs_batch, dn.lhs_contracting);
  const std::vector<int64_t> rfree =
      FreeDims(rs, dn.rhs_batch, dn.rhs_contracting);
  const bool batched = !dn.lhs_batch.empty();
  const int64_t b = Product(ls, dn.lhs_batch);
  const int64_t m = Product(ls, lfree), n = Product(rs, rfree);
  const int64_t k = Product(ls, dn.lhs_contracting);
  std::vector<int64_t> lhs_dims = {m, k}, rhs_dims = {k, n}, out_dims = {m, n};
  if (batched) {
    lhs_dims.insert(lhs_dims.begin(), b);
    rhs_dims.insert(rhs_dims.begin(), b);
    out_dims.insert(out_dims.begin(), b);
  }
  const Shape& out = dot->shape();
  const std::string& name = dot->name();
  HloInstruction* a = Arrange(
      comp, names, lhs, Concat(Concat(dn.lhs_batch, lfree), dn.lhs_contracting),
      lhs_dims, out, name + ".lhs");
  HloInstruction* c = Arrange(
      comp, names, rhs, Concat(Concat(dn.rhs_batch, dn.rhs_contracting), rfree),
      rhs_dims, out, name + ".rhs");
  HloInstruction* canonical = AddNew(
      comp, names, HloOpcode::kDot, NewShape(out.element_type(), out_dims, out),
      {a, c}, name + ".canonical");
  DotDimNumbers cdn;
  if (batched) cdn.lhs_batch = cdn.rhs_batch = {0};
  cdn.lhs_contracting = {batched ? 2 : 1};
  cdn.rhs_contracting = {batched ? 1 : 0};
  canonical->mutable_attrs().dot_dnums = cdn;
  canonical->mutable_attrs().operand_precision = dot->attrs().operand_precision;
  HloInstruction* result = AddNew(comp, names, HloOpcode::kReshape, out,
                                  {canonical}, name + ".result");
  return ReplaceInstruction(dot, result);
}

}  // namespace

StatusOr<bool> DotDecomposer::Run(HloModule* module, PassContext* ctx) {
  NameUniquer names(*module);
  bool changed = false;
  for (HloComputation* comp : module->computations()) {
    for (HloInstruction* instr : comp->MakeInstructionPostOrder()) {
      if (instr->opcode() != HloOpcode::kDot || !instr->attrs().dot_dnums ||
          instr->operand_count() != 2 || instr->shape().is_dynamic() ||
          !instr->shape().IsArray() ||
          instr->operand(0)->shape().is_dynamic() ||
          instr->operand(1)->shape().is_dynamic() || IsCanonical(*instr) ||
          HasSideEffect(*instr) || !instr->control_predecessors().empty() ||
          !ctx->ShouldRewrite(name(), "canonicalize-dot", instr->name())) {
        continue;
      }
      RETURN_IF_ERROR(Canonicalize(instr, &names));
      changed = true;
    }
  }
  return changed;
}

}  // namespace trench
