// Data movement as index-mapped gathers: every output element computes the
// linear index of the element it reads (vector integer arithmetic on its
// coordinates) and fetches it with vgather from the operand staged in VMEM.
// One mechanism covers broadcast, transpose (any rank), strided slice,
// concatenate and the padded staging of dot operands.
#include "compiler/codegen/emitters.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

constexpr int kMaxRank = 8;

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    s[d] = s[d + 1] * dims[d + 1];
  }
  return s;
}

std::string V(int r) { return "v" + std::to_string(r); }

}  // namespace

void EmitCoordinates(KernelBuilder& kb, const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides = RowMajorStrides(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    const std::string c = V(2 + static_cast<int>(d));
    if (strides[d] == 1) {
      kb.Emit("vmov " + c + ", v31");
    } else {
      kb.Splat(29, "s32", std::to_string(strides[d]));
      kb.Emit("vdiv.s32 " + c + ", v31, v29");
    }
    if (d > 0) {
      kb.Splat(29, "s32", std::to_string(dims[d]));
      kb.Emit("vrem.s32 " + c + ", " + c + ", v29");
    }
  }
}

void EmitGather(KernelBuilder& kb, const std::vector<int64_t>& out_dims,
                const std::vector<GatherSource>& sources, int64_t out_vmem,
                const std::string& out_mem, const std::string& lane) {
  int64_t n = 1;
  for (int64_t d : out_dims) n *= d;
  kb.BeginLinearTiles(n);
  kb.LinearIndex();
  EmitCoordinates(kb, out_dims);
  if (sources.size() != 1 || !sources[0].ranges.empty()) {
    kb.Splat(0, lane, "0");
  }
  for (const GatherSource& src : sources) {
    kb.Splat(12, "s32", std::to_string(src.offset));
    for (size_t d = 0; d < src.coeff.size(); ++d) {
      if (src.coeff[d] == 0) continue;
      kb.Splat(14, "s32", std::to_string(src.coeff[d]));
      kb.Emit("vmul.s32 v13, " + V(2 + static_cast<int>(d)) + ", v14");
      kb.Emit("vadd.s32 v12, v12, v13");
    }
    std::string mask = "m0";
    if (!src.ranges.empty()) {
      mask = "m2";
      kb.Emit("mand m2, m0, m0");
      for (const GatherSource::Range& r : src.ranges) {
        const std::string c = V(2 + r.dim);
        kb.Splat(14, "s32", std::to_string(r.lo));
        kb.Emit("vcmpge.s32 m3, " + c + ", v14");
        kb.Emit("mand m2, m2, m3");
        kb.Splat(14, "s32", std::to_string(r.hi));
        kb.Emit("vcmplt.s32 m3, " + c + ", v14");
        kb.Emit("mand m2, m2, m3");
      }
    }
    kb.Emit("vgather." + src.mem + " v0, vmem[" + std::to_string(src.vmem) +
            "], v12 @" + mask);
  }
  kb.StoreTile(out_mem, out_vmem, 0);
  kb.EndLinearTiles();
}

Status EmitDataMovement(const HloInstruction& instr, const BufferPlan& plan,
                        KernelBuilder& kb) {
  ArrayBuffer out = plan.Array(&instr);
  const int rank = static_cast<int>(out.dims.size());
  if (rank > kMaxRank) return CannotCompile(instr, "rank > 8");
  if (out.elements == 0) return Status::Ok();
  const HloOpcode opc = instr.opcode();
  const std::string lane = LaneType(out.dtype);
  if (opc == HloOpcode::kIota) {
    if (out.dtype == "pred") return CannotCompile(instr, out.dtype);
    const int64_t out_vmem = kb.AllocVmem(out.bytes);
    kb.BeginLinearTiles(out.elements);
    kb.LinearIndex();
    EmitCoordinates(kb, out.dims);
    const std::string c = V(2 + static_cast<int>(instr.attrs().iota_dimension));
    kb.Emit(lane == "s32" ? "vmov v0, " + c
                          : "vcvt." + lane + ".s32 v0, " + c + " @m0");
    kb.StoreTile(out.dtype, out_vmem, 0);
    kb.EndLinearTiles();
    kb.DmaOut(out.name, out_vmem, out.bytes);
    return Status::Ok();
  }
  std::vector<GatherSource> sources;
  for (const HloInstruction* op : instr.operands()) {
    ArrayBuffer in = plan.Array(op);
    if (in.dims.size() > kMaxRank) return CannotCompile(instr, "rank > 8");
    GatherSource src;
    src.mem = in.dtype;
    src.coeff.assign(rank, 0);
    std::vector<int64_t> st = RowMajorStrides(in.dims);
    const std::vector<int64_t>& dims = instr.dimensions();
    if (opc == HloOpcode::kBroadcast) {
      for (size_t i = 0; i < dims.size(); ++i) src.coeff[dims[i]] = st[i];
    } else if (opc == HloOpcode::kTranspose) {
      for (int d = 0; d < rank; ++d) src.coeff[d] = st[dims[d]];
    } else if (opc == HloOpcode::kSlice) {
      const std::vector<SliceDim>& sl = instr.attrs().slice;
      for (int d = 0; d < rank; ++d) {
        src.offset += sl[d].start * st[d];
        src.coeff[d] = sl[d].stride * st[d];
      }
    } else {  // Concatenate along dims[0].
      const int cd = static_cast<int>(dims.at(0));
      int64_t lo = 0;
      for (const GatherSource& s : sources)
        lo += s.ranges[0].hi - s.ranges[0].lo;
      for (int d = 0; d < rank; ++d) src.coeff[d] = st[d];
      src.offset = -lo * st[cd];
      src.ranges.push_back({cd, lo, lo + in.dims[cd]});
    }
    if (in.elements == 0) {
      if (opc == HloOpcode::kConcatenate) {
        src.ranges[0].hi = src.ranges[0].lo;  // Contributes nothing.
        sources.push_back(src);
      }
      continue;
    }
    src.vmem = kb.AllocVmem(in.bytes);
    kb.DmaIn(src.vmem, in.name, in.bytes);
    sources.push_back(std::move(src));
  }
  // Drop empty concatenate pieces (they only fixed the offsets above).
  std::vector<GatherSource> live;
  for (GatherSource& s : sources) {
    if (s.ranges.empty() || s.ranges[0].hi > s.ranges[0].lo) {
      live.push_back(std::move(s));
    }
  }
  const int64_t out_vmem = kb.AllocVmem(out.bytes);
  EmitGather(kb, out.dims, live, out_vmem, out.dtype, lane);
  kb.DmaOut(out.name, out_vmem, out.bytes);
  return Status::Ok();
}

}  // namespace trench::codegen
