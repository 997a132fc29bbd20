// A matrix product too large for VMEM as a loop over output tiles
// (emit_dot_internal.h, EmitTiledMatMul). Each tile [m0, m0+tm) x
// [n0, n0+tn) of the result DMAs its lhs rows and rhs columns (strided DMA
// when the operand is stored transposed), stages them like the untiled
// path, multiplies over all of K and DMAs its block back to the result.
// The VMEM regions are reused by every tile: each DMA is waited for before
// the data is used and before the region is written again.
#include <algorithm>

#include "compiler/codegen/emit_dot_internal.h"
#include "tpu/isa.h"

namespace trench::codegen::dot_internal {
namespace {

std::string I(int64_t x) { return std::to_string(x); }

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
int64_t Aligned(int64_t bytes) { return RoundUp(bytes, 512); }

int64_t Bytes(const std::string& t) {
  auto d = tpu::DTypeFromName(t);
  return d ? tpu::DTypeBytes(*d) : 4;
}

// One DMA of `count` chunks of `chunk` bytes, strided, then its wait.
void Dma(KernelBuilder& kb, bool to_hbm, const std::string& buffer,
         int64_t hbm_offset, int64_t vmem, int64_t chunk, int64_t count,
         int64_t hbm_stride, int64_t vmem_stride) {
  kb.Emit("saddr s28, " + buffer);
  const std::string h = "hbm[s28+" + I(hbm_offset) + "]";
  const std::string v = "vmem[" + I(vmem) + "]";
  std::string line = "dmastart " + (to_hbm ? h + ", " + v : v + ", " + h) +
                     ", " + I(chunk) + ", " + (to_hbm ? "1" : "0");
  if (count > 1) {
    line += ", " + I(count) + ", " +
            (to_hbm ? I(vmem_stride) + ", " + I(hbm_stride)
                    : I(hbm_stride) + ", " + I(vmem_stride));
  }
  kb.Emit(line);
  kb.Emit(std::string("dmawait ") + (to_hbm ? "1" : "0"));
}

}  // namespace

Status EmitTiledMatMul(const HloInstruction& instr, const ArrayBuffer& a,
                       const ArrayBuffer& b, const ArrayBuffer& out, int64_t lc,
                       int64_t rc, const DotTypes& t, KernelBuilder& kb) {
  const int64_t m = a.dims[1 - lc], k = a.dims[lc], n = b.dims[1 - rc];
  const int64_t ae = Bytes(a.dtype), be = Bytes(b.dtype), oe = Bytes(out.dtype);
  const int64_t kp = t.mxu ? RoundUp(std::max<int64_t>(k, 1), 128) : k;
  auto need = [&](int64_t tm, int64_t tn) {
    return Aligned(tm * k * ae) + Aligned(k * tn * be) +
           Aligned(tm * kp * t.esz) + Aligned(kp * tn * t.esz) +
           Aligned(tm * tn * t.ce) + Aligned(tm * tn * oe);
  };
  const int64_t avail = kb.vmem_capacity() - kb.vmem_used();
  int64_t tm = RoundUp(m, 8), tn = RoundUp(n, 128);
  while (need(tm, tn) > avail) {
    if (tm > 8 && (tm >= tn || tn == 128)) {
      tm = RoundUp(tm / 2, 8);
    } else if (tn > 128) {
      tn = RoundUp(tn / 2, 128);
    } else {
      return ResourceExhausted("hloc: " + instr.name() +
                               ": not even an 8x128 tile of the dot fits "
                               "in VMEM (contracting size " +
                               I(k) + ")");
    }
  }
  const int64_t va = kb.AllocVmem(tm * k * ae);
  const int64_t vb = kb.AllocVmem(k * tn * be);
  const int64_t ap = kb.AllocVmem(tm * kp * t.esz);
  const int64_t bp = kb.AllocVmem(kp * tn * t.esz);
  const int64_t cp = kb.AllocVmem(tm * tn * t.ce);
  const int64_t vo = kb.AllocVmem(tm * tn * oe);
  for (int64_t m0 = 0; m0 < m; m0 += tm) {
    for (int64_t n0 = 0; n0 < n; n0 += tn) {
      DotShape s;
      s.m = std::min(tm, m - m0);
      s.n = std::min(tn, n - n0);
      s.k = k;
      s.mp = RoundUp(s.m, 8);
      s.np = RoundUp(s.n, 128);
      s.kp = kp;
      if (k > 0) {
        // lhs rows m0.. as [rows][k] (lc == 1) or [k][rows] (lc == 0).
        GatherSource sa{va, a.dtype, 0, {}, {{0, 0, s.m}, {1, 0, k}}};
        if (lc == 1) {
          Dma(kb, false, a.name, m0 * k * ae, va, s.m * k * ae, 1, 0, 0);
          sa.coeff = {k, 1};
        } else {
          Dma(kb, false, a.name, m0 * ae, va, s.m * ae, k, m * ae, s.m * ae);
          sa.coeff = {1, s.m};
        }
        // rhs columns n0.. as [k][cols] (rc == 0) or [cols][k] (rc == 1).
        GatherSource sb{vb, b.dtype, 0, {}, {{0, 0, k}, {1, 0, s.n}}};
        if (rc == 0) {
          Dma(kb, false, b.name, n0 * be, vb, s.n * be, k, n * be, s.n * be);
          sb.coeff = {s.n, 1};
        } else {
          Dma(kb, false, b.name, n0 * k * be, vb, s.n * k * be, 1, 0, 0);
          sb.coeff = {1, k};
        }
        EmitConvertingGather(kb, {s.mp, s.kp}, sa, ap, t.mem, LaneType(a.dtype),
                             t.lane);
        EmitConvertingGather(kb, {s.kp, s.np}, sb, bp, t.mem, LaneType(b.dtype),
                             t.lane);
      }
      if (t.mxu) {
        EmitGather(kb, {s.mp * s.np}, {}, cp, "f32", "f32");  // C = 0.
        if (k > 0) EmitMatrixUnitDot(kb, s, t.mem, ap, bp, cp, t.passes);
      } else {
        EmitVectorUnitDot(kb, s, t.lane, ap, bp, cp);
      }
      GatherSource sc{cp, t.mxu ? "f32" : t.lane, 0, {s.np, 1}, {}};
      EmitGather(kb, {s.m, s.n}, {sc}, vo, out.dtype, t.lane);
      Dma(kb, true, out.name, (m0 * n + n0) * oe, vo, s.n * oe, s.m, n * oe,
          s.n * oe);
    }
  }
  return Status::Ok();
}

}  // namespace trench::codegen::dot_internal
