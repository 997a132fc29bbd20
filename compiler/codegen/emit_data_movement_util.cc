#include "compiler/codegen/emit_data_movement_util.h"

#include <algorithm>

#include "compiler/ir/dtype.h"

namespace trench::codegen::dm {
namespace {

std::string V(int r) { return "v" + std::to_string(r); }
std::string S(int r) { return "s" + std::to_string(r); }

}  // namespace

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    s[d] = s[d + 1] * dims[d + 1];
  }
  return s;
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

int64_t IndexOf(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) - v.begin();
}

std::vector<int64_t> DimsExcept(int64_t rank, const std::vector<int64_t>& a,
                                const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(a, d) && !Contains(b, d)) out.push_back(d);
  }
  return out;
}

bool DimsInRange(const std::vector<int64_t>& dims, int64_t n) {
  return std::all_of(dims.begin(), dims.end(),
                     [n](int64_t d) { return d >= 0 && d < n; });
}

int ElemBytes(const std::string& dtype) {
  if (dtype == "pred" || dtype == "s8" || dtype == "u8") return 1;
  if (dtype == "f16" || dtype == "bf16" || dtype == "s16" || dtype == "u16") {
    return 2;
  }
  if (dtype == "f64" || dtype == "s64" || dtype == "u64" || dtype == "c64") {
    return 8;
  }
  if (dtype == "c128") return 16;
  return 4;
}

std::string MoveType(const std::string& dtype) {
  switch (ElemBytes(dtype)) {
    case 1:
      return "u8";
    case 2:
      return "u16";
    case 8:
      return "u64";
    case 16:
      return "c128";
    default:
      return "u32";
  }
}

std::string MoveLane(const std::string& dtype) {
  return ElemBytes(dtype) >= 8 ? "u64" : "u32";
}

void EmitHalfIndex(KernelBuilder& kb, int idx, int half) {
  kb.Emit("vadd.s32 " + V(idx) + ", " + V(idx) + ", " + V(idx));
  if (half == 0) return;
  kb.Splat(14, "s32", "1");
  kb.Emit("vadd.s32 " + V(idx) + ", " + V(idx) + ", v14");
}

void EmitStoreHalf(KernelBuilder& kb, int64_t vmem, int vreg, int half) {
  kb.Emit("smul s29, s20, 16");
  kb.Emit("viota v28, 2");
  EmitHalfIndex(kb, 28, half);
  kb.Emit("vscatter.u64 vmem[s29+" + I(vmem) + "], v28, " + V(vreg) + " @m0");
}

Box Normalize(const Box& box) {
  Box out;
  for (size_t d = 0; d < box.counts.size(); ++d) {
    if (box.counts[d] == 1) continue;
    out.counts.push_back(box.counts[d]);
    out.src.push_back(box.src[d]);
    out.dst.push_back(box.dst[d]);
  }
  // Merge an outer dim into the dim inside it when both sides continue
  // exactly where the inner dim ends.
  for (int64_t d = static_cast<int64_t>(out.counts.size()) - 2; d >= 0; --d) {
    const int64_t n = out.counts[d + 1];
    if (out.src[d] == n * out.src[d + 1] && out.dst[d] == n * out.dst[d + 1]) {
      out.counts[d + 1] *= out.counts[d];
      out.counts.erase(out.counts.begin() + d);
      out.src.erase(out.src.begin() + d);
      out.dst.erase(out.dst.begin() + d);
    }
  }
  return out;
}

int64_t ContiguousRun(const Box& b) {
  if (b.counts.empty()) return 1;
  return b.src.back() == 1 && b.dst.back() == 1 ? b.counts.back() : 1;
}

bool WorthDma(const Box& box, int elem_bytes) {
  const Box b = Normalize(box);
  const int64_t run = ContiguousRun(b);
  const bool one_chunk =
      b.counts.empty() || (b.counts.size() == 1 && run == b.counts[0]);
  return one_chunk || run * elem_bytes >= kMinDmaRunBytes;
}

std::string MemOperand(const DmaEnd& e) {
  if (e.reg < 0) return e.space + "[" + I(e.offset) + "]";
  std::string s = e.space + "[" + S(e.reg);
  if (e.offset > 0) s += "+" + I(e.offset);
  if (e.offset < 0) s += "-" + I(-e.offset);
  return s + "]";
}

