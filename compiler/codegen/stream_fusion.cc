// Streamed fused kernels (stream_fusion.h): parameter placement, the
// streamed loop fusion and the taps; the reduce fold is in
// stream_fusion_reduce.cc.
#include "compiler/codegen/stream_fusion.h"

#include "compiler/codegen/emit_fusion_internal.h"
#include "compiler/codegen/streaming.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace fusion_internal {

std::vector<const HloInstruction*> FusionRoots(const HloComputation& fused) {
  const HloInstruction* root = fused.root_instruction();
  if (root->opcode() != HloOpcode::kTuple) return {root};
  return {root->operands().begin(), root->operands().end()};
}

namespace {

std::string TypeName(const HloInstruction* i) {
  return std::string(PrimitiveTypeName(i->shape().element_type()));
}

// HBM to HBM: `bytes` of buffer `src` to buffer `dst`.
void CopyHbm(KernelBuilder& kb, const std::string& dst, const std::string& src,
             int64_t bytes) {
  if (bytes == 0 || dst == src) return;
  kb.Emit("saddr s1, " + src);
  kb.Emit("saddr s2, " + dst);
  kb.Emit("dmastart hbm[s2], hbm[s1], " + I(bytes) + ", 0");
  kb.Emit("dmawait 0");
}

// One StreamLoop over the elements of `roots` (all with the same count)
// storing root i to outs[i]; parameters placed by PlaceParams.
Status StreamRoots(KernelBuilder& kb, const HloInstruction& fusion,
                   const ParamBuffers& params,
                   const std::vector<const HloInstruction*>& roots,
                   const std::vector<StreamArray>& outs) {
  const int64_t n = roots[0]->shape().element_count();
  if (n == 0) return Status::Ok();
  ParamAccess access;
  for (const HloInstruction* r : roots) access.Collect(r, true);
  const int64_t mark = kb.VmemMark();
  std::vector<StreamArray> streamed;
  ASSIGN_OR_RETURN(auto staged,
                   PlaceParams(kb, fusion, params, access, n, &streamed));
  std::vector<StreamArray> all = streamed;
  all.insert(all.end(), outs.begin(), outs.end());
  const int64_t chunk =
      ChooseStreamChunk(n, all, kb.vmem_capacity() - kb.vmem_used());
  if (chunk == 0) {
    return ResourceExhausted(
        "hloc: " + fusion.name() +
        ": not even one 1024-element stream chunk of the streamed fusion's "
        "operands and results fits in the VMEM its staged operands leave");
  }
  ASSIGN_OR_RETURN(StreamLoop loop,
                   StreamLoop::Create(kb, n, streamed, outs, chunk));
  VRegPool pool;
  TileEvaluator ev(kb, pool, staged, {}, -1);
  ev.SetStreamLoader([&loop](int dst, int s) { loop.Load(dst, s); });
  loop.Begin();
  RETURN_IF_ERROR(TwoPass(ev, [&]() -> Status {
    for (size_t i = 0; i < roots.size(); ++i) {
      ASSIGN_OR_RETURN(int r, ev.Get(roots[i]));
      if (!ev.dry()) loop.Store(static_cast<int>(i), r);
      ev.Release(roots[i]);
    }
    return Status::Ok();
  }));
  loop.End();
  kb.ReleaseVmem(mark);
  return Status::Ok();
}

// The tap buffers of the fused computation's tapped instructions: a
// streamed loop of their own, or HBM copies of parameters and roots.
Status EmitStreamedTaps(KernelBuilder& kb, const HloInstruction& fusion,
                        const BufferPlan& plan, const ParamBuffers& params,
                        const std::vector<const HloInstruction*>& roots,
                        const std::vector<ArrayBuffer>& outs) {
  const HloComputation& fused = *fusion.fused_computation();
  const HloInstruction* root = fused.root_instruction();
  for (const HloInstruction* t : fused.instructions()) {
    auto it = plan.fused_taps.find(t);
    if (it == plan.fused_taps.end()) continue;
    if (t == root && root->opcode() == HloOpcode::kTuple) {
      for (size_t i = 0; i < roots.size() && i < it->second.size(); ++i) {
        CopyHbm(kb, plan.buffers[it->second[i]].name, outs[i].name,
                outs[i].bytes);
      }
      continue;
    }
    if (it->second.size() != 1) {
      return CannotCompile(fusion, "a tap of tuple-shaped %" + t->name());
    }
    const std::string tap = plan.buffers[it->second[0]].name;
    const int64_t bytes = t->shape().byte_size();
    if (auto p = params.find(t); p != params.end()) {
      CopyHbm(kb, tap, p->second.name, bytes);
      continue;
    }
    bool is_root = false;
    for (size_t i = 0; i < roots.size(); ++i) {
      if (roots[i] == t) {
        CopyHbm(kb, tap, outs[i].name, bytes);
        is_root = true;
      }
    }
    if (is_root) continue;
    if (ClassifyFusedOp(*t) == FusedOpClass::kReduce) {
      return CannotCompile(fusion, "a tap of a reduce that is not a root");
    }
    RETURN_IF_ERROR(StreamRoots(kb, fusion, params, {t}, {{tap, TypeName(t)}}));
  }
  return Status::Ok();
}

}  // namespace

