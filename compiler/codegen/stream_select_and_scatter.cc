// select-and-scatter in blocks of result rows (stream_select_and_scatter.h).
#include "compiler/codegen/stream_select_and_scatter.h"

#include <algorithm>

#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/streaming.h"

namespace trench::codegen {

Status EmitStreamedSelectAndScatter(const HloInstruction& instr,
                                    const SelectAndScatterArrays& a,
                                    KernelBuilder& kb) {
  const WindowDim& w0 = (*instr.attrs().window)[0];
  const std::vector<int64_t>& op_dims = a.operand.dims;
  const std::vector<int64_t>& src_dims = a.source.dims;
  if (op_dims.empty() || a.operand.elements >= (int64_t{1} << 31) ||
      a.source.elements >= (int64_t{1} << 31)) {
    return ResourceExhausted("hloc: " + instr.name() +
                             ": a select-and-scatter too large to stage whose "
                             "operand cannot be split into row blocks");
  }
  const int64_t rows = op_dims[0];  // Of the operand and the result.
  const int64_t op_row = a.operand.elements / rows;
  const int64_t src_rows = src_dims[0];
  const int64_t src_row = src_rows > 0 ? a.source.elements / src_rows : 0;
  const int64_t eb = dm::ElemBytes(a.operand.dtype);
  const bool any = WindowPositions(*instr.attrs().window) > 0 &&
                   a.source.elements > 0 && a.operand.elements > 0;
  const int64_t reach = (w0.size - 1) * w0.window_dilation;
  // Source and operand rows of a block of b result rows.
  auto source_rows = [&](int64_t b) -> int64_t {
    if (!any) return 0;
    return std::min(src_rows,
                    ((b - 1) * w0.base_dilation + reach) / w0.stride + 1);
  };
  // The slab starts at a floor, so one more row when Bd > 1.
  auto operand_rows = [&](int64_t b) -> int64_t {
    if (!any) return 0;
    return std::min(
        rows, ((source_rows(b) - 1) * w0.stride + reach) / w0.base_dilation +
                  (w0.base_dilation > 1 ? 2 : 1));
  };
  auto bytes = [&](int64_t b) {
    return VmemAligned(operand_rows(b) * op_row * eb) +
           VmemAligned(source_rows(b) * src_row * eb) +
           VmemAligned(source_rows(b) * src_row * 4) +
           VmemAligned(a.init.bytes) + VmemAligned(b * op_row * eb);
  };
  const int64_t avail = kb.vmem_capacity() - kb.vmem_used();
  if (bytes(1) > avail) {
    return ResourceExhausted(
        "hloc: " + instr.name() +
        ": not even one result row of the select-and-scatter with the "
        "source and operand rows it needs fits in VMEM");
  }
  const int64_t b =
      LargestFitting(rows, [&](int64_t x) { return bytes(x) <= avail; });
  const int64_t rs = source_rows(b);
  const int64_t ro = operand_rows(b);
  SelectAndScatterVmem vmem;
  vmem.operand = kb.AllocVmem(ro * op_row * eb);
  vmem.source = kb.AllocVmem(rs * src_row * eb);
  vmem.selected = kb.AllocVmem(rs * src_row * 4);
  vmem.init = kb.AllocVmem(a.init.bytes);
  vmem.out = kb.AllocVmem(b * op_row * eb);
  kb.DmaIn(vmem.init, a.init.name, a.init.bytes);
  const int64_t blocks = (rows + b - 1) / b;
  const int64_t last = rows - (blocks - 1) * b;
  auto block = [&](int64_t count) -> Status {
    RETURN_IF_ERROR(EmitSelectAndScatterTiles(kb, instr, a, vmem, rs * src_row,
                                              count * op_row, any ? "s0" : "",
                                              any ? "s18" : "", "s19"));
    EmitElementAddress(kb, 19, a.out);
    kb.Emit("dmastart hbm[s9], vmem[" + I(vmem.out) + "], " +
            I(count * op_row * eb) + ", 0");
    kb.Emit("dmawait 0");
    return Status::Ok();
  };
  kb.Emit("simm s19, 0");
  const std::string loop = kb.NewLabel("sas_block");
  kb.PlaceLabel(loop);
  if (any) {
    // s0 = min(ceil(max(0, r0*Bd + P - reach) / st), S - Rs) * src_row,
    // r0 = s19 / op_row.
    kb.Emit("sdiv s0, s19, " + I(op_row));
    kb.Emit("smul s0, s0, " + I(w0.base_dilation));
    kb.Emit("sadd s0, s0, " + I(w0.pad_lo - reach + w0.stride - 1));
    kb.Emit("smax s0, s0, " + I(w0.stride - 1));
    kb.Emit("sdiv s0, s0, " + I(w0.stride));
    kb.Emit("smin s0, s0, " + I(src_rows - rs));
    // s18 = min(max(0, s_lo*st - P) / Bd, D - Ro) * op_row.
    kb.Emit("smul s18, s0, " + I(w0.stride));
    kb.Emit("sadd s18, s18, " + I(-w0.pad_lo));
    kb.Emit("smax s18, s18, 0");
    kb.Emit("sdiv s18, s18, " + I(w0.base_dilation));
    kb.Emit("smin s18, s18, " + I(rows - ro));
    kb.Emit("smul s18, s18, " + I(op_row));
    kb.Emit("smul s0, s0, " + I(src_row));
    EmitElementAddress(kb, 18, a.operand);
    kb.Emit("dmastart vmem[" + I(vmem.operand) + "], hbm[s9], " +
            I(ro * op_row * eb) + ", 0");
    EmitElementAddress(kb, 0, a.source);
    kb.Emit("dmastart vmem[" + I(vmem.source) + "], hbm[s9], " +
            I(rs * src_row * eb) + ", 0");
    kb.Emit("dmawait 0");
  }
  if (last != b) {
    kb.Emit("scmpeq s9, s19, " + I((blocks - 1) * b * op_row));
    RETURN_IF_ERROR(EmitBranch(
        kb, "s9", "sas_ragged", [&] { return block(last); },
        [&] { return block(b); }));
  } else {
    RETURN_IF_ERROR(block(b));
  }
  kb.Emit("sadd s19, s19, " + I(b * op_row));
  kb.Emit("scmplt s9, s19, " + I(rows * op_row));
  kb.Emit("brnz s9, " + loop);
  return Status::Ok();
}

}  // namespace trench::codegen
