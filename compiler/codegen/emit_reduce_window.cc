// reduce-window: N inputs and N inits, any window (size, stride, padding
// lo/hi, base and window dilation), any reducer computation.
//
// Each lane computes one output element o. For window position k (nested
// scalar loops, row-major, the oracle's order) and dimension d the input
// coordinate is u_d / base_dilation_d with
// u_d = o_d * stride_d - pad_lo_d + k_d * window_dilation_d, valid when
// u_d >= 0, u_d divisible by the base dilation and the quotient inside the
// input (XLA: padding and dilation holes contribute nothing). Valid lanes
// gather their elements and fold them into the accumulators; invalid lanes
// keep theirs (vsel, or a predicated op for single-op reducers).
#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {

void EmitWindowBases(KernelBuilder& kb, int lin,
                     const std::vector<int64_t>& out_dims,
                     const std::vector<WindowDim>& window,
                     const std::vector<int>& bases) {
  for (size_t d = 0; d < out_dims.size(); ++d) {
    EmitCoordinate(kb, lin, out_dims, d, bases[d]);
    if (window[d].stride != 1) {
      kb.Splat(29, "s32", std::to_string(window[d].stride));
      kb.Emit("vmul.s32 " + VReg(bases[d]) + ", " + VReg(bases[d]) + ", v29");
    }
    if (window[d].pad_lo != 0) {
      kb.Splat(29, "s32", std::to_string(-window[d].pad_lo));
      kb.Emit("vadd.s32 " + VReg(bases[d]) + ", " + VReg(bases[d]) + ", v29");
    }
  }
}

void EmitWindowIndex(KernelBuilder& kb, const std::vector<WindowDim>& window,
                     const std::vector<int64_t>& in_dims,
                     const std::vector<int>& bases, int idx, int u) {
  const std::vector<int64_t> st = Strides(in_dims);
  kb.Emit("mand m4, m0, m0");
  kb.Splat(idx, "s32", "0");
  for (size_t d = 0; d < in_dims.size(); ++d) {
    const int64_t bdil = window[d].base_dilation;
    kb.Emit("vbcast.s32 v28, s" + std::to_string(10 + d));
    kb.Emit("vadd.s32 " + VReg(u) + ", " + VReg(bases[d]) + ", v28");
    kb.Splat(28, "s32", "0");
    kb.Emit("vcmpge.s32 m5, " + VReg(u) + ", v28");
    kb.Emit("mand m4, m4, m5");
    if (bdil != 1) {
      kb.Splat(28, "s32", std::to_string(bdil));
      kb.Emit("vrem.s32 v29, " + VReg(u) + ", v28");
      kb.Splat(28, "s32", "0");
      kb.Emit("vcmpeq.s32 m5, v29, v28");
      kb.Emit("mand m4, m4, m5");
      kb.Splat(28, "s32", std::to_string(bdil));
      kb.Emit("vdiv.s32 " + VReg(u) + ", " + VReg(u) + ", v28");
    }
    kb.Splat(28, "s32", std::to_string(in_dims[d]));
    kb.Emit("vcmplt.s32 m5, " + VReg(u) + ", v28");
    kb.Emit("mand m4, m4, m5");
    if (st[d] != 1) {
      kb.Splat(28, "s32", std::to_string(st[d]));
      kb.Emit("vmul.s32 " + VReg(u) + ", " + VReg(u) + ", v28");
    }
    kb.Emit("vadd.s32 " + VReg(idx) + ", " + VReg(idx) + ", " + VReg(u));
  }
}