bool EmitBoxDma(KernelBuilder& kb, const DmaEnd& dst, const DmaEnd& src,
                const Box& box, int elem_bytes, int sem, bool wait) {
  for (int64_t c : box.counts) {
    if (c == 0) return false;
  }
  Box b = Normalize(box);
  const int64_t run = ContiguousRun(b);
  int64_t chunk = elem_bytes;
  if (run > 1) {  // The innermost dim becomes the chunk.
    chunk = run * elem_bytes;
    b.counts.pop_back();
    b.src.pop_back();
    b.dst.pop_back();
  }
  const int n = static_cast<int>(b.counts.size());
  const int in_dma = std::min(n, 3);
  const int loops = n - in_dma;
  std::string triples;
  for (int d = n - 1; d >= loops; --d) {
    triples += ", " + I(b.counts[d]) + ", " + I(b.src[d] * elem_bytes) + ", " +
               I(b.dst[d] * elem_bytes);
  }
  const std::string tail = ", " + I(chunk) + ", " + I(sem) + triples;
  if (loops == 0) {
    kb.Emit("dmastart " + MemOperand(dst) + ", " + MemOperand(src) + tail);
    if (!wait) return true;
    kb.Emit("dmawait " + I(sem));
    return false;
  }
  // Outer dims: s10 / s11 walk the source / destination, s12+j counts.
  auto base = [&](int reg, const DmaEnd& e) {
    if (e.reg < 0) {
      kb.Emit("simm " + S(reg) + ", " + I(e.offset));
    } else {
      kb.Emit("sadd " + S(reg) + ", " + S(e.reg) + ", " + I(e.offset));
    }
  };
  base(10, src);
  base(11, dst);
  std::vector<std::string> labels;
  for (int j = 0; j < loops; ++j) {
    kb.Emit("simm " + S(12 + j) + ", " + I(b.counts[j]));
    labels.push_back(kb.NewLabel("box"));
    kb.PlaceLabel(labels.back());
  }
  kb.Emit("dmastart " + MemOperand({dst.space, 11, 0}) + ", " +
          MemOperand({src.space, 10, 0}) + tail);
  kb.Emit("dmawait " + I(sem));
  for (int j = loops - 1; j >= 0; --j) {
    const int64_t ss = b.src[j] * elem_bytes, ds = b.dst[j] * elem_bytes;
    kb.Emit("sadd s10, s10, " + I(ss));
    kb.Emit("sadd s11, s11, " + I(ds));
    kb.Emit("sloop " + S(12 + j) + ", " + labels[j]);
    kb.Emit("sadd s10, s10, " + I(-ss * b.counts[j]));
    kb.Emit("sadd s11, s11, " + I(-ds * b.counts[j]));
  }
  return false;
}

void EmitAffineScatter(KernelBuilder& kb, const std::vector<int64_t>& in_dims,
                       int64_t in_vmem, const std::string& mem, int64_t offset,
                       const std::vector<int64_t>& coeff,
                       const std::vector<GatherSource::Range>& ranges,
                       int64_t out_vmem) {
  kb.BeginLinearTiles(Product(in_dims));
  kb.LinearIndex();
  EmitCoordinates(kb, in_dims);
  const bool halves = mem == "c128";  // Two u64 halves per element.
  for (int h = 0; h < (halves ? 2 : 1); ++h) {
    if (halves) {
      kb.Emit("smul s29, s20, 16");
      kb.Emit("viota v12, 2");
      EmitHalfIndex(kb, 12, h);
      kb.Emit("vgather.u64 v0, vmem[s29+" + I(in_vmem) + "], v12 @m0");
    } else {
      kb.LoadTile(0, mem, in_vmem);
    }
    kb.Splat(12, "s32", I(offset));
    for (size_t d = 0; d < coeff.size(); ++d) {
      if (coeff[d] == 0) continue;
      kb.Splat(14, "s32", I(coeff[d]));
      kb.Emit("vmul.s32 v13, " + V(2 + static_cast<int>(d)) + ", v14");
      kb.Emit("vadd.s32 v12, v12, v13");
    }
    kb.Emit("mand m2, m0, m0");
    for (const GatherSource::Range& r : ranges) {
      const std::string c = V(2 + r.dim);
      kb.Splat(14, "s32", I(r.lo));
      kb.Emit("vcmpge.s32 m3, " + c + ", v14");
      kb.Emit("mand m2, m2, m3");
      kb.Splat(14, "s32", I(r.hi));
      kb.Emit("vcmplt.s32 m3, " + c + ", v14");
      kb.Emit("mand m2, m2, m3");
    }
    if (halves) EmitHalfIndex(kb, 12, h);
    kb.Emit("vscatter." + std::string(halves ? "u64" : MemType(mem)) +
            " vmem[" + I(out_vmem) + "], v12, v0 @m2");
  }
  kb.EndLinearTiles();
}

void EmitFill(KernelBuilder& kb, int64_t elements, const std::string& mem,
              int64_t vmem, int vreg) {
  if (elements == 0) return;
  kb.BeginLinearTiles(elements);
  kb.StoreTile(mem, vmem, vreg);  // c128: a quad.
  kb.EndLinearTiles();
}

