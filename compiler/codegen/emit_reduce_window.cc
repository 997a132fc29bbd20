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
// Operands and results too large to stage whole stream in blocks of
// output rows (stream_reduce_window.h).
#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/codegen/stream_reduce.h"
#include "compiler/codegen/stream_reduce_window.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {

Status CheckWindow(const HloInstruction& instr,
                   const std::vector<WindowDim>& window, int64_t rank) {
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
  return Status::Ok();
}

int64_t WindowPositions(const std::vector<WindowDim>& window) {
  int64_t positions = 1;
  for (const WindowDim& w : window) positions *= w.size;
  return positions;
}

std::vector<LoopDim> WindowLoops(const std::vector<WindowDim>& window) {
  std::vector<LoopDim> loops;
  for (const WindowDim& w : window) {
    loops.push_back({w.size, 0, w.window_dilation});
  }
  return loops;
}

void EmitScaledCoordinates(KernelBuilder& kb, int lin,
                           const std::vector<int64_t>& dims,
                           const std::vector<int64_t>& scale,
                           const std::vector<int64_t>& offset,
                           const std::vector<int>& bases) {
  for (size_t d = 0; d < dims.size(); ++d) {
    EmitCoordinate(kb, lin, dims, d, bases[d]);
    if (scale[d] != 1) {
      kb.Splat(29, "s32", std::to_string(scale[d]));
      kb.Emit("vmul.s32 " + VReg(bases[d]) + ", " + VReg(bases[d]) + ", v29");
    }
    if (offset[d] != 0) {
      kb.Splat(29, "s32", std::to_string(offset[d]));
      kb.Emit("vadd.s32 " + VReg(bases[d]) + ", " + VReg(bases[d]) + ", v29");
    }
  }
}

void EmitDividedIndex(KernelBuilder& kb, const std::vector<int>& bases,
                      bool subtract, const std::vector<int64_t>& divisor,
                      const std::vector<int64_t>& to_dims, int idx, int u) {
  const std::vector<int64_t> st = RowMajorStrides(to_dims);
  const std::string op = subtract ? "vsub.s32 " : "vadd.s32 ";
  kb.Emit("mand m4, m0, m0");
  kb.Splat(idx, "s32", "0");
  for (size_t d = 0; d < to_dims.size(); ++d) {
    kb.Emit("vbcast.s32 v28, s" + std::to_string(10 + d));
    kb.Emit(op + VReg(u) + ", " + VReg(bases[d]) + ", v28");
    kb.Splat(28, "s32", "0");
    kb.Emit("vcmpge.s32 m5, " + VReg(u) + ", v28");
    kb.Emit("mand m4, m4, m5");
    if (divisor[d] != 1) {
      kb.Splat(28, "s32", std::to_string(divisor[d]));
      kb.Emit("vrem.s32 v29, " + VReg(u) + ", v28");
      kb.Splat(28, "s32", "0");
      kb.Emit("vcmpeq.s32 m5, v29, v28");
      kb.Emit("mand m4, m4, m5");
      kb.Splat(28, "s32", std::to_string(divisor[d]));
      kb.Emit("vdiv.s32 " + VReg(u) + ", " + VReg(u) + ", v28");
    }
    kb.Splat(28, "s32", std::to_string(to_dims[d]));
    kb.Emit("vcmplt.s32 m5, " + VReg(u) + ", v28");
    kb.Emit("mand m4, m4, m5");
    if (st[d] != 1) {
      kb.Splat(28, "s32", std::to_string(st[d]));
      kb.Emit("vmul.s32 " + VReg(u) + ", " + VReg(u) + ", v28");
    }
    kb.Emit("vadd.s32 " + VReg(idx) + ", " + VReg(idx) + ", " + VReg(u));
  }
}

void EmitWindowBases(KernelBuilder& kb, int lin,
                     const std::vector<int64_t>& out_dims,
                     const std::vector<WindowDim>& window,
                     const std::vector<int>& bases) {
  std::vector<int64_t> scale, offset;
  for (const WindowDim& w : window) {
    scale.push_back(w.stride);
    offset.push_back(-w.pad_lo);
  }
  EmitScaledCoordinates(kb, lin, out_dims, scale, offset, bases);
}

