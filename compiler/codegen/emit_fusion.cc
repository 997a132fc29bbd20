// fusion: one kernel per fusion instruction. The fused computation must
// pass AnalyzeFusedComputation (compiler/passes/fusion_support.h), the
// predicate the fusion pass forms fusions by (EmitsFusedKernel), with the
// register bound of codegen (RegisterBound::kPinnedOnly: values beyond the
// registers spill to VMEM, emit_fusion_internal.h). A fusion
// that arrives in a form it refuses (a module written with fusions, e.g.
// multi-output fusions with bitcasts) still compiles: its fused
// computation is planned like a call's and emitted inline, instruction by
// instruction with the ordinary emitters (emit_inline.h), taps included.
// Operands are staged whole in VMEM; a fused dot (kOutput) is computed first on
// the matrix unit into VMEM; then one tile loop over the output (8x128 tiles,
// ragged tail masked) evaluates the fused expression in registers
// (emit_fusion_eval.cc). A reduce fusion (kInput) loops over the reduce
// output's tiles, each lane accumulating its reduced elements in row-major
// order in the lane type (like EmitReduce), while outputs shaped like the
// reduce input are computed and scattered in the same inner loop. Tapped
// fused instructions are stored to their tap buffers from the main loop
// when it covers every element, else by a loop of their own. A fused
// kernel whose staged operands, results and taps do not fit in the VMEM
// left (tried on a copy of the kernel) streams instead (stream_fusion.h).
#include <algorithm>
#include <unordered_set>

#include "compiler/codegen/emit_dot_internal.h"
#include "compiler/codegen/emit_fusion_internal.h"
#include "compiler/codegen/emit_inline.h"
#include "compiler/codegen/stream_fusion.h"
#include "compiler/codegen/vector_ops.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/opcode.h"
#include "compiler/passes/fusion_support.h"

namespace trench::codegen {
namespace {

using fusion_internal::Staged;
using fusion_internal::TapRegion;
using fusion_internal::TileEvaluator;
using fusion_internal::TwoPass;

std::string TypeName(const HloInstruction* i) {
  return std::string(PrimitiveTypeName(i->shape().element_type()));
}

// The fused instructions whose every element the main loop evaluates (at
// some position), so an in-loop tap store covers the whole value.
std::unordered_set<const HloInstruction*> Covered(
    const std::vector<const HloInstruction*>& roots) {
  std::unordered_set<const HloInstruction*> covered;
  std::vector<const HloInstruction*> stack;
  for (const HloInstruction* r : roots) {
    if (r->shape().element_count() > 0) stack.push_back(r);
  }
  while (!stack.empty()) {
    const HloInstruction* x = stack.back();
    stack.pop_back();
    if (!covered.insert(x).second) continue;
    const FusedOpClass c = ClassifyFusedOp(*x);
    if (x->opcode() == HloOpcode::kParameter || c == FusedOpClass::kDot) {
      continue;
    }
    if (x->opcode() == HloOpcode::kSlice) continue;  // Skips elements.
    if (c == FusedOpClass::kReduce) {
      stack.push_back(x->operand(0));
      continue;
    }
    for (const HloInstruction* o : x->operands()) {
      if (o->shape().element_count() > 0) stack.push_back(o);
    }
  }
  return covered;
}

}  // namespace

namespace fusion_internal {

StatusOr<int64_t> EmitFusedDot(KernelBuilder& kb, const HloInstruction& dot,
                               const Staged& lhs, const Staged& rhs) {
  const auto& dn = *dot.attrs().dot_dnums;
  const std::vector<int64_t>& ad = dot.operand(0)->shape().dims();
  const std::vector<int64_t>& bd = dot.operand(1)->shape().dims();
  const int64_t lc = dn.lhs_contracting[0], rc = dn.rhs_contracting[0];
  const std::string out_type = TypeName(&dot);
  const dot_internal::DotTypes t =
      dot_internal::ChooseTypes(dot, lhs.mem, rhs.mem, out_type);
  if (!t.mxu) return CannotCompile(dot, out_type + " in a fused kernel");
  dot_internal::DotShape s;
  s.m = ad[1 - lc];
  s.k = ad[lc];
  s.n = bd[1 - rc];
  auto round_up = [](int64_t x, int64_t m) {
    return (std::max<int64_t>(x, 1) + m - 1) / m * m;
  };
  s.mp = round_up(s.m, 8);
  s.kp = round_up(s.k, 128);
  s.np = round_up(s.n, 128);
  const int64_t ap = kb.AllocVmem(s.mp * s.kp * t.esz);
  const int64_t bp = kb.AllocVmem(s.kp * s.np * t.esz);
  const int64_t cp = kb.AllocVmem(s.mp * s.np * 4);
  const int64_t out = kb.AllocVmem(dot.shape().byte_size());
  if (s.k > 0) {
    GatherSource sa{lhs.vmem,
                    lhs.mem,
                    0,
                    {lc == 1 ? s.k : 1, lc == 1 ? 1 : s.m},
                    {{0, 0, s.m}, {1, 0, s.k}}};
    GatherSource sb{rhs.vmem,
                    rhs.mem,
                    0,
                    {rc == 0 ? s.n : 1, rc == 0 ? 1 : s.k},
                    {{0, 0, s.k}, {1, 0, s.n}}};
    dot_internal::EmitConvertingGather(kb, {s.mp, s.kp}, sa, ap, t.mem,
                                       LaneType(lhs.mem), t.lane);
    dot_internal::EmitConvertingGather(kb, {s.kp, s.np}, sb, bp, t.mem,
                                       LaneType(rhs.mem), t.lane);
  }
  EmitGather(kb, {s.mp * s.np}, {}, cp, "f32", "f32");  // C = 0.
  if (s.k > 0) {
    dot_internal::EmitMatrixUnitDot(kb, s, t.mem, ap, bp, cp, t.passes);
  }
  if (s.m * s.n > 0) {
    GatherSource sc{cp, "f32", 0, {s.np, 1}, {}};
    EmitGather(kb, {s.m, s.n}, {sc}, out, out_type, "f32");
  }
  return out;
}

}  // namespace fusion_internal

bool EmitsFusedKernel(const HloInstruction& instr) {
  if (instr.opcode() != HloOpcode::kFusion ||
      instr.called_computations().size() != 1) {
    return false;
  }
  const HloComputation& fused = *instr.fused_computation();
  if (fused.num_parameters() != instr.operand_count()) return false;
  if (UsesComplex(fused)) return false;  // Emitted inline (vector_ops.h).
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    if (fused.parameter_instruction(i) == nullptr ||
        !instr.operand(i)->shape().IsArray()) {
      return false;
    }
  }
  StatusOr<FusionSpec> spec =
      AnalyzeFusedComputation(fused, RegisterBound::kPinnedOnly);
  if (!spec.ok()) return false;
  if (const HloInstruction* d = spec->dot; d != nullptr) {
    return dot_internal::ChooseTypes(*d, TypeName(d->operand(0)),
                                     TypeName(d->operand(1)), TypeName(d))
        .mxu;
  }
  return true;
}

