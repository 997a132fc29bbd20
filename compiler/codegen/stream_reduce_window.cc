// reduce-window in blocks of output rows (stream_reduce_window.h).
#include "compiler/codegen/stream_reduce_window.h"

#include <algorithm>

#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/streaming.h"

namespace trench::codegen {

Status EmitStreamedReduceWindow(const HloInstruction& instr,
                                const ReductionOperands& ops,
                                const Reducer& reducer, KernelBuilder& kb) {
  const std::vector<WindowDim>& window = *instr.attrs().window;
  const std::vector<int64_t>& in_dims = ops.ins[0].dims;
  const std::vector<int64_t>& out_dims = ops.outs[0].dims;
  if (in_dims.empty() || ops.ins[0].elements >= (int64_t{1} << 31)) {
    return ResourceExhausted("hloc: " + instr.name() +
                             ": a reduce-window too large to stage whose "
                             "input cannot be split into row blocks");
  }
  const WindowDim& w0 = window[0];
  const int64_t in_row = ops.ins[0].elements / std::max<int64_t>(in_dims[0], 1);
  const int64_t out_row = ops.outs[0].elements / out_dims[0];
  const bool reads = WindowPositions(window) > 0 && ops.ins[0].elements > 0;
  // Input rows of a block of b output rows.
  auto slab_rows = [&](int64_t b) -> int64_t {
    if (!reads) return 0;
    const int64_t span =
        (b - 1) * w0.stride + (w0.size - 1) * w0.window_dilation;
    return std::min(in_dims[0], span / w0.base_dilation + 2);
  };
  auto bytes = [&](int64_t b) {
    int64_t total = 0;
    for (int64_t i = 0; i < ops.n; ++i) {
      total +=
          VmemAligned(slab_rows(b) * in_row * dm::ElemBytes(ops.ins[i].dtype)) +
          VmemAligned(ops.inits[i].bytes) +
          VmemAligned(b * out_row * dm::ElemBytes(ops.outs[i].dtype));
    }
    return total;
  };
  const int64_t avail = kb.vmem_capacity() - kb.vmem_used();
  if (bytes(1) > avail) {
    return ResourceExhausted("hloc: " + instr.name() +
                             ": not even one output row of the reduce-window "
                             "with the input rows it reads fits in VMEM");
  }
  const int64_t b =
      LargestFitting(out_dims[0], [&](int64_t x) { return bytes(x) <= avail; });
  const int64_t rows = slab_rows(b);
  ReductionVmem vmem;
  for (int64_t i = 0; i < ops.n; ++i) {
    vmem.ins.push_back(
        kb.AllocVmem(rows * in_row * dm::ElemBytes(ops.ins[i].dtype)));
    vmem.inits.push_back(kb.AllocVmem(ops.inits[i].bytes));
    kb.DmaIn(vmem.inits.back(), ops.inits[i].name, ops.inits[i].bytes);
    vmem.outs.push_back(
        kb.AllocVmem(b * out_row * dm::ElemBytes(ops.outs[i].dtype)));
  }
  const int64_t blocks = (out_dims[0] + b - 1) / b;
  const int64_t last = out_dims[0] - (blocks - 1) * b;
  // One block of `count` output rows: s19 its first output element, s18
  // the slab's first input element.
  auto block = [&](int64_t count) -> Status {
    RETURN_IF_ERROR(EmitReduceWindowTiles(kb, instr, ops, vmem, reducer,
                                          count * out_row, "s19", "s18"));
    for (int64_t i = 0; i < ops.n; ++i) {
      EmitElementAddress(kb, 19, ops.outs[i]);
      kb.Emit("dmastart hbm[s9], vmem[" + I(vmem.outs[i]) + "], " +
              I(count * out_row * dm::ElemBytes(ops.outs[i].dtype)) + ", 0");
      kb.Emit("dmawait 0");
    }
    return Status::Ok();
  };
  kb.Emit("simm s0, 0");
  const std::string loop = kb.NewLabel("rw_block");
  kb.PlaceLabel(loop);
  kb.Emit("smul s19, s0, " + I(b * out_row));
  // s18 = min(max(0, o0 * stride - pad_lo) / base_dilation, dim - rows).
  kb.Emit("smul s18, s0, " + I(b * w0.stride));
  kb.Emit("sadd s18, s18, " + I(-w0.pad_lo));
  kb.Emit("smax s18, s18, 0");
  kb.Emit("sdiv s18, s18, " + I(w0.base_dilation));
  kb.Emit("smin s18, s18, " + I(in_dims[0] - rows));
  kb.Emit("smul s18, s18, " + I(in_row));
  for (int64_t i = 0; i < ops.n && rows > 0; ++i) {
    EmitElementAddress(kb, 18, ops.ins[i]);
    kb.Emit("dmastart vmem[" + I(vmem.ins[i]) + "], hbm[s9], " +
            I(rows * in_row * dm::ElemBytes(ops.ins[i].dtype)) + ", 0");
  }
  if (rows > 0) kb.Emit("dmawait 0");
  if (last != b) {
    kb.Emit("scmpeq s9, s0, " + I(blocks - 1));
    RETURN_IF_ERROR(EmitBranch(
        kb, "s9", "rw_ragged", [&] { return block(last); },
        [&] { return block(b); }));
  } else {
    RETURN_IF_ERROR(block(b));
  }
  kb.Emit("sadd s0, s0, 1");
  kb.Emit("scmplt s9, s0, " + I(blocks));
  kb.Emit("brnz s9, " + loop);
  return Status::Ok();
}

}  // namespace trench::codegen
