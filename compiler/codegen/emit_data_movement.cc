// Data movement as index-mapped gathers: every output element computes the
// linear index of the element it reads (vector integer arithmetic on its
// coordinates) and fetches it with vgather from the operand staged in VMEM.
// One mechanism covers broadcast, transpose (any rank), strided slice,
// reverse, concatenate and the padded staging of dot operands. Copies that move
// whole rows (slices, concatenations, row broadcasts, transposes that keep
// the minor dim) are strided DMAs instead (emit_data_movement_util.h).
// Pure copies move bit containers (u8/u16/u32/u64), never converting lanes.
// Operands and results too big to stage stream (stream_data_movement.h).
#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/codegen/stream_data_movement.h"
#include "compiler/codegen/streaming.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

constexpr int kMaxRank = 8;

using dm::RowMajorStrides;

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
  // c128 elements move as two u64 halves, one pass each (dm::MoveType).
  const bool halves = out_mem == "c128";
  for (int h = 0; h < (halves ? 2 : 1); ++h) {
    if (sources.size() != 1 || !sources[0].ranges.empty()) {
      kb.Splat(0, halves ? "u64" : lane, "0");
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
      if (halves) dm::EmitHalfIndex(kb, 12, h);
      kb.Emit("vgather." + (halves ? std::string("u64") : MemType(src.mem)) +
              " v0, vmem[" + std::to_string(src.vmem) + "], v12 @" + mask);
    }
    if (halves) {
      dm::EmitStoreHalf(kb, out_vmem, 0, h);
    } else {
      kb.StoreTile(out_mem, out_vmem, 0);
    }
  }
  kb.EndLinearTiles();
}

namespace {

Status EmitIota(const HloInstruction& instr, const ArrayBuffer& out,
                KernelBuilder& kb) {
  // The index (s32) converted like convert(s64 index): narrow integers
  // wrap at the store, pred stores index != 0, 16-bit floats round once.
  const std::string lane = LaneType(out.dtype);
  if (lane.empty()) return CannotCompile(instr, out.dtype);
  const std::string c = V(2 + static_cast<int>(instr.attrs().iota_dimension));
  auto body = [&]() {
    kb.LinearIndex();
    EmitCoordinates(kb, out.dims);
    kb.Emit(lane == "s32" ? "vmov v0, " + c
                          : "vcvt." + lane + ".s32 v0, " + c + " @m0");
  };
  const int64_t avail = kb.vmem_capacity() - kb.vmem_used();
  if ((out.bytes + 511) / 512 * 512 > avail) {
    // Too big to stage: written chunk by chunk (streaming.h, no inputs).
    const std::vector<StreamArray> arrays = {{out.name, out.dtype}};
    const int64_t chunk = ChooseStreamChunk(out.elements, arrays, avail);
    if (chunk == 0) {
      return ResourceExhausted("hloc: " + instr.name() +
                               ": not even one iota chunk fits in VMEM");
    }
    ASSIGN_OR_RETURN(StreamLoop loop,
                     StreamLoop::Create(kb, out.elements, {}, arrays, chunk));
    loop.Begin();
    body();
    loop.Store(0, 0);
    loop.End();
    return Status::Ok();
  }
  const int64_t out_vmem = kb.AllocVmem(out.bytes);
  kb.BeginLinearTiles(out.elements);
  body();
  kb.StoreTile(out.dtype, out_vmem, 0);
  kb.EndLinearTiles();
  kb.DmaOut(out.name, out_vmem, out.bytes);
  return Status::Ok();
}

// One operand's contribution: the gather source (element units) and the
// same copy as a box from the operand to the output (for concatenate, a
// box of the piece's dims at dst_offset).
struct Piece {
  ArrayBuffer in;
  GatherSource src;
  dm::Box box;
  int64_t src_offset = 0, dst_offset = 0;  // Elements.
};

}  // namespace