namespace {

// The fused kernel with its operands, results and taps staged whole.
Status EmitStagedFusion(const HloInstruction& instr, const BufferPlan& plan,
                        KernelBuilder& kb) {
  if (instr.called_computations().size() != 1) {
    return CannotCompile(instr, "a fusion without one fused computation");
  }
  if (!EmitsFusedKernel(instr)) {
    return EmitCalledInline(instr, *instr.fused_computation(), plan, kb);
  }
  const HloComputation& fused = *instr.fused_computation();
  StatusOr<FusionSpec> spec =
      AnalyzeFusedComputation(fused, RegisterBound::kPinnedOnly);
  if (!spec.ok()) {
    return CannotCompile(
        instr, "this fused computation (" + spec.status().message() + ")");
  }
  if (fused.num_parameters() != instr.operand_count()) {
    return CannotCompile(instr, "mismatched fused parameters");
  }
  const HloInstruction* root = fused.root_instruction();
  const std::vector<const HloInstruction*> roots =
      fusion_internal::FusionRoots(fused);
  // Stage the operands.
  std::unordered_map<const HloInstruction*, Staged> staged;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    const HloInstruction* p = fused.parameter_instruction(i);
    if (p == nullptr || !instr.operand(i)->shape().IsArray()) {
      return CannotCompile(instr, "a tuple operand");
    }
    ArrayBuffer in = plan.Array(instr.operand(i));
    Staged s{kb.AllocVmem(in.bytes), in.dtype};
    kb.DmaIn(s.vmem, in.name, in.bytes);
    staged[p] = s;
  }
  if (spec->dot != nullptr) {
    const HloInstruction* d = spec->dot;
    ASSIGN_OR_RETURN(int64_t vmem, fusion_internal::EmitFusedDot(
                                       kb, *d, staged.at(d->operand(0)),
                                       staged.at(d->operand(1))));
    staged[d] = Staged{vmem, TypeName(d)};
  }
  // Output and tap regions.
  std::vector<Staged> outs;
  for (const HloInstruction* r : roots) {
    outs.push_back(Staged{kb.AllocVmem(r->shape().byte_size()), TypeName(r)});
  }
  const std::unordered_set<const HloInstruction*> covered = Covered(roots);
  std::unordered_map<const HloInstruction*, TapRegion> in_loop;
  std::vector<std::pair<const HloInstruction*, TapRegion>> own_loop, copies;
  for (const HloInstruction* t : fused.instructions()) {
    auto it = plan.fused_taps.find(t);
    if (it == plan.fused_taps.end()) continue;
    if (t == root && root->opcode() == HloOpcode::kTuple) continue;  // Below.
    if (it->second.size() != 1) {
      return CannotCompile(instr, "a tap of tuple-shaped %" + t->name());
    }
    TapRegion region{kb.AllocVmem(t->shape().byte_size()), TypeName(t)};
    const FusedOpClass c = ClassifyFusedOp(*t);
    if (staged.count(t)) {
      copies.push_back({t, region});
    } else if (covered.count(t) &&
               (c == FusedOpClass::kElementwise || c == FusedOpClass::kIota ||
                c == FusedOpClass::kConstant) &&
               t->opcode() != HloOpcode::kCopy) {
      in_loop[t] = region;
    } else if (c != FusedOpClass::kReduce || !covered.count(t)) {
      own_loop.push_back({t, region});
    } else {
      copies.push_back({t, region});  // A reduce root: its output region.
    }
  }
  VRegPool pool;
  TileEvaluator ev(kb, pool, staged, in_loop, -1);
  const int64_t n =
      spec->kind == FusionKind::kInput
          ? Shape(PrimitiveType::F32, spec->loop_dims).element_count()
          : roots[0]->shape().element_count();
  if (spec->kind != FusionKind::kInput && n > 0) {
    kb.BeginLinearTiles(n);
    RETURN_IF_ERROR(TwoPass(ev, [&]() -> Status {
      for (size_t i = 0; i < roots.size(); ++i) {
        ASSIGN_OR_RETURN(int r, ev.Get(roots[i]));
        if (!ev.dry()) kb.StoreTile(outs[i].mem, outs[i].vmem, r);
        ev.Release(roots[i]);
      }
      return Status::Ok();
    }));
    kb.EndLinearTiles();
  }
  if (spec->kind == FusionKind::kInput && n > 0) {
    RETURN_IF_ERROR(fusion_internal::EmitFusedReduceLoop(
        kb, pool, *spec, roots, outs, staged, in_loop));
  }
  // Taps the main loop does not cover: a loop of their own.
  for (auto& entry : own_loop) {
    // Not a structured binding: clang 14 cannot capture those.
    const auto& t = entry.first;
    auto& region = entry.second;
    const int64_t count = t->shape().element_count();
    if (count == 0) continue;
    TileEvaluator tev(kb, pool, staged, {}, -1);
    kb.BeginLinearTiles(count);
    RETURN_IF_ERROR(TwoPass(tev, [&]() -> Status {
      ASSIGN_OR_RETURN(int r, tev.Get(t));
      if (!tev.dry()) kb.StoreTile(region.mem, region.vmem, r);
      tev.Release(t);
      return Status::Ok();
    }));
    kb.EndLinearTiles();
  }
  // Outputs, then taps.
  for (size_t i = 0; i < roots.size(); ++i) {
    ArrayBuffer out = plan.LeafArray(&instr, static_cast<int64_t>(i));
    kb.DmaOut(out.name, outs[i].vmem, roots[i]->shape().byte_size());
  }
  auto tap_out = [&](const HloInstruction* t, int64_t vmem) {
    const tpu::BufferDecl& d = plan.buffers[plan.fused_taps.at(t)[0]];
    kb.DmaOut(d.name, vmem, t->shape().byte_size());
  };
  if (auto it = plan.fused_taps.find(root);
      it != plan.fused_taps.end() && root->opcode() == HloOpcode::kTuple) {
    for (size_t i = 0; i < roots.size() && i < it->second.size(); ++i) {
      kb.DmaOut(plan.buffers[it->second[i]].name, outs[i].vmem,
                roots[i]->shape().byte_size());
    }
  }
  for (const auto& [t, region] : in_loop) tap_out(t, region.vmem);
  for (const auto& [t, region] : own_loop) tap_out(t, region.vmem);
  for (const auto& [t, region] : copies) {
    if (staged.count(t)) {
      tap_out(t, staged.at(t).vmem);
    } else {
      for (size_t i = 0; i < roots.size(); ++i) {
        if (roots[i] == t) tap_out(t, outs[i].vmem);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status EmitFusion(const HloInstruction& instr, const BufferPlan& plan,
                  KernelBuilder& kb) {
  // Staged whole when that fits in the VMEM left (tried on a copy of the
  // kernel), else streamed (stream_fusion.h).
  KernelBuilder staged = kb;
  RETURN_IF_ERROR(EmitStagedFusion(instr, plan, staged));
  if (staged.vmem_used() <= staged.vmem_capacity() ||
      !EmitsFusedKernel(instr)) {
    kb = std::move(staged);
    return Status::Ok();
  }
  StatusOr<FusionSpec> spec = AnalyzeFusedComputation(
      *instr.fused_computation(), RegisterBound::kPinnedOnly);
  if (!spec.ok()) return spec.status();
  return EmitStreamedFusion(instr, plan, *spec, kb);
}

}  // namespace trench::codegen