void EmitWindowIndex(KernelBuilder& kb, const std::vector<WindowDim>& window,
                     const std::vector<int64_t>& in_dims,
                     const std::vector<int>& bases, int idx, int u) {
  std::vector<int64_t> divisor;
  for (const WindowDim& w : window) divisor.push_back(w.base_dilation);
  EmitDividedIndex(kb, bases, /*subtract=*/false, divisor, in_dims, idx, u);
}

Status EmitReduceWindowTiles(KernelBuilder& kb, const HloInstruction& instr,
                             const ReductionOperands& ops,
                             const ReductionVmem& vmem, const Reducer& reducer,
                             int64_t elements, const std::string& out_first,
                             const std::string& in_first) {
  const std::vector<WindowDim>& window = *instr.attrs().window;
  const int64_t n = ops.n;
  const std::vector<ArrayBuffer>& ins = ops.ins;
  const std::vector<ArrayBuffer>& inits = ops.inits;
  const std::vector<int64_t>& in_dims = ins[0].dims;
  const int64_t rank = in_dims.size();
  const HloComputation& comp = *instr.to_apply();
  const std::vector<int64_t>& out_dims = ops.outs[0].dims;
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
    if (!reducer.direct) {
      ASSIGN_OR_RETURN(int o, pool.Alloc(IsWide(inits[i].dtype)));
      res.push_back(o);
    }
  }
  std::vector<int> params = acc;
  params.insert(params.end(), x.begin(), x.end());

  kb.BeginLinearTiles(elements);
  kb.LinearIndex();
  EmitOffsetLanes(kb, 31, out_first, false);  // Global output coordinates.
  EmitWindowBases(kb, 31, out_dims, window, bases);
  EmitLoadInits(kb, ops, vmem, acc, idx);
  if (WindowPositions(window) > 0 && ins[0].elements > 0) {
    RETURN_IF_ERROR(EmitNestedLoops(kb, WindowLoops(window), [&]() -> Status {
      EmitWindowIndex(kb, window, in_dims, bases, idx, u);
      EmitOffsetLanes(kb, idx, in_first, true);  // Into the staged part.
      EmitGatherInputs(kb, ops, vmem, x, idx, 4);
      if (reducer.direct) {
        kb.Emit(reducer.simple + "." + LaneType(ins[0].dtype) + " " +
                VReg(acc[0]) + ", " + VReg(acc[0]) + ", " + VReg(x[0]) +
                " @m4");
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
    kb.StoreTile(ops.outs[i].dtype, vmem.outs[i], acc[i]);
  }
  kb.EndLinearTiles();
  return Status::Ok();
}

Status EmitReduceWindow(const HloInstruction& instr, const BufferPlan& plan,
                        KernelBuilder& kb) {
  ASSIGN_OR_RETURN(ReductionOperands ops, GetReductionOperands(instr, plan));
  if (!instr.attrs().window.has_value()) {
    return CannotCompile(instr, "a missing window");
  }
  RETURN_IF_ERROR(
      CheckWindow(instr, *instr.attrs().window, ops.ins[0].dims.size()));
  ASSIGN_OR_RETURN(Reducer reducer, ChooseReducer(instr, ops));
  if (ops.outs[0].elements == 0) return Status::Ok();
  if (!ReductionFitsStaged(kb, ops)) {
    return EmitStreamedReduceWindow(instr, ops, reducer, kb);
  }
  const ReductionVmem vmem = StageReduction(kb, ops);
  RETURN_IF_ERROR(EmitReduceWindowTiles(kb, instr, ops, vmem, reducer,
                                        ops.outs[0].elements, "", ""));
  for (int64_t i = 0; i < ops.n; ++i) {
    kb.DmaOut(ops.outs[i].name, vmem.outs[i], ops.outs[i].bytes);
  }
  return Status::Ok();
}

}  // namespace trench::codegen
