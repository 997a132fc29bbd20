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
// Arrays too large to stage whole are computed in blocks of result rows
// (stream_select_and_scatter.h).
#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/codegen/stream_select_and_scatter.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {

int64_t StagedSelectAndScatterBytes(const SelectAndScatterArrays& a) {
  return VmemAligned(a.operand.bytes) + VmemAligned(a.source.bytes) +
         VmemAligned(a.init.bytes) + VmemAligned(a.source.elements * 4) +
         VmemAligned(a.out.bytes);
}

Status EmitSelectAndScatterTiles(KernelBuilder& kb, const HloInstruction& instr,
                                 const SelectAndScatterArrays& arrays,
                                 const SelectAndScatterVmem& vmem,
                                 int64_t sources, int64_t results,
                                 const std::string& src_first,
                                 const std::string& op_first,
                                 const std::string& out_first) {
  const std::vector<WindowDim>& window = *instr.attrs().window;
  const ArrayBuffer& operand = arrays.operand;
  const ArrayBuffer& source = arrays.source;
  const std::string t = operand.dtype;
  const std::string lane = LaneType(t);
  const int64_t rank = operand.dims.size();
  const HloComputation& select = *instr.called_computations()[0];
  const HloComputation& scatter = *instr.called_computations()[1];
  const bool wide = IsWide(t);
  const bool any = WindowPositions(window) > 0 && source.elements > 0;

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
    kb.BeginLinearTiles(sources);
    kb.LinearIndex();
    EmitOffsetLanes(kb, 31, src_first, false);
    EmitWindowBases(kb, 31, source.dims, window, bases);
    kb.Emit("mclr m6");  // m6: the lane has chosen an element.
    RETURN_IF_ERROR(EmitNestedLoops(kb, WindowLoops(window), [&]() -> Status {
      EmitWindowIndex(kb, window, operand.dims, bases, idx, u);
      // idx stays global (the choice); flag is free until select's result.
      EmitMove(kb, flag, idx, false);
      EmitOffsetLanes(kb, flag, op_first, true);
      kb.Emit("vgather." + t + " " + VReg(cur) + ", vmem[" +
              std::to_string(vmem.operand) + "], " + VReg(flag) + " @m4");
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
    kb.StoreTile("s32", vmem.selected, cidx);
    kb.EndLinearTiles();
  }

  // Phase 2: one lane per result element. bases[d] = r_d * base_dilation_d
  // + pad_lo_d; the source coordinate is (bases[d] - k_d * wdil_d) /
  // stride_d when exact and inside the source.
  kb.BeginLinearTiles(results);
  kb.LinearIndex();
  EmitOffsetLanes(kb, 31, out_first, false);
  EmitMove(kb, cidx, 31, false);  // cidx: this lane's operand offset.
  kb.Splat(idx, "s32", "0");
  kb.Emit("vgather." + t + " " + VReg(chosen) + ", vmem[" +
          std::to_string(vmem.init) + "], " + VReg(idx) + " @m0");
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
      EmitOffsetLanes(kb, idx, src_first, true);
      kb.Emit("vgather.s32 " + VReg(flag) + ", vmem[" +
              std::to_string(vmem.selected) + "], " + VReg(idx) + " @m4");
      kb.Emit("vcmpeq.s32 m5, " + VReg(flag) + ", " + VReg(cidx));
      kb.Emit("mand m4, m4, m5");
      kb.Emit("vgather." + t + " " + VReg(cur) + ", vmem[" +
              std::to_string(vmem.source) + "], " + VReg(idx) + " @m4");
      RETURN_IF_ERROR(EmitScalarComputation(kb, pool, instr, scatter,
                                            {cur, chosen}, {res}));
      EmitSelect(kb, lane, chosen, 4, res, chosen);
      return Status::Ok();
    }));
  }
  kb.StoreTile(t, vmem.out, chosen);
  kb.EndLinearTiles();
  return Status::Ok();
}

Status EmitSelectAndScatter(const HloInstruction& instr, const BufferPlan& plan,
                            KernelBuilder& kb) {
  if (instr.operand_count() != 3 || instr.called_computations().size() != 2 ||
      !instr.attrs().window.has_value()) {
    return CannotCompile(instr, "a malformed instruction");
  }
  const std::vector<WindowDim>& window = *instr.attrs().window;
  SelectAndScatterArrays a;
  a.operand = plan.Array(instr.operand(0));
  a.source = plan.Array(instr.operand(1));
  a.init = plan.Array(instr.operand(2));
  a.out = plan.Array(&instr);
  const std::string t = a.operand.dtype;
  if (LaneType(t).empty() || a.source.dtype != t || a.init.dtype != t ||
      a.out.dtype != t) {
    return CannotCompile(instr, t);
  }
  RETURN_IF_ERROR(CheckWindow(instr, window, a.operand.dims.size()));
  RETURN_IF_ERROR(
      CheckScalarComputation(instr, *instr.called_computations()[0]));
  RETURN_IF_ERROR(
      CheckScalarComputation(instr, *instr.called_computations()[1]));
  if (a.out.elements == 0) return Status::Ok();
  if (StagedSelectAndScatterBytes(a) > kb.vmem_capacity() - kb.vmem_used()) {
    return EmitStreamedSelectAndScatter(instr, a, kb);
  }
  SelectAndScatterVmem vmem;
  vmem.operand = kb.AllocVmem(a.operand.bytes);
  vmem.source = kb.AllocVmem(a.source.bytes);
  vmem.init = kb.AllocVmem(a.init.bytes);
  vmem.selected = kb.AllocVmem(a.source.elements * 4);
  vmem.out = kb.AllocVmem(a.out.bytes);
  kb.DmaIn(vmem.operand, a.operand.name, a.operand.bytes);
  kb.DmaIn(vmem.source, a.source.name, a.source.bytes);
  kb.DmaIn(vmem.init, a.init.name, a.init.bytes);
  RETURN_IF_ERROR(EmitSelectAndScatterTiles(
      kb, instr, a, vmem, a.source.elements, a.out.elements, "", "", ""));
  kb.DmaOut(a.out.name, vmem.out, a.out.bytes);
  return Status::Ok();
}

}  // namespace trench::codegen
