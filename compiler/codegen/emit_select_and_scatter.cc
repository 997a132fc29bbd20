// select-and-scatter(operand, source, init), select= and scatter= any
// scalar computations, any window.
//
// Semantics (XLA's evaluator, oracle/select_and_scatter.cc): the result
// starts as init; for each source element s in row-major order, its window
// over the operand is scanned in row-major order skipping padding; the
// first valid element is chosen and each later one replaces it when
// select(chosen, current) is false; then result[chosen] =
// scatter(source[s], result[chosen]).
//
// Two lane-parallel phases in one kernel:
//  1. One lane per source element: the scan above with gathers and the
//     select computation; the chosen operand offset (or -1 for a window
//     with no valid element) goes to a VMEM index array.
//  2. One lane per result element r: it visits the source elements whose
//     window contains r, in row-major source order (window positions in
//     reverse row-major order give increasing source coordinates), and
//     folds in scatter(source[s], acc) where s chose r. Sequential order
//     per result element makes any scatter computation exact, also when
//     windows overlap.
#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {

Status EmitSelectAndScatter(const HloInstruction& instr, const BufferPlan& plan,
                            KernelBuilder& kb) {
  if (instr.operand_count() != 3 || instr.called_computations().size() != 2 ||
      !instr.attrs().window.has_value()) {
    return CannotCompile(instr, "a malformed instruction");
  }
  const std::vector<WindowDim>& window = *instr.attrs().window;
  const ArrayBuffer operand = plan.Array(instr.operand(0));
  const ArrayBuffer source = plan.Array(instr.operand(1));
  const ArrayBuffer init = plan.Array(instr.operand(2));
  const ArrayBuffer out = plan.Array(&instr);
  const std::string t = operand.dtype;
  const std::string lane = LaneType(t);
  if (lane.empty() || source.dtype != t || init.dtype != t || out.dtype != t) {
    return CannotCompile(instr, t);
  }
  const int64_t rank = operand.dims.size();
  RETURN_IF_ERROR(CheckWindow(instr, window, rank));
  const HloComputation& select = *instr.called_computations()[0];
  const HloComputation& scatter = *instr.called_computations()[1];
  RETURN_IF_ERROR(CheckScalarComputation(instr, select));
  RETURN_IF_ERROR(CheckScalarComputation(instr, scatter));
  if (out.elements == 0) return Status::Ok();
  const bool wide = IsWide(t);
  const bool any = WindowPositions(window) > 0 && source.elements > 0;

  const int64_t op_vmem = kb.AllocVmem(operand.bytes);
  const int64_t src_vmem = kb.AllocVmem(source.bytes);
  const int64_t init_vmem = kb.AllocVmem(init.bytes);
  const int64_t sel_vmem = kb.AllocVmem(source.elements * 4);
  const int64_t out_vmem = kb.AllocVmem(out.bytes);
  kb.DmaIn(op_vmem, operand.name, operand.bytes);
  kb.DmaIn(src_vmem, source.name, source.bytes);
  kb.DmaIn(init_vmem, init.name, init.bytes);

  VRegPool pool;
  std::vector<int> bases;
  for (int64_t d = 0; d < rank; ++d) {
    ASSIGN_OR_RETURN(int b, pool.Alloc(false));
    bases.push_back(b);
  }
  ASSIGN_OR_RETURN(int idx, pool.Alloc(false));
  ASSIGN_OR_RETURN(int u, pool.Alloc(false));
  ASSIGN_OR_RETURN(int cidx, pool.Alloc(false));
  ASSIGN_OR_RETURN(int flag, pool.Alloc(false));
  ASSIGN_OR_RETURN(int chosen, pool.Alloc(wide));
  ASSIGN_OR_RETURN(int cur, pool.Alloc(wide));
  ASSIGN_OR_RETURN(int res, pool.Alloc(wide));

  // Phase 1: one lane per source element.
  if (any) {
    kb.BeginLinearTiles(source.elements);
    kb.LinearIndex();
    EmitWindowBases(kb, 31, source.dims, window, bases);
    kb.Emit("mclr m6");  // m6: the lane has chosen an element.
    RETURN_IF_ERROR(EmitNestedLoops(kb, WindowLoops(window), [&]() -> Status {
      EmitWindowIndex(kb, window, operand.dims, bases, idx, u);
      kb.Emit("vgather." + t + " " + VReg(cur) + ", vmem[" +
              std::to_string(op_vmem) + "], " + VReg(idx) + " @m4");
      RETURN_IF_ERROR(EmitScalarComputation(kb, pool, instr, select,
                                            {chosen, cur}, {flag}));
      // Replace where valid and (nothing chosen yet or select is false).
      kb.Emit("vvtom m7, " + VReg(flag));
      kb.Emit("mnot m7, m7");
      kb.Emit("mnot m5, m6");
      kb.Emit("mor m7, m7, m5");
      kb.Emit("mand m7, m7, m4");
      EmitSelect(kb, lane, chosen, 7, cur, chosen);
      EmitSelect(kb, "s32", cidx, 7, idx, cidx);
      kb.Emit("mor m6, m6, m4");
      return Status::Ok();
    }));
    kb.Splat(28, "s32", "-1");
    EmitSelect(kb, "s32", cidx, 6, cidx, 28);
    kb.StoreTile("s32", sel_vmem, cidx);
    kb.EndLinearTiles();
  }

  // Phase 2: one lane per result element. bases[d] = r_d * base_dilation_d
  // + pad_lo_d; the source coordinate is (bases[d] - k_d * wdil_d) /
  // stride_d when exact and inside the source.
  kb.BeginLinearTiles(out.elements);
  kb.LinearIndex();
  EmitMove(kb, cidx, 31, false);  // cidx: this lane's operand offset.
  kb.Splat(idx, "s32", "0");
  kb.Emit("vgather." + t + " " + VReg(chosen) + ", vmem[" +
          std::to_string(init_vmem) + "], " + VReg(idx) + " @m0");
  if (any) {
    std::vector<int64_t> bdil, pad_lo, stride;
    std::vector<LoopDim> loops;
    for (const WindowDim& w : window) {
      bdil.push_back(w.base_dilation);
      pad_lo.push_back(w.pad_lo);
      stride.push_back(w.stride);
      loops.push_back(
          {w.size, (w.size - 1) * w.window_dilation, -w.window_dilation});
    }
    EmitScaledCoordinates(kb, 31, operand.dims, bdil, pad_lo, bases);
    RETURN_IF_ERROR(EmitNestedLoops(kb, loops, [&]() -> Status {
      EmitDividedIndex(kb, bases, /*subtract=*/true, stride, source.dims, idx,
                       u);
      kb.Emit("vgather.s32 " + VReg(flag) + ", vmem[" +
              std::to_string(sel_vmem) + "], " + VReg(idx) + " @m4");
      kb.Emit("vcmpeq.s32 m5, " + VReg(flag) + ", " + VReg(cidx));
      kb.Emit("mand m4, m4, m5");
      kb.Emit("vgather." + t + " " + VReg(cur) + ", vmem[" +
              std::to_string(src_vmem) + "], " + VReg(idx) + " @m4");
      RETURN_IF_ERROR(EmitScalarComputation(kb, pool, instr, scatter,
                                            {cur, chosen}, {res}));
      EmitSelect(kb, lane, chosen, 4, res, chosen);
      return Status::Ok();
    }));
  }
  kb.StoreTile(t, out_vmem, chosen);
  kb.EndLinearTiles();
  kb.DmaOut(out.name, out_vmem, out.bytes);
  return Status::Ok();
}

}  // namespace trench::codegen