Status EmitClampedStarts(const HloInstruction& instr, const BufferPlan& plan,
                         int first, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& sizes, KernelBuilder& kb) {
  const int rank = static_cast<int>(dims.size());
  if (rank > 8) return CannotCompile(instr, "rank > 8");
  const int given = static_cast<int>(instr.operand_count()) - first;
  const bool vector_form =
      given == 1 && rank != 1 && instr.operand(first)->shape().rank() == 1;
  if (!vector_form && given != rank) {
    return CannotCompile(instr, "start index count != rank");
  }
  // SMEM slot and type of each start.
  std::vector<std::string> types(rank);
  std::vector<int64_t> slots(rank);
  for (int d = 0; d < rank; ++d) {
    const HloInstruction* op = instr.operand(first + (vector_form ? 0 : d));
    const PrimitiveType t = op->shape().element_type();
    if (!IsInteger(t)) return CannotCompile(instr, "non-integer start index");
    types[d] = std::string(PrimitiveTypeName(t));
    slots[d] = vector_form ? d * ElemBytes(types[d]) : 8 * d;
  }
  if (rank > 0) {
    if (vector_form) {
      ArrayBuffer v = plan.Array(instr.operand(first));
      kb.Emit("saddr s10, " + v.name);
      kb.Emit("dmastart smem[0], hbm[s10], " + I(v.bytes) + ", 2");
    } else {
      for (int d = 0; d < rank; ++d) {
        ArrayBuffer s = plan.Array(instr.operand(first + d));
        kb.Emit("saddr s10, " + s.name);
        kb.Emit("dmastart smem[" + I(slots[d]) + "], hbm[s10], " + I(s.bytes) +
                ", 2");
      }
    }
    kb.Emit("dmawait 2");
  }
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  kb.Emit("simm s9, 0");
  for (int d = 0; d < rank; ++d) {
    const std::string x = S(1 + d);
    const int64_t hi = dims[d] - sizes[d];
    kb.Emit("sld." + types[d] + " " + x + ", smem[" + I(slots[d]) + "]");
    EmitClampScalar(kb, 1 + d, types[d], hi, 10);
    kb.Emit("smul s10, " + x + ", " + I(strides[d]));
    kb.Emit("sadd s9, s9, s10");
  }
  return Status::Ok();
}

void EmitClampScalar(KernelBuilder& kb, int x, const std::string& type,
                     int64_t hi, int scratch) {
  const std::string r = S(x), t = S(scratch), h = S(scratch + 1);
  kb.Emit("simm " + h + ", " + I(hi));
  if (type == "u64") {  // Above INT64_MAX: saturates, clamps to hi.
    kb.Emit("scmplt " + t + ", " + r + ", 0");
    kb.Emit("ssel " + r + ", " + t + ", " + h + ", " + r);
  }
  kb.Emit("smax " + r + ", " + r + ", 0");
  kb.Emit("smin " + r + ", " + r + ", " + h);
}

void EmitAddScaled(KernelBuilder& kb, int acc, int coord, int64_t factor,
                   int scratch) {
  if (factor == 0) return;
  kb.Splat(14, "s32", I(factor));
  kb.Emit("vmul.s32 " + V(scratch) + ", " + V(coord) + ", v14");
  kb.Emit("vadd.s32 " + V(acc) + ", " + V(acc) + ", " + V(scratch));
}

void EmitLoadIndexComponent(KernelBuilder& kb, const ArrayBuffer& indices,
                            int64_t vmem, int64_t ivd, int64_t k, int addr,
                            int mask) {
  const int64_t rank = indices.dims.size();
  const int64_t k_off = ivd == rank ? 0
                                    : k * RowMajorStrides(indices.dims)[ivd] *
                                          ElemBytes(indices.dtype);
  kb.Emit("vgather." + indices.dtype + " v16, vmem[" + I(vmem + k_off) + "], " +
          V(addr) + " @m" + I(mask));
}

void EmitClampIndexLanes(KernelBuilder& kb, const std::string& itype,
                         int64_t hi) {
  const std::string lane = LaneType(itype);  // s32, u32, s64 or u64.
  if (lane == "s32" || lane == "s64") {
    kb.Splat(14, lane, "0");
    kb.Emit("vmax." + lane + " v16, v16, v14");
  }
  kb.Splat(14, lane, I(hi));
  kb.Emit("vmin." + lane + " v16, v16, v14");
}

void EmitAndIndexInBounds(KernelBuilder& kb, const std::string& itype,
                          int64_t hi) {
  const std::string lane = LaneType(itype);
  if (lane == "s32" || lane == "s64") {
    kb.Splat(14, lane, "0");
    kb.Emit("vcmpge." + lane + " m6, v16, v14");
    kb.Emit("mand m4, m4, m6");
  }
  kb.Splat(14, lane, I(hi));
  kb.Emit("vcmple." + lane + " m6, v16, v14");
  kb.Emit("mand m4, m4, m6");
}

}  // namespace trench::codegen::dm
