// A dot too large for VMEM as a loop over tiles (emit_dot_internal.h,
// EmitTiledDot): batch index x M block x N block, and inside each block a
// loop over K slices that accumulate into the block's accumulator.
//
// Each operand tile is a box of the operand (one index in every batch dim,
// a range in its free and contracting dims) DMA'd into a dense VMEM copy
// with strides (the contiguous inner part is the DMA chunk), then staged
// into the canonical padded [mp][kp] / [kp][np] form by a converting gather
// (its affine map does any transpose). The result block is rounded to the
// result type once, after the last K slice, and DMA'd back as a box. The
// VMEM regions are reused by every tile: each DMA is waited for before the
// data is used and before the region is written again. (Transfers are not
// double buffered here: the matrix-unit work per tile dominates its DMA.)
//
// Tile choice: start from the whole dot and halve the largest of tm, tn, tk
// (granularity 8, 128, 128; the vector unit's tk by halves) until the six
// regions fit in the VMEM left.
#include <algorithm>

#include "compiler/codegen/emit_dot_internal.h"
#include "tpu/isa.h"

namespace trench::codegen::dot_internal {
namespace {

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

int64_t Bytes(const std::string& t) {
  auto d = tpu::DTypeFromName(t);
  return d ? tpu::DTypeBytes(*d) : 4;
}

bool Has(const std::vector<int64_t>& v, int64_t d) {
  return std::find(v.begin(), v.end(), d) != v.end();
}

// The box [start, start + len) of a row-major array `dims` (element size
// `e`) in HBM buffer `buffer` <-> a dense row-major copy at `vmem`: one
// DMA (contiguous inner part as the chunk, up to 3 strided outer dims),
// then its wait. False when more than 3 strided dims would be needed.
bool BoxDma(KernelBuilder& kb, bool to_hbm, const std::string& buffer,
            const std::vector<int64_t>& dims, const std::vector<int64_t>& start,
            const std::vector<int64_t>& len, int64_t e, int64_t vmem,
            bool emit) {
  const int64_t r = static_cast<int64_t>(dims.size());
  std::vector<int64_t> stride(r, e), box(r, e);
  for (int64_t d = r - 2; d >= 0; --d) {
    stride[d] = stride[d + 1] * dims[d + 1];
    box[d] = box[d + 1] * len[d + 1];
  }
  int64_t offset = 0;
  for (int64_t d = 0; d < r; ++d) offset += start[d] * stride[d];
  // Chunk: the innermost dims while the ones inside them are whole.
  int64_t chunk = e, d = r - 1;
  while (d >= 0) {
    chunk *= len[d];
    if (len[d] != dims[d]) break;
    --d;
  }
  --d;
  std::vector<int64_t> strided;  // Outer dims with len > 1, innermost first.
  for (; d >= 0; --d) {
    if (len[d] > 1) strided.push_back(d);
  }
  if (strided.size() > 3) return false;
  if (!emit || chunk == 0) return true;
  kb.Emit("saddr s28, " + buffer);
  const std::string h = "hbm[s28+" + I(offset) + "]";
  const std::string v = "vmem[" + I(vmem) + "]";
  std::string line = "dmastart " + (to_hbm ? h + ", " + v : v + ", " + h) +
                     ", " + I(chunk) + ", " + (to_hbm ? "1" : "0");
  for (int64_t s : strided) {
    line += ", " + I(len[s]) + ", " +
            (to_hbm ? I(box[s]) + ", " + I(stride[s])
                    : I(stride[s]) + ", " + I(box[s]));
  }
  kb.Emit(line);
  kb.Emit(std::string("dmawait ") + (to_hbm ? "1" : "0"));
  return true;
}

// One operand's dims by role.
struct Roles {
  std::vector<int64_t> batch;
  int64_t free = -1, contracting = -1;  // -1: none.
};

Roles RolesOf(int64_t rank, const std::vector<int64_t>& batch,
              const std::vector<int64_t>& contracting, bool* ok) {
  Roles r;
  r.batch = batch;
  *ok = contracting.size() <= 1;
  if (!contracting.empty()) r.contracting = contracting[0];
  for (int64_t d = 0; d < rank; ++d) {
    if (Has(batch, d) || Has(contracting, d)) continue;
    if (r.free >= 0) *ok = false;
    r.free = d;
  }
  return r;
}

// The box of an operand tile: batch index `bidx` (per batch dim), free
// range [f0, f0 + fl), contracting range [k0, k0 + kl).
void TileBox(const Roles& r, const std::vector<int64_t>& dims,
             const std::vector<int64_t>& bidx, int64_t f0, int64_t fl,
             int64_t k0, int64_t kl, std::vector<int64_t>* start,
             std::vector<int64_t>* len) {
  start->assign(dims.size(), 0);
  len->assign(dims.size(), 1);
  for (size_t j = 0; j < r.batch.size(); ++j) (*start)[r.batch[j]] = bidx[j];
  if (r.free >= 0) {
    (*start)[r.free] = f0;
    (*len)[r.free] = fl;
  }
  if (r.contracting >= 0) {
    (*start)[r.contracting] = k0;
    (*len)[r.contracting] = kl;
  }
}

// Element stride of dim `d` in a dense box `len` (0 for d < 0).
int64_t BoxStride(const std::vector<int64_t>& len, int64_t d) {
  if (d < 0) return 0;
  int64_t s = 1;
  for (size_t j = d + 1; j < len.size(); ++j) s *= len[j];
  return s;
}

}  // namespace

bool TiledDotSupported(const HloInstruction& instr, int64_t lhs_rank,
                       int64_t rhs_rank) {
  const DotDimNumbers dn = instr.attrs().dot_dnums.value_or(DotDimNumbers{});
  bool ok_a = false, ok_b = false;
  RolesOf(lhs_rank, dn.lhs_batch, dn.lhs_contracting, &ok_a);
  RolesOf(rhs_rank, dn.rhs_batch, dn.rhs_contracting, &ok_b);
  return ok_a && ok_b;
}

Status EmitTiledDot(const HloInstruction& instr, const ArrayBuffer& a,
                    const ArrayBuffer& b, const ArrayBuffer& out,
                    const DotTypes& t, KernelBuilder& kb) {
  const DotDimNumbers dn = instr.attrs().dot_dnums.value_or(DotDimNumbers{});
  bool ok = false;
  const Roles ra =
      RolesOf(a.dims.size(), dn.lhs_batch, dn.lhs_contracting, &ok);
  const Roles rb =
      RolesOf(b.dims.size(), dn.rhs_batch, dn.rhs_contracting, &ok);
  const int64_t m = ra.free >= 0 ? a.dims[ra.free] : 1;
  const int64_t n = rb.free >= 0 ? b.dims[rb.free] : 1;
  const int64_t k = ra.contracting >= 0 ? a.dims[ra.contracting] : 1;
  const int64_t ae = Bytes(a.dtype), be = Bytes(b.dtype), oe = Bytes(out.dtype);
  const int64_t kgran = t.mxu ? 128 : 1;
  auto need = [&](int64_t tm, int64_t tn, int64_t tk) {
    const int64_t kp = t.mxu ? RoundUp(std::max<int64_t>(tk, 1), 128) : tk;
    const int64_t mp = RoundUp(tm, 8), np = RoundUp(tn, 128);
    return VmemAligned(tm * tk * ae) + VmemAligned(tk * tn * be) +
           VmemAligned(mp * kp * t.esz) + VmemAligned(kp * np * t.esz) +
           VmemAligned(mp * np * t.ce) + VmemAligned(tm * tn * oe);
  };
  const int64_t avail = kb.vmem_capacity() - kb.vmem_used();
  int64_t tm = RoundUp(m, 8), tn = RoundUp(n, 128);
  int64_t tk = t.mxu ? RoundUp(std::max<int64_t>(k, 1), 128) : k;
  while (need(tm, tn, tk) > avail) {
    if (tk > kgran && tk >= tm && tk >= tn) {
      tk = RoundUp((tk + 1) / 2, kgran);
    } else if (tm > 8 && tm >= tn) {
      tm = RoundUp(tm / 2, 8);
    } else if (tn > 128) {
      tn = RoundUp(tn / 2, 128);
    } else if (tm > 8) {
      tm = RoundUp(tm / 2, 8);
    } else if (tk > kgran) {
      tk = RoundUp((tk + 1) / 2, kgran);
    } else {
      return ResourceExhausted("hloc: " + instr.name() +
                               ": not even the smallest tile of the dot fits "
                               "in VMEM");
    }
  }
  tm = std::min(tm, m);
  tn = std::min(tn, n);
  tk = std::min(tk, k);
  // Check every box's DMA once (the largest tiles have the same shape).
  std::vector<int64_t> st, ln;
  const std::vector<int64_t> b0(ra.batch.size(), 0);
  TileBox(ra, a.dims, b0, 0, tm, 0, tk, &st, &ln);
  bool dma_ok = BoxDma(kb, false, a.name, a.dims, st, ln, ae, 0, false);
  TileBox(rb, b.dims, b0, 0, tn, 0, tk, &st, &ln);
  dma_ok &= BoxDma(kb, false, b.name, b.dims, st, ln, be, 0, false);
  if (!dma_ok) {
    return CannotCompile(instr, a.dtype + " (tile needs > 3 DMA strides)");
  }
  const int64_t kp_t = t.mxu ? RoundUp(std::max<int64_t>(tk, 1), 128) : tk;
  const int64_t mp_t = RoundUp(tm, 8), np_t = RoundUp(tn, 128);
  const int64_t va = kb.AllocVmem(tm * tk * ae);
  const int64_t vb = kb.AllocVmem(tk * tn * be);
  const int64_t ap = kb.AllocVmem(mp_t * kp_t * t.esz);
  const int64_t bp = kb.AllocVmem(kp_t * np_t * t.esz);
  const int64_t cp = kb.AllocVmem(mp_t * np_t * t.ce);
  const int64_t vo = kb.AllocVmem(tm * tn * oe);
  // Result dims: lhs batch dims, lhs free, rhs free (those present).
  const int64_t nb = static_cast<int64_t>(ra.batch.size());
  int64_t batches = 1;
  for (int64_t d : ra.batch) batches *= a.dims[d];
  for (int64_t bi = 0; bi < batches; ++bi) {
    std::vector<int64_t> bidx(nb);
    for (int64_t j = nb - 1, r = bi; j >= 0; --j) {
      bidx[j] = r % a.dims[ra.batch[j]];
      r /= a.dims[ra.batch[j]];
    }
    for (int64_t m0 = 0; m0 < m; m0 += tm) {
      for (int64_t n0 = 0; n0 < n; n0 += tn) {
        DotShape s;
        s.m = std::min(tm, m - m0);
        s.n = std::min(tn, n - n0);
        s.mp = RoundUp(s.m, 8);
        s.np = RoundUp(s.n, 128);
        if (t.mxu) EmitGather(kb, {s.mp * s.np}, {}, cp, "f32", "f32");
        const int64_t k_tiles = k == 0 ? 1 : (k + tk - 1) / tk;
        for (int64_t kt = 0; kt < k_tiles; ++kt) {
          const int64_t k0 = kt * tk;
          s.k = std::min(tk, k - k0);
          s.kp = t.mxu ? RoundUp(std::max<int64_t>(s.k, 1), 128) : s.k;
          if (s.k > 0) {
            TileBox(ra, a.dims, bidx, m0, s.m, k0, s.k, &st, &ln);
            BoxDma(kb, false, a.name, a.dims, st, ln, ae, va, true);
            GatherSource sa{
                va,
                a.dtype,
                0,
                {BoxStride(ln, ra.free), BoxStride(ln, ra.contracting)},
                {{0, 0, s.m}, {1, 0, s.k}}};
            TileBox(rb, b.dims, bidx, n0, s.n, k0, s.k, &st, &ln);
            BoxDma(kb, false, b.name, b.dims, st, ln, be, vb, true);
            GatherSource sb{
                vb,
                b.dtype,
                0,
                {BoxStride(ln, rb.contracting), BoxStride(ln, rb.free)},
                {{0, 0, s.k}, {1, 0, s.n}}};
            EmitConvertingGather(kb, {s.mp, s.kp}, sa, ap, t.mem,
                                 LaneType(a.dtype), t.lane);
            EmitConvertingGather(kb, {s.kp, s.np}, sb, bp, t.mem,
                                 LaneType(b.dtype), t.lane);
          }
          if (t.mxu) {
            if (s.k > 0) EmitMatrixUnitDot(kb, s, t.mem, ap, bp, cp, t.passes);
          } else {
            EmitVectorUnitDot(kb, s, t.lane, ap, bp, cp, kt > 0);
          }
        }
        GatherSource sc{cp, t.mxu ? "f32" : t.lane, 0, {s.np, 1}, {}};
        EmitGather(kb, {s.m, s.n}, {sc}, vo, out.dtype, t.lane);
        // The result box: batch indices, then the m and n ranges.
        std::vector<int64_t> os(bidx), ol(nb, 1);
        if (ra.free >= 0) {
          os.push_back(m0);
          ol.push_back(s.m);
        }
        if (rb.free >= 0) {
          os.push_back(n0);
          ol.push_back(s.n);
        }
        BoxDma(kb, true, out.name, out.dims, os, ol, oe, vo, true);
      }
    }
  }
  return Status::Ok();
}

}  // namespace trench::codegen::dot_internal
