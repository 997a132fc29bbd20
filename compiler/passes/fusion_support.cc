#include "compiler/passes/fusion_support.h"

#include <algorithm>

#include "base/small_ptr_set.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/opcode.h"

namespace trench {
namespace {

bool SupportedType(const Shape& s) {
  return s.IsArray() && !s.is_dynamic() && !IsComplex(s.element_type());
}

// True if `s` is stored in the default (row-major) physical order.
bool DefaultLayout(const Shape& s) {
  const std::vector<int64_t> m2m = s.minor_to_major();
  for (size_t i = 0; i < m2m.size(); ++i) {
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  }
  return true;
}

int RegisterWidth(const Shape& s) {
  return s.IsArray() && BitWidth(s.element_type()) == 64 ? 2 : 1;
}

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

Status Reject(const HloInstruction& instr, const std::string& why) {
  return InvalidArgument("cannot fuse %" + instr.name() + " (" +
                         std::string(OpcodeName(instr.opcode())) + "): " + why);
}

}  // namespace

FusedOpClass ClassifyFusedOp(const HloInstruction& instr) {
  const HloOpcode op = instr.opcode();
  if (!SupportedType(instr.shape())) return FusedOpClass::kUnsupported;
  for (const HloInstruction* o : instr.operands()) {
    if (!SupportedType(o->shape())) return FusedOpClass::kUnsupported;
  }
  if (!instr.control_predecessors().empty()) return FusedOpClass::kUnsupported;
  switch (op) {
    case HloOpcode::kComplex:
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      return FusedOpClass::kUnsupported;
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
      // A bitcast reinterprets physical bytes: it is a row-major reshape of
      // the (row-major) logical buffers only when both layouts are default.
      return instr.shape().element_type() ==
                         instr.operand(0)->shape().element_type() &&
                     (op == HloOpcode::kReshape ||
                      (DefaultLayout(instr.shape()) &&
                       DefaultLayout(instr.operand(0)->shape())))
                 ? FusedOpClass::kReshape
                 : FusedOpClass::kUnsupported;
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
      return FusedOpClass::kIndexMap;
    case HloOpcode::kIota:
      return FusedOpClass::kIota;
    case HloOpcode::kConstant:
      return instr.has_literal() && instr.shape().element_count() == 1
                 ? FusedOpClass::kConstant
                 : FusedOpClass::kUnsupported;
    case HloOpcode::kReduce:
      return FusedOpClass::kReduce;
    case HloOpcode::kDot:
      return FusedOpClass::kDot;
    default:
      break;
  }
  if (IsElementwise(op)) {
    for (const HloInstruction* o : instr.operands()) {
      if (!o->shape().SameDimensions(instr.shape())) {
        return FusedOpClass::kUnsupported;
      }
    }
    return FusedOpClass::kElementwise;
  }
  return FusedOpClass::kUnsupported;
}

bool IsPureClass(FusedOpClass c) {
  return c == FusedOpClass::kReshape || c == FusedOpClass::kIndexMap ||
         c == FusedOpClass::kIota || c == FusedOpClass::kConstant ||
         c == FusedOpClass::kDot;
}

std::string FusedReducerMnemonic(const HloComputation& c, PrimitiveType t) {
  const HloInstruction* root = c.root_instruction();
  if (c.num_parameters() != 2 || root == nullptr ||
      root->operand_count() != 2) {
    return "";
  }
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter ||
      b->opcode() != HloOpcode::kParameter || a == b) {
    return "";
  }
  const bool is_pred = t == PrimitiveType::PRED;
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      return is_pred ? "" : "vadd";
    case HloOpcode::kMultiply:
      return is_pred ? "" : "vmul";
    case HloOpcode::kMaximum:
      return is_pred ? "" : "vmax";
    case HloOpcode::kMinimum:
      return is_pred ? "" : "vmin";
    case HloOpcode::kAnd:
      return IsFloat(t) ? "" : "vand";
    case HloOpcode::kOr:
      return IsFloat(t) ? "" : "vor";
    default:
      return "";
  }
}

