// The streamed pad (stream_pad.h).
#include "compiler/codegen/stream_pad.h"

#include <algorithm>

#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/streaming.h"

namespace trench::codegen {

bool PadFitsStaged(const KernelBuilder& kb, const ArrayBuffer& in,
                   const ArrayBuffer& out) {
  return VmemAligned(out.bytes) + VmemAligned(in.bytes) + 512 <=
         kb.vmem_capacity() - kb.vmem_used();
}

Status EmitStreamedPad(const HloInstruction& instr, const ArrayBuffer& in,
                       const ArrayBuffer& value, const ArrayBuffer& out,
                       KernelBuilder& kb) {
  const std::string mem = dm::MoveType(out.dtype);
  const int esz = dm::ElemBytes(out.dtype);
  // The fill: the value in v0 (a zero-index gather), stored to every tile.
  const int64_t mark = kb.VmemMark();
  const int64_t value_vmem = kb.AllocVmem(esz);
  const std::vector<StreamArray> arrays = {{out.name, mem}};
  const int64_t chunk = ChooseStreamChunk(out.elements, arrays,
                                          kb.vmem_capacity() - kb.vmem_used());
  if (chunk == 0) {
    return ResourceExhausted("hloc: " + instr.name() +
                             ": not even one 1024-element chunk of the "
                             "streamed pad's result fits in VMEM");
  }
  kb.DmaIn(value_vmem, value.name, esz);
  kb.Splat(13, "s32", "0");
  kb.Gather(0, mem, "vmem[" + std::to_string(value_vmem) + "]", 13, "");
  ASSIGN_OR_RETURN(StreamLoop loop,
                   StreamLoop::Create(kb, out.elements, {}, arrays, chunk));
  loop.Begin();
  loop.Store(0, 0);
  loop.End();
  kb.ReleaseVmem(mark);
  // The placement: operand index i_d lands at lo_d + i_d * step_d; only
  // i_d in [first_d, last_d] land inside the result.
  const std::vector<PaddingDim>& pad = instr.attrs().padding;
  const std::vector<int64_t> ist = dm::RowMajorStrides(in.dims);
  const std::vector<int64_t> ost = dm::RowMajorStrides(out.dims);
  dm::Box box;
  int64_t from = 0, to = 0;
  for (size_t d = 0; d < out.dims.size(); ++d) {
    const int64_t step = pad[d].interior + 1, lo = pad[d].lo;
    const int64_t first = lo >= 0 ? 0 : (-lo + step - 1) / step;
    const int64_t room = out.dims[d] - 1 - lo;  // Last landing offset.
    const int64_t last = room < 0 ? -1 : std::min(in.dims[d] - 1, room / step);
    if (last < first) return Status::Ok();  // Nothing lands.
    box.counts.push_back(last - first + 1);
    box.src.push_back(ist[d]);
    box.dst.push_back(step * ost[d]);
    from += ist[d] * first;
    to += ost[d] * (first * step + lo);
  }
  kb.Emit("saddr s1, " + out.name);
  kb.Emit("saddr s2, " + in.name);
  dm::EmitBoxDma(kb, {"hbm", 1, to * esz}, {"hbm", 2, from * esz}, box, esz, 0);
  return Status::Ok();
}

}  // namespace trench::codegen