Status EmitReduceWindow(const HloInstruction& instr, const BufferPlan& plan,
                        KernelBuilder& kb) {
  const int64_t n = instr.operand_count() / 2;
  if (n == 0 || instr.operand_count() % 2 != 0) {
    return CannotCompile(instr, "an odd operand count");
  }
  if (!instr.attrs().window.has_value()) {
    return CannotCompile(instr, "a missing window");
  }
  const std::vector<WindowDim>& window = *instr.attrs().window;
  std::vector<ArrayBuffer> ins, inits;
  for (int64_t i = 0; i < n; ++i) {
    ins.push_back(plan.Array(instr.operand(i)));
    inits.push_back(plan.Array(instr.operand(n + i)));
  }
  const std::vector<ArrayBuffer> outs = LeafBuffers(plan, &instr);
  if (static_cast<int64_t>(outs.size()) != n) {
    return CannotCompile(instr, "a nested tuple result");
  }
  for (int64_t i = 0; i < n; ++i) {
    if (LaneType(ins[i].dtype).empty() || LaneType(inits[i].dtype).empty()) {
      return CannotCompile(instr, ins[i].dtype);
    }
    if (outs[i].dtype != inits[i].dtype) {
      return CannotCompile(
          instr, outs[i].dtype + " result of a " + inits[i].dtype + " reducer");
    }
  }
  const std::vector<int64_t>& in_dims = ins[0].dims;
  const int64_t rank = in_dims.size();
  if (rank > 8) return CannotCompile(instr, "rank > 8");
  if (static_cast<int64_t>(window.size()) != rank) {
    return CannotCompile(instr, "a window of another rank");
  }
  for (const WindowDim& w : window) {
    if (w.reversal || w.stride < 1 || w.base_dilation < 1 ||
        w.window_dilation < 1 || w.size < 0) {
      return CannotCompile(instr, "a reversed or invalid window");
    }
  }
  const HloComputation& comp = *instr.to_apply();
  const std::string simple = n == 1 && inits[0].dtype == ins[0].dtype
                                 ? SimpleReducer(comp, ins[0].dtype)
                                 : "";
  const bool direct =
      !simple.empty() &&
      !(simple == "vmul" && (ins[0].dtype == "bf16" || ins[0].dtype == "f16"));
  if (!direct) RETURN_IF_ERROR(CheckScalarComputation(instr, comp));
  const std::vector<int64_t>& out_dims = outs[0].dims;
  if (outs[0].elements == 0) return Status::Ok();
  int64_t positions = 1;
  for (const WindowDim& w : window) positions *= w.size;

  std::vector<int64_t> in_vmem, init_vmem, out_vmem;
  for (int64_t i = 0; i < n; ++i) {
    in_vmem.push_back(kb.AllocVmem(ins[i].bytes));
    kb.DmaIn(in_vmem.back(), ins[i].name, ins[i].bytes);
    init_vmem.push_back(kb.AllocVmem(inits[i].bytes));
    kb.DmaIn(init_vmem.back(), inits[i].name, inits[i].bytes);
  }
  for (int64_t i = 0; i < n; ++i) {
    out_vmem.push_back(kb.AllocVmem(outs[i].bytes));
  }
  VRegPool pool;
  std::vector<int> bases, acc, x, res;
  for (int64_t d = 0; d < rank; ++d) {
    ASSIGN_OR_RETURN(int b, pool.Alloc(false));
    bases.push_back(b);
  }
  ASSIGN_OR_RETURN(int idx, pool.Alloc(false));
  ASSIGN_OR_RETURN(int u, pool.Alloc(false));
  for (int64_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(int a, pool.Alloc(IsWide(inits[i].dtype)));
    acc.push_back(a);
    ASSIGN_OR_RETURN(int v, pool.Alloc(IsWide(ins[i].dtype)));
    x.push_back(v);
    if (!direct) {
      ASSIGN_OR_RETURN(int o, pool.Alloc(IsWide(inits[i].dtype)));
      res.push_back(o);
    }
  }
  std::vector<int> params = acc;
  params.insert(params.end(), x.begin(), x.end());

  kb.BeginLinearTiles(outs[0].elements);
  kb.LinearIndex();
  EmitWindowBases(kb, 31, out_dims, window, bases);
  kb.Splat(idx, "s32", "0");
  for (int64_t i = 0; i < n; ++i) {
    kb.Emit("vgather." + inits[i].dtype + " " + VReg(acc[i]) + ", vmem[" +
            std::to_string(init_vmem[i]) + "], " + VReg(idx) + " @m0");
  }
  if (positions > 0 && ins[0].elements > 0) {
    std::vector<LoopDim> loops;
    for (const WindowDim& w : window) {
      loops.push_back({w.size, 0, w.window_dilation});
    }
    RETURN_IF_ERROR(EmitNestedLoops(kb, loops, [&]() -> Status {
      EmitWindowIndex(kb, window, in_dims, bases, idx, u);
      for (int64_t i = 0; i < n; ++i) {
        kb.Emit("vgather." + ins[i].dtype + " " + VReg(x[i]) + ", vmem[" +
                std::to_string(in_vmem[i]) + "], " + VReg(idx) + " @m4");
      }
      if (direct) {
        kb.Emit(simple + "." + LaneType(ins[0].dtype) + " " + VReg(acc[0]) +
                ", " + VReg(acc[0]) + ", " + VReg(x[0]) + " @m4");
        return Status::Ok();
      }
      RETURN_IF_ERROR(
          EmitScalarComputation(kb, pool, instr, comp, params, res));
      for (int64_t i = 0; i < n; ++i) {
        EmitSelect(kb, LaneType(inits[i].dtype), acc[i], 4, res[i], acc[i]);
      }
      return Status::Ok();
    }));
  }
  for (int64_t i = 0; i < n; ++i) {
    kb.StoreTile(outs[i].dtype, out_vmem[i], acc[i]);
  }
  kb.EndLinearTiles();
  for (int64_t i = 0; i < n; ++i) {
    kb.DmaOut(outs[i].name, out_vmem[i], outs[i].bytes);
  }
  return Status::Ok();
}

}  // namespace trench::codegen