int64_t FusionVmemBytes(const std::vector<const HloInstruction*>& members,
                        const std::vector<const HloInstruction*>& roots) {
  const SmallPtrSet<const HloInstruction*> in(members.begin(), members.end());
  // The own-position space: the reduce input's elements, else the roots'.
  int64_t n = roots.empty() ? 0 : roots[0]->shape().element_count();
  const HloInstruction* dot = nullptr;
  for (const HloInstruction* m : members) {
    if (m->opcode() == HloOpcode::kReduce) {
      n = m->operand(0)->shape().element_count();
    }
    if (m->opcode() == HloOpcode::kDot) dot = m;
  }
  // Walk the reads from the roots at the own position (stream_fusion.cc's
  // ParamAccess): index maps and dots read their operands at mapped
  // positions, a reduce its init.
  SmallPtrSet<const HloInstruction*> own, mapped, seen_own, seen_mapped;
  std::vector<std::pair<const HloInstruction*, bool>> stack;
  for (const HloInstruction* r : roots) stack.push_back({r, true});
  while (!stack.empty()) {
    auto [x, at_own] = stack.back();
    stack.pop_back();
    if (!(at_own ? seen_own : seen_mapped).insert(x)) continue;
    if (!in.count(x)) {
      (at_own ? own : mapped).insert(x);
      continue;
    }
    const FusedOpClass c = ClassifyFusedOp(*x);
    if (c == FusedOpClass::kIota || c == FusedOpClass::kConstant) continue;
    for (int64_t i = 0; i < x->operand_count(); ++i) {
      const bool mapped_read = c == FusedOpClass::kIndexMap ||
                               c == FusedOpClass::kDot ||
                               (c == FusedOpClass::kReduce && i == 1);
      stack.push_back({x->operand(i), at_own && !mapped_read});
    }
  }
  int64_t staged = 0, per_element = 0;
  auto add_array = [&](const HloInstruction* a, bool streams) {
    if (streams && dot == nullptr) {
      per_element += ByteWidth(a->shape().element_type());
    } else {
      staged += a->shape().byte_size();
    }
  };
  own.ForEach([&](const HloInstruction* p) {
    if (!mapped.contains(p)) add_array(p, p->shape().element_count() == n);
  });
  mapped.ForEach([&](const HloInstruction* p) { add_array(p, false); });
  for (const HloInstruction* r : roots) add_array(r, true);
  if (dot != nullptr) {
    const auto& dn = dot->attrs().dot_dnums;
    const Shape& a = dot->operand(0)->shape();
    const Shape& b = dot->operand(1)->shape();
    const int64_t lc = dn->lhs_contracting[0], rc = dn->rhs_contracting[0];
    const int64_t M = RoundUp(std::max<int64_t>(a.dim(1 - lc), 1), 8);
    const int64_t K = RoundUp(std::max<int64_t>(a.dim(lc), 1), 128);
    const int64_t N = RoundUp(std::max<int64_t>(b.dim(1 - rc), 1), 128);
    staged += 4 * (M * K + K * N + M * N) + dot->shape().byte_size();
  }
  return staged + 2 * kMinStreamChunk * per_element;
}

