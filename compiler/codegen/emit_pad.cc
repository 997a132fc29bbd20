// pad: the result is filled with the padding value (operand 1, a scalar
// buffer, broadcast to a register with a zero-index vgather), then the
// operand's elements are placed at lo + i * (interior + 1) along each dim.
// Interior padding comes before edge padding, so negative edges crop the
// interior-padded operand (operation_semantics.md, Pad; the oracle's
// EvalPad). Placement is one strided DMA when the operand's rows stay
// contiguous (no interior padding in the minor dims), else an
// index-mapped vscatter over the operand whose coordinate ranges drop the
// cropped elements.
#include <algorithm>

#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/codegen/stream_pad.h"

namespace trench::codegen {

Status EmitPad(const HloInstruction& instr, const BufferPlan& plan,
               KernelBuilder& kb) {
  ArrayBuffer in = plan.Array(instr.operand(0));
  ArrayBuffer value = plan.Array(instr.operand(1));
  ArrayBuffer out = plan.Array(&instr);
  const int rank = static_cast<int>(out.dims.size());
  const std::vector<PaddingDim>& pad = instr.attrs().padding;
  if (rank > 8) return CannotCompile(instr, "rank > 8");
  if (static_cast<int>(pad.size()) != rank || in.dtype != out.dtype) {
    return CannotCompile(instr, "malformed pad");
  }
  if (out.elements == 0) return Status::Ok();
  if (!PadFitsStaged(kb, in, out)) {  // stream_pad.h
    return EmitStreamedPad(instr, in, value, out, kb);
  }
  const std::string mem = dm::MoveType(out.dtype);
  const int esz = dm::ElemBytes(out.dtype);
  const std::vector<int64_t> ist = dm::RowMajorStrides(in.dims);
  const std::vector<int64_t> ost = dm::RowMajorStrides(out.dims);
  // Per dim: operand range [first, last] whose targets are inside.
  dm::Box box;
  std::vector<GatherSource::Range> ranges;
  std::vector<int64_t> coeff(rank);
  int64_t src_off = 0, dst_off = 0, offset = 0, placed = 1;
  for (int d = 0; d < rank; ++d) {
    const int64_t n = in.dims[d], step = pad[d].interior + 1, lo = pad[d].lo;
    const int64_t first = lo >= 0 ? 0 : (-lo + step - 1) / step;
    const int64_t last = out.dims[d] - 1 - lo < 0
                             ? -1
                             : std::min(n - 1, (out.dims[d] - 1 - lo) / step);
    const int64_t count = std::max<int64_t>(0, last - first + 1);
    placed *= count;
    box.counts.push_back(count);
    box.src.push_back(ist[d]);
    box.dst.push_back(ost[d] * step);
    src_off += first * ist[d];
    dst_off += (lo + first * step) * ost[d];
    offset += lo * ost[d];
    coeff[d] = step * ost[d];
    if (first > 0 || last < n - 1) ranges.push_back({d, first, last + 1});
  }
  const int64_t out_vmem = kb.AllocVmem(out.bytes);
  if (placed < out.elements) {
    const int64_t value_vmem = kb.AllocVmem(esz);
    kb.DmaIn(value_vmem, value.name, esz);
    kb.Splat(13, "s32", "0");
    kb.Gather(0, mem, "vmem[" + std::to_string(value_vmem) + "]", 13, "");
    dm::EmitFill(kb, out.elements, mem, out_vmem, 0);
  }
  if (placed > 0) {
    if (dm::WorthDma(box, esz)) {
      kb.Emit("saddr s2, " + in.name);
      dm::EmitBoxDma(kb, {"vmem", -1, out_vmem + dst_off * esz},
                     {"hbm", 2, src_off * esz}, box, esz, 0);
    } else {
      const int64_t in_vmem = kb.AllocVmem(in.bytes);
      kb.DmaIn(in_vmem, in.name, in.bytes);
      dm::EmitAffineScatter(kb, in.dims, in_vmem, mem, offset, coeff, ranges,
                            out_vmem);
    }
  }
  kb.DmaOut(out.name, out_vmem, out.bytes);
  return Status::Ok();
}

}  // namespace trench::codegen
