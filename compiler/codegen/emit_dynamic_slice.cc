// dynamic-slice and dynamic-update-slice. The start indices are scalar
// operands read at run time (DMA'd to SMEM, sld), clamped as XLA specifies
// (operation_semantics.md, DynamicSlice: start = clamp(start, 0,
// dim - size)), and folded into s9 = the element offset of the window's
// first element. The window then moves as one strided DMA whose HBM
// address is computed at run time when its rows are contiguous; otherwise
// the span of HBM the window covers (its first to its last element) is
// DMA'd to VMEM at the run-time address and the window is gathered /
// scattered there with static indices. When that span and the window do
// not fit in the VMEM left (a narrow window of a large array), the window
// moves HBM to HBM as a box DMA of short chunks instead: slower, but it
// needs no VMEM.
//
// dynamic-update-slice writes only the window when the result shares its
// buffer with operand 0 (in place); otherwise it first copies operand 0.
#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/emitters.h"

namespace trench::codegen {
namespace {

// Elements from a window's first to its last element in an array with
// row-major `strides`.
int64_t Span(const std::vector<int64_t>& sizes,
             const std::vector<int64_t>& strides) {
  int64_t span = 1;
  for (size_t d = 0; d < sizes.size(); ++d) span += (sizes[d] - 1) * strides[d];
  return span;
}

// True when `span` elements and `window` bytes staged (512-aligned) fit in
// the VMEM `kb` has left.
bool SpanFits(const KernelBuilder& kb, int64_t span, int esz,
              int64_t window_bytes) {
  auto aligned = [](int64_t b) { return (b + 511) / 512 * 512; };
  return aligned(span * esz) + aligned(window_bytes) <=
         kb.vmem_capacity() - kb.vmem_used();
}

// s<reg> = HBM address of `buffer` + s9 * esz.
void WindowAddress(KernelBuilder& kb, int reg, const std::string& buffer,
                   int esz) {
  const std::string r = "s" + std::to_string(reg);
  kb.Emit("saddr " + r + ", " + buffer);
  kb.Emit("smul s10, s9, " + std::to_string(esz));
  kb.Emit("sadd " + r + ", " + r + ", s10");
}

}  // namespace

Status EmitDynamicSlice(const HloInstruction& instr, const BufferPlan& plan,
                        KernelBuilder& kb) {
  ArrayBuffer in = plan.Array(instr.operand(0));
  ArrayBuffer out = plan.Array(&instr);
  if (in.dims.size() != out.dims.size() || in.dtype != out.dtype) {
    return CannotCompile(instr, "malformed dynamic-slice");
  }
  if (out.elements == 0) return Status::Ok();
  RETURN_IF_ERROR(dm::EmitClampedStarts(instr, plan, 1, in.dims, out.dims, kb));
  const int esz = dm::ElemBytes(out.dtype);
  const std::vector<int64_t> ist = dm::RowMajorStrides(in.dims);
  const dm::Box box{out.dims, ist, dm::RowMajorStrides(out.dims)};
  WindowAddress(kb, 1, in.name, esz);
  const int64_t span = Span(out.dims, ist);
  if (dm::WorthDma(box, esz) || !SpanFits(kb, span, esz, out.bytes)) {
    kb.Emit("saddr s3, " + out.name);
    dm::EmitBoxDma(kb, {"hbm", 3, 0}, {"hbm", 1, 0}, box, esz, 0);
    return Status::Ok();
  }
  const int64_t span_vmem = kb.AllocVmem(span * esz);
  const int64_t out_vmem = kb.AllocVmem(out.bytes);
  kb.Emit("dmastart vmem[" + std::to_string(span_vmem) + "], hbm[s1], " +
          std::to_string(span * esz) + ", 0");
  kb.Emit("dmawait 0");
  const std::string mem = dm::MoveType(out.dtype);
  EmitGather(kb, out.dims, {GatherSource{span_vmem, mem, 0, ist, {}}}, out_vmem,
             mem, dm::MoveLane(out.dtype));
  kb.DmaOut(out.name, out_vmem, out.bytes);
  return Status::Ok();
}

Status EmitDynamicUpdateSlice(const HloInstruction& instr,
                              const BufferPlan& plan, KernelBuilder& kb) {
  ArrayBuffer in = plan.Array(instr.operand(0));
  ArrayBuffer upd = plan.Array(instr.operand(1));
  ArrayBuffer out = plan.Array(&instr);
  if (in.dims != out.dims || upd.dims.size() != out.dims.size() ||
      in.dtype != out.dtype || upd.dtype != out.dtype) {
    return CannotCompile(instr, "malformed dynamic-update-slice");
  }
  if (out.elements == 0) return Status::Ok();
  if (in.name != out.name) {  // Not in place: start from a copy.
    kb.Emit("saddr s1, " + in.name);
    kb.Emit("saddr s2, " + out.name);
    kb.Emit("dmastart hbm[s2], hbm[s1], " + std::to_string(out.bytes) + ", 0");
    kb.Emit("dmawait 0");
  }
  if (upd.elements == 0) return Status::Ok();
  RETURN_IF_ERROR(
      dm::EmitClampedStarts(instr, plan, 2, out.dims, upd.dims, kb));
  const int esz = dm::ElemBytes(out.dtype);
  const std::vector<int64_t> ost = dm::RowMajorStrides(out.dims);
  const dm::Box box{upd.dims, dm::RowMajorStrides(upd.dims), ost};
  WindowAddress(kb, 1, out.name, esz);
  const int64_t span = Span(upd.dims, ost);
  if (dm::WorthDma(box, esz) || !SpanFits(kb, span, esz, upd.bytes)) {
    kb.Emit("saddr s3, " + upd.name);
    dm::EmitBoxDma(kb, {"hbm", 1, 0}, {"hbm", 3, 0}, box, esz, 0);
    return Status::Ok();
  }
  // Read the window's span of the result, update it in VMEM, write it back
  // (the bytes between the window's rows go back unchanged).
  const int64_t span_vmem = kb.AllocVmem(span * esz);
  const int64_t upd_vmem = kb.AllocVmem(upd.bytes);
  const std::string span_bytes = std::to_string(span * esz);
  kb.Emit("dmastart vmem[" + std::to_string(span_vmem) + "], hbm[s1], " +
          span_bytes + ", 0");
  kb.Emit("dmawait 0");
  kb.DmaIn(upd_vmem, upd.name, upd.bytes);
  dm::EmitAffineScatter(kb, upd.dims, upd_vmem, dm::MoveType(out.dtype), 0, ost,
                        {}, span_vmem);
  kb.Emit("dmastart hbm[s1], vmem[" + std::to_string(span_vmem) + "], " +
          span_bytes + ", 0");
  kb.Emit("dmawait 0");
  return Status::Ok();
}

}  // namespace trench::codegen
