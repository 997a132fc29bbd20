// The tile loop of reduce fusions (kInput): each lane of an output tile
// folds its reduced elements into an accumulator in the lane type, in
// row-major order of the reduced dimensions (as EmitReduce does); the
// fused producers are evaluated at each reduced element's position, and
// outputs shaped like the reduce input are scattered from the same loop.
#include <algorithm>

#include "compiler/codegen/emit_fusion_internal.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen::fusion_internal {
namespace {

std::string V(int r) { return "v" + std::to_string(r); }

std::string TypeName(const HloInstruction* i) {
  return std::string(PrimitiveTypeName(i->shape().element_type()));
}

}  // namespace

Status EmitFusedReduceLoop(
    KernelBuilder& kb, VRegPool& pool, const FusionSpec& spec,
    const std::vector<const HloInstruction*>& roots,
    const std::vector<Staged>& outs,
    const std::unordered_map<const HloInstruction*, Staged>& staged,
    const std::unordered_map<const HloInstruction*, TapRegion>& taps) {
  const std::vector<int64_t>& in_dims = spec.reduce_input_dims;
  const std::vector<int64_t>& red = spec.reduce_dims;
  const std::vector<int64_t>& out_dims = spec.loop_dims;
  std::vector<int64_t> st(in_dims.size(), 1), ost(out_dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(in_dims.size()) - 2; d >= 0; --d) {
    st[d] = st[d + 1] * in_dims[d + 1];
  }
  for (int64_t d = static_cast<int64_t>(out_dims.size()) - 2; d >= 0; --d) {
    ost[d] = ost[d + 1] * out_dims[d + 1];
  }
  std::vector<int64_t> kept;
  int64_t in_elements = 1, out_elements = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(in_dims.size()); ++d) {
    in_elements *= in_dims[d];
    if (!std::binary_search(red.begin(), red.end(), d)) kept.push_back(d);
  }
  for (int64_t d : out_dims) out_elements *= d;
  if (red.size() > 8) return InvalidArgument("fused reduce of rank > 8");
  kb.BeginLinearTiles(out_elements);
  // base = the input linear index of each lane's first reduced element.
  ASSIGN_OR_RETURN(int lin, pool.Alloc(false));
  ASSIGN_OR_RETURN(int base, pool.Alloc(false));
  ASSIGN_OR_RETURN(int c, pool.Alloc(false));
  ASSIGN_OR_RETURN(int k, pool.Alloc(false));
  kb.LinearIndex();
  kb.Emit("vmov " + V(lin) + ", v31");
  kb.Splat(base, "s32", "0");
  for (size_t j = 0; j < kept.size(); ++j) {
    kb.Splat(k, "s32", std::to_string(ost[j]));
    kb.Emit("vdiv.s32 " + V(c) + ", " + V(lin) + ", " + V(k));
    kb.Splat(k, "s32", std::to_string(out_dims[j]));
    kb.Emit("vrem.s32 " + V(c) + ", " + V(c) + ", " + V(k));
    kb.Splat(k, "s32", std::to_string(st[kept[j]]));
    kb.Emit("vmul.s32 " + V(c) + ", " + V(c) + ", " + V(k));
    kb.Emit("vadd.s32 " + V(base) + ", " + V(base) + ", " + V(c));
  }
  pool.Free(lin, false);
  pool.Free(c, false);
  // Accumulators start at the init values.
  std::vector<int> acc(roots.size(), -1);
  std::vector<std::string> ops(roots.size());
  for (size_t i = 0; i < roots.size(); ++i) {
    const HloInstruction* r = roots[i];
    if (r->opcode() != HloOpcode::kReduce) continue;
    const PrimitiveType t = r->operand(0)->shape().element_type();
    const std::string type = TypeName(r->operand(0));
    std::string lane = LaneType(type);
    if (type == "pred") lane = "s32";
    ops[i] = FusedReducerMnemonic(*r->to_apply(), t) + "." + lane;
    ASSIGN_OR_RETURN(acc[i], pool.Alloc(IsWide(type)));
    const HloInstruction* init = r->operand(1);
    if (auto it = staged.find(init); it != staged.end()) {
      kb.Splat(k, "s32", "0");
      kb.Emit("vgather." + it->second.mem + " " + V(acc[i]) + ", vmem[" +
              std::to_string(it->second.vmem) + "], " + V(k) + " @m0");
    } else {
      RETURN_IF_ERROR(EmitSplatScalar(kb, init->literal(), acc[i]));
    }
  }
  pool.Free(k, false);
  if (in_elements > 0) {
    std::vector<std::string> labels;
    for (size_t j = 0; j < red.size(); ++j) {
      const std::string cnt = "s" + std::to_string(1 + j);
      const std::string off = "s" + std::to_string(10 + j);
      kb.Emit(j == 0 ? "simm " + off + ", 0"
                     : "smov " + off + ", s" + std::to_string(9 + j));
      kb.Emit("simm " + cnt + ", " + std::to_string(in_dims[red[j]]));
      labels.push_back(kb.NewLabel("fred"));
      kb.PlaceLabel(labels.back());
    }
    if (red.empty()) kb.Emit("simm s10, 0");
    const std::string inner =
        "s" + std::to_string(9 + std::max<size_t>(red.size(), 1));
    ASSIGN_OR_RETURN(int pos, pool.Alloc(false));
    kb.Emit("vbcast.s32 " + V(pos) + ", " + inner);
    kb.Emit("vadd.s32 " + V(pos) + ", " + V(pos) + ", " + V(base));
    TileEvaluator ev(kb, pool, staged, taps, pos);
    for (bool dry : {true, false}) {
      ev.SetDry(dry);
      for (size_t i = 0; i < roots.size(); ++i) {
        const HloInstruction* r = roots[i];
        const HloInstruction* value =
            r->opcode() == HloOpcode::kReduce ? r->operand(0) : r;
        ASSIGN_OR_RETURN(int v, ev.Get(value));
        if (!dry && acc[i] >= 0) {
          kb.Emit(ops[i] + " " + V(acc[i]) + ", " + V(acc[i]) + ", " + V(v) +
                  " @m0");
        } else if (!dry) {
          kb.Emit("vscatter." + outs[i].mem + " vmem[" +
                  std::to_string(outs[i].vmem) + "], " + V(pos) + ", " + V(v) +
                  " @m0");
        }
        ev.Release(value);
      }
    }
    ev.End();
    pool.Free(pos, false);
    for (size_t j = red.size(); j-- > 0;) {
      kb.Emit("sadd s" + std::to_string(10 + j) + ", s" +
              std::to_string(10 + j) + ", " + std::to_string(st[red[j]]));
      kb.Emit("sloop s" + std::to_string(1 + j) + ", " + labels[j]);
    }
  }
  for (size_t i = 0; i < roots.size(); ++i) {
    if (acc[i] < 0) continue;
    kb.StoreTile(outs[i].mem, outs[i].vmem, acc[i]);
    pool.Free(acc[i], IsWide(TypeName(roots[i]->operand(0))));
  }
  pool.Free(base, false);
  kb.EndLinearTiles();
  return Status::Ok();
}

}  // namespace trench::codegen::fusion_internal