void ParamAccess::Collect(const HloInstruction* x, bool at_own) {
  std::unordered_set<const HloInstruction*>& seen =
      at_own ? seen_own_ : seen_mapped_;
  if (!seen.insert(x).second) return;
  if (x->opcode() == HloOpcode::kParameter) {
    (at_own ? own : mapped).insert(x);
    return;
  }
  switch (ClassifyFusedOp(*x)) {
    case FusedOpClass::kIota:
    case FusedOpClass::kConstant:
      return;
    case FusedOpClass::kIndexMap:
    case FusedOpClass::kDot:
      for (const HloInstruction* o : x->operands()) Collect(o, false);
      return;
    case FusedOpClass::kReduce:
      Collect(x->operand(0), at_own);
      Collect(x->operand(1), false);
      return;
    default:  // Elementwise, reshape, bitcast, copy: the same position.
      for (const HloInstruction* o : x->operands()) Collect(o, at_own);
  }
}

StatusOr<std::unordered_map<const HloInstruction*, Staged>> PlaceParams(
    KernelBuilder& kb, const HloInstruction& fusion, const ParamBuffers& params,
    const ParamAccess& access, int64_t n, std::vector<StreamArray>* streamed) {
  std::unordered_map<const HloInstruction*, Staged> staged;
  const HloComputation& fused = *fusion.fused_computation();
  for (int64_t i = 0; i < fused.num_parameters(); ++i) {
    const HloInstruction* p = fused.parameter_instruction(i);
    const bool own = access.own.count(p) > 0;
    const bool mapped = access.mapped.count(p) > 0;
    if (!own && !mapped) continue;
    const ArrayBuffer& in = params.at(p);
    if (own && !mapped && in.elements == n) {
      staged[p] = Staged{-1, in.dtype, static_cast<int>(streamed->size())};
      streamed->push_back({in.name, in.dtype});
      continue;
    }
    if (kb.vmem_used() + VmemAligned(in.bytes) > kb.vmem_capacity()) {
      return ResourceExhausted(
          "hloc: " + fusion.name() + ": operand %" + p->name() + " (" +
          I(in.bytes) +
          " bytes) is read through a broadcast, transpose or slice (or is "
          "a reduce init), so it is staged whole, and it does not fit in "
          "the VMEM left");
    }
    staged[p] = Staged{kb.AllocVmem(in.bytes), in.dtype};
    kb.DmaIn(staged[p].vmem, in.name, in.bytes);
  }
  return staged;
}

}  // namespace fusion_internal

Status EmitStreamedFusion(const HloInstruction& instr, const BufferPlan& plan,
                          const FusionSpec& spec, KernelBuilder& kb) {
  using namespace fusion_internal;  // NOLINT: the internals of one emitter.
  if (spec.dot != nullptr) {
    return ResourceExhausted("hloc: " + instr.name() +
                             ": a fused dot's operands and result are staged "
                             "whole and do not fit in VMEM");
  }
  const HloComputation& fused = *instr.fused_computation();
  const std::vector<const HloInstruction*> roots = FusionRoots(fused);
  ParamBuffers params;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    params[fused.parameter_instruction(i)] = plan.Array(instr.operand(i));
  }
  std::vector<ArrayBuffer> outs;
  for (size_t i = 0; i < roots.size(); ++i) {
    outs.push_back(plan.LeafArray(&instr, static_cast<int64_t>(i)));
  }
  const int64_t mark = kb.VmemMark();  // The taps reuse the VMEM.
  if (spec.kind == FusionKind::kInput) {
    RETURN_IF_ERROR(
        EmitStreamedReduceFusion(kb, instr, spec, roots, params, outs));
    kb.ReleaseVmem(mark);
  } else {
    std::vector<StreamArray> arrays;
    for (size_t i = 0; i < roots.size(); ++i) {
      arrays.push_back({outs[i].name, TypeName(roots[i])});
    }
    RETURN_IF_ERROR(StreamRoots(kb, instr, params, roots, arrays));
  }
  return EmitStreamedTaps(kb, instr, plan, params, roots, outs);
}

}  // namespace trench::codegen