StatusOr<FusionSpec> AnalyzeFusion(
    const std::vector<const HloInstruction*>& members,
    const std::vector<const HloInstruction*>& roots, RegisterBound bound) {
  if (members.empty() || roots.empty()) {
    return InvalidArgument("empty fusion");
  }
  const SmallPtrSet<const HloInstruction*> in(members.begin(), members.end());
  const SmallPtrSet<const HloInstruction*> root_set(roots.begin(), roots.end());
  if (root_set.size() != roots.size()) {
    return InvalidArgument("a fusion root is listed twice");
  }
  auto is_member = [&](const HloInstruction* i) { return in.contains(i); };
  FusionSpec spec;
  std::vector<const HloInstruction*> reduces;
  int64_t registers = 0, pinned = 0;
  for (const HloInstruction* m : members) {
    const FusedOpClass c = ClassifyFusedOp(*m);
    if (c == FusedOpClass::kUnsupported) {
      return Reject(*m, "not an op the fused kernel computes");
    }
    registers += RegisterWidth(m->shape());
    if (c == FusedOpClass::kIndexMap) {
      registers += 2;  // The mapped position and its index math.
      pinned += 2;
      // The operand subtree must be pure: no computed value is evaluated
      // at more than one position.
      std::vector<const HloInstruction*> stack = {m->operand(0)};
      while (!stack.empty()) {
        const HloInstruction* x = stack.back();
        stack.pop_back();
        if (!is_member(x)) continue;
        if (!IsPureClass(ClassifyFusedOp(*x))) {
          return Reject(*m,
                        "maps the position of computed value %" + x->name());
        }
        if (x->opcode() != HloOpcode::kDot) {
          stack.insert(stack.end(), x->operands().begin(), x->operands().end());
        }
      }
    } else if (c == FusedOpClass::kReduce) {
      if (m->operand_count() != 2 || !root_set.contains(m)) {
        return Reject(*m, "only a single-input reduce that is a root fuses");
      }
      for (const HloInstruction* u : m->users()) {
        if (is_member(u)) return Reject(*m, "a fused reduce must be a root");
      }
      const HloInstruction* init = m->operand(1);
      if (is_member(init) &&
          ClassifyFusedOp(*init) != FusedOpClass::kConstant) {
        return Reject(*m, "init value is computed in the fusion");
      }
      if (FusedReducerMnemonic(*m->to_apply(),
                               m->operand(0)->shape().element_type())
              .empty()) {
        return Reject(*m, "unsupported reducer");
      }
      registers += RegisterWidth(m->shape());  // The accumulator.
      pinned += RegisterWidth(m->shape());
      reduces.push_back(m);
    } else if (c == FusedOpClass::kDot) {
      if (spec.dot != nullptr) return Reject(*m, "second dot in one fusion");
      const auto& dn = m->attrs().dot_dnums;
      const Shape& a = m->operand(0)->shape();
      const Shape& b = m->operand(1)->shape();
      if (!dn || !dn->lhs_batch.empty() || a.rank() != 2 || b.rank() != 2 ||
          dn->lhs_contracting.size() != 1 || dn->rhs_contracting.size() != 1 ||
          !IsFloat(a.element_type()) || !IsFloat(b.element_type()) ||
          !IsFloat(m->shape().element_type()) ||
          BitWidth(a.element_type()) == 64 ||
          BitWidth(b.element_type()) == 64 ||
          BitWidth(m->shape().element_type()) == 64) {
        return Reject(*m, "only rank-2 float dots without batch fuse");
      }
      if (is_member(m->operand(0)) || is_member(m->operand(1))) {
        return Reject(*m, "dot operands must be fusion parameters");
      }
      spec.dot = m;
    }
  }
  for (const HloInstruction* r : roots) {
    if (!is_member(r)) return InvalidArgument("a root is not a member");
  }
  if (bound == RegisterBound::kAllValues && registers > kFusionRegisterBudget) {
    return InvalidArgument("fusion needs more than " +
                           std::to_string(kFusionRegisterBudget) +
                           " live vector registers");
  }
  if (pinned > kFusionPinnedRegisterBudget) {
    return InvalidArgument("fusion pins more than " +
                           std::to_string(kFusionPinnedRegisterBudget) +
                           " vector registers (accumulators, positions)");
  }
  if (FusionVmemBytes(members, roots) > kFusionVmemBudget) {
    return InvalidArgument("fusion stages more than the VMEM budget");
  }
  if (!reduces.empty()) {
    const HloInstruction* r0 = reduces[0];
    spec.kind = FusionKind::kInput;
    spec.loop_dims = r0->shape().dims();
    spec.reduce_input_dims = r0->operand(0)->shape().dims();
    spec.reduce_dims = r0->dimensions();
    std::sort(spec.reduce_dims.begin(), spec.reduce_dims.end());
    for (const HloInstruction* r : roots) {
      if (r->opcode() == HloOpcode::kReduce) {
        std::vector<int64_t> d = r->dimensions();
        std::sort(d.begin(), d.end());
        if (d != spec.reduce_dims ||
            r->operand(0)->shape().dims() != spec.reduce_input_dims) {
          return Reject(*r, "reduces of one fusion must share their shape");
        }
      } else if (r->shape().dims() != spec.reduce_input_dims) {
        return Reject(*r,
                      "a reduce fusion's other outputs must have the "
                      "reduce input's dimensions");
      }
    }
    if (spec.dot != nullptr) {
      return Reject(*spec.dot, "a dot and a reduce in one fusion");
    }
    return spec;
  }
  spec.kind = spec.dot != nullptr ? FusionKind::kOutput : FusionKind::kLoop;
  spec.loop_dims = roots[0]->shape().dims();
  for (const HloInstruction* r : roots) {
    if (r->shape().dims() != spec.loop_dims) {
      return Reject(*r, "outputs of a loop fusion must share dimensions");
    }
  }
  return spec;
}

StatusOr<FusionSpec> AnalyzeFusedComputation(const HloComputation& fused,
                                             RegisterBound bound) {
  const HloInstruction* root = fused.root_instruction();
  if (root == nullptr) return InvalidArgument("fused computation has no root");
  std::vector<const HloInstruction*> roots;
  if (root->opcode() == HloOpcode::kTuple) {
    roots.assign(root->operands().begin(), root->operands().end());
  } else {
    roots.push_back(root);
  }
  std::vector<const HloInstruction*> members;
  for (const HloInstruction* i : fused.MakeInstructionPostOrder()) {
    if (i->opcode() == HloOpcode::kParameter) {
      if (!i->shape().IsArray()) {
        return InvalidArgument("fused parameter %" + i->name() +
                               " is not an array");
      }
      continue;
    }
    if (i == root && root->opcode() == HloOpcode::kTuple) continue;
    members.push_back(i);
  }
  for (const HloInstruction* r : roots) {
    if (r->opcode() == HloOpcode::kParameter) {
      return InvalidArgument("fusion output %" + r->name() + " is a parameter");
    }
  }
  return AnalyzeFusion(members, roots, bound);
}

}  // namespace trench