Status EmitDataMovement(const HloInstruction& instr, const BufferPlan& plan,
                        KernelBuilder& kb) {
  ArrayBuffer out = plan.Array(&instr);
  const int rank = static_cast<int>(out.dims.size());
  if (rank > kMaxRank) return CannotCompile(instr, "rank > 8");
  if (out.elements == 0) return Status::Ok();
  const HloOpcode opc = instr.opcode();
  if (opc == HloOpcode::kIota) return EmitIota(instr, out, kb);
  const std::string mem = dm::MoveType(out.dtype);
  const std::string lane = dm::MoveLane(out.dtype);
  const int esz = dm::ElemBytes(out.dtype);
  const std::vector<int64_t> ost = RowMajorStrides(out.dims);
  std::vector<Piece> pieces;
  int64_t concat_lo = 0;
  for (const HloInstruction* op : instr.operands()) {
    Piece p;
    p.in = plan.Array(op);
    if (p.in.dims.size() > kMaxRank) return CannotCompile(instr, "rank > 8");
    GatherSource& src = p.src;
    src.mem = mem;
    src.coeff.assign(rank, 0);
    std::vector<int64_t> st = RowMajorStrides(p.in.dims);
    const std::vector<int64_t>& dims = instr.dimensions();
    p.box.counts = out.dims;
    p.box.dst = ost;
    const bool well_formed =
        dm::DimsInRange(dims, rank) &&
        (opc == HloOpcode::kBroadcast   ? dims.size() == p.in.dims.size()
         : opc == HloOpcode::kTranspose ? dims.size() == out.dims.size()
         : opc == HloOpcode::kSlice
             ? instr.attrs().slice.size() == out.dims.size()
         : opc == HloOpcode::kConcatenate ? dims.size() == 1
                                          : true);
    if (!well_formed) return CannotCompile(instr, "malformed dimensions");
    if (opc == HloOpcode::kBroadcast) {
      for (size_t i = 0; i < dims.size(); ++i) src.coeff[dims[i]] = st[i];
    } else if (opc == HloOpcode::kTranspose) {
      for (int d = 0; d < rank; ++d) src.coeff[d] = st[dims[d]];
    } else if (opc == HloOpcode::kReverse) {
      for (int d = 0; d < rank; ++d) src.coeff[d] = st[d];
      for (int64_t d : dims) {
        src.coeff[d] = -st[d];
        src.offset += (p.in.dims[d] - 1) * st[d];
      }
    } else if (opc == HloOpcode::kSlice) {
      const std::vector<SliceDim>& sl = instr.attrs().slice;
      for (int d = 0; d < rank; ++d) {
        src.offset += sl[d].start * st[d];
        src.coeff[d] = sl[d].stride * st[d];
      }
    } else {  // Concatenate along dims[0].
      const int cd = static_cast<int>(dims.at(0));
      // The piece is a box of its own dims at its offset in the output.
      for (int d = 0; d < rank; ++d) src.coeff[d] = st[d];
      p.box.counts[cd] = p.in.dims[cd];
      p.dst_offset = concat_lo * ost[cd];
      concat_lo += p.in.dims[cd];
    }
    p.box.src = src.coeff;
    p.src_offset = src.offset;
    if (p.in.elements == 0) continue;  // An empty concatenate piece.
    pieces.push_back(std::move(p));
  }
  bool all_dma = true;
  for (const Piece& p : pieces) all_dma &= dm::WorthDma(p.box, esz);
  // Staged whole, the result and the gathered operands must fit in the
  // VMEM left; else a single operand streams through it in blocks
  // (stream_data_movement.h); what cannot (concatenate pieces, c128) is
  // copied by strided DMAs from HBM to HBM, however short its rows.
  auto aligned = [](int64_t b) { return (b + 511) / 512 * 512; };
  int64_t staged = aligned(out.bytes);
  for (const Piece& p : pieces) {
    if (opc != HloOpcode::kConcatenate || !dm::WorthDma(p.box, esz)) {
      staged += aligned(p.in.bytes);
    }
  }
  const bool fits = staged <= kb.vmem_capacity() - kb.vmem_used();
  if (!all_dma && !fits && opc != HloOpcode::kConcatenate && !pieces.empty()) {
    // Emits nothing when it cannot stream (c128, no block fits): then the
    // strided DMAs below.
    Status st = EmitStreamedGather(instr, pieces[0].in, out, pieces[0].src, kb);
    if (st.ok() || (st.code() != StatusCode::kResourceExhausted &&
                    st.code() != StatusCode::kUnimplemented)) {
      return st;
    }
  }
  if (all_dma || !fits) {  // Row copies, HBM to HBM.
    kb.Emit("saddr s1, " + out.name);
    for (const Piece& p : pieces) {
      kb.Emit("saddr s2, " + p.in.name);
      dm::EmitBoxDma(kb, {"hbm", 1, p.dst_offset * esz},
                     {"hbm", 2, p.src_offset * esz}, p.box, esz, 0);
    }
    return Status::Ok();
  }
  const int64_t out_vmem = kb.AllocVmem(out.bytes);
  if (opc != HloOpcode::kConcatenate) {
    GatherSource& src = pieces[0].src;
    src.vmem = kb.AllocVmem(pieces[0].in.bytes);
    kb.DmaIn(src.vmem, pieces[0].in.name, pieces[0].in.bytes);
    EmitGather(kb, out.dims, {src}, out_vmem, mem, lane);
  } else {
    // Each piece lands in its own range of the output: whole rows by DMA,
    // narrow pieces staged and scattered element by element.
    for (Piece& p : pieces) {
      if (dm::WorthDma(p.box, esz)) {
        kb.Emit("saddr s2, " + p.in.name);
        dm::EmitBoxDma(kb, {"vmem", -1, out_vmem + p.dst_offset * esz},
                       {"hbm", 2, 0}, p.box, esz, 0);
        continue;
      }
      p.src.vmem = kb.AllocVmem(p.in.bytes);
      kb.DmaIn(p.src.vmem, p.in.name, p.in.bytes);
      dm::EmitAffineScatter(kb, p.in.dims, p.src.vmem, mem, p.dst_offset, ost,
                            {}, out_vmem);
    }
  }
  kb.DmaOut(out.name, out_vmem, out.bytes);
  return Status::Ok();
}

}  // namespace trench::codegen
