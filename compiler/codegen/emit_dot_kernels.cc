// The dot emitter's inner kernels (emit_dot_internal.h): the matrix-unit
// loop nest (bf16 passes, f32 accumulation), the exact vector-unit loop
// nest for 64-bit and integer types, and the converting gather that stages
// operands.
#include <algorithm>
#include <utility>

#include "compiler/codegen/emit_dot_internal.h"
#include "tpu/isa.h"

namespace trench::codegen::dot_internal {
namespace {

std::string V(int r) { return "v" + std::to_string(r); }

int Bytes(const std::string& mem) {
  auto t = tpu::DTypeFromName(mem);
  return t ? tpu::DTypeBytes(*t) : 4;
}

// Splits v(s) into bf16 parts: hi -> v(h), mid -> v(h+1), lo -> v(h+2)
// (as many as `parts`), as tpu/ISA.md (Matrix unit) prescribes. Scratch:
// v30, v31.
void Split(KernelBuilder& kb, int s, int h, int parts) {
  kb.Emit("vpack.bf16 v30, " + V(s));
  kb.Emit("vunpack.bf16 " + V(h) + ", v30");
  if (parts > 1) {
    kb.Emit("vsub.f32 v31, " + V(s) + ", " + V(h));
    kb.Emit("vpack.bf16 v30, v31");
    kb.Emit("vunpack.bf16 " + V(h + 1) + ", v30");
  }
  if (parts > 2) {
    kb.Emit("vsub.f32 v31, v31, " + V(h + 1));
    kb.Emit("vpack.bf16 v30, v31");
    kb.Emit("vunpack.bf16 " + V(h + 2) + ", v30");
  }
}

}  // namespace

void EmitConvertingGather(KernelBuilder& kb,
                          const std::vector<int64_t>& out_dims,
                          const GatherSource& src, int64_t out_vmem,
                          const std::string& out_mem,
                          const std::string& src_lane,
                          const std::string& lane) {
  int64_t n = 1;
  for (int64_t d : out_dims) n *= d;
  kb.BeginLinearTiles(n);
  kb.LinearIndex();
  EmitCoordinates(kb, out_dims);
  kb.Splat(0, src_lane, "0");
  kb.Splat(12, "s32", I(src.offset));
  for (size_t d = 0; d < src.coeff.size(); ++d) {
    if (src.coeff[d] == 0) continue;
    kb.Splat(14, "s32", I(src.coeff[d]));
    kb.Emit("vmul.s32 v13, " + V(2 + static_cast<int>(d)) + ", v14");
    kb.Emit("vadd.s32 v12, v12, v13");
  }
  kb.Emit("mand m2, m0, m0");
  for (const GatherSource::Range& r : src.ranges) {
    const std::string c = V(2 + r.dim);
    kb.Splat(14, "s32", I(r.lo));
    kb.Emit("vcmpge.s32 m3, " + c + ", v14");
    kb.Emit("mand m2, m2, m3");
    kb.Splat(14, "s32", I(r.hi));
    kb.Emit("vcmplt.s32 m3, " + c + ", v14");
    kb.Emit("mand m2, m2, m3");
  }
  kb.Emit("vgather." + src.mem + " v0, vmem[" + I(src.vmem) + "], v12 @m2");
  int value = 0;
  if (src_lane != lane) {
    kb.Emit("vcvt." + lane + "." + src_lane + " v16, v0");
    value = 16;
  }
  kb.StoreTile(out_mem, out_vmem, value);
  kb.EndLinearTiles();
}

void EmitMatrixUnitDot(KernelBuilder& kb, const DotShape& s,
                       const std::string& mem, int64_t a_vmem, int64_t b_vmem,
                       int64_t c_vmem, int passes) {
  const int64_t esz = Bytes(mem);
  // (lhs part, weight part) products; -1 = the raw value. Smallest first.
  std::vector<std::pair<int, int>> prods = {{-1, -1}};
  if (passes == 3) prods = {{1, 0}, {0, 1}, {0, 0}};
  if (passes == 6) prods = {{2, 0}, {1, 1}, {0, 2}, {1, 0}, {0, 1}, {0, 0}};
  const int parts = passes == 1 ? 0 : passes == 3 ? 2 : 3;
  // Batch loop: s14 counts down, s15/s16/s17 are the byte offsets of the
  // current batch's A, B and C.
  const std::string batch_loop = kb.NewLabel("batch");
  kb.Emit("simm s14, " + I(s.batch));
  kb.Emit("simm s15, 0");
  kb.Emit("simm s16, 0");
  kb.Emit("simm s17, 0");
  kb.PlaceLabel(batch_loop);
  for (int64_t nt = 0; nt < s.np / 128; ++nt) {
    for (int64_t kt = 0; kt < s.kp / 128; ++kt) {
      for (int wp = -1; wp <= 2; ++wp) {
        bool used = false;
        for (auto [lp, p] : prods) used |= p == wp;
        if (!used) continue;
        for (int g = 0; g < 16; ++g) {
          kb.Emit("vld." + mem + " v0, vmem[s16+" +
                  I(b_vmem + ((kt * 128 + 8 * g) * s.np + nt * 128) * esz) +
                  "], " + I(s.np * esz));
          if (wp >= 0) Split(kb, 0, 1, parts);
          kb.Emit("mxwpush " + V(wp < 0 ? 0 : 1 + wp) + ", " + I(g));
        }
        const std::string rows = kb.NewLabel("rows");
        kb.Emit("simm s10, 0");
        kb.Emit("simm s11, " + I(s.mp / 8));
        kb.PlaceLabel(rows);
        kb.Emit("smul s12, s10, " + I(s.np * 4));
        kb.Emit("sadd s12, s12, s17");
        kb.Emit("smul s13, s10, " + I(s.kp * esz));
        kb.Emit("sadd s13, s13, s15");
        kb.Emit("vld.f32 v12, vmem[s12+" + I(c_vmem + nt * 512) + "], " +
                I(s.np * 4));
        kb.Emit("vld." + mem + " v8, vmem[s13+" + I(a_vmem + kt * 128 * esz) +
                "], " + I(s.kp * esz));
        if (parts > 0) Split(kb, 8, 9, parts);
        for (auto [lp, p] : prods) {
          if (p != wp) continue;
          kb.Emit("mxmatmulacc v12, " + V(lp < 0 ? 8 : 9 + lp));
        }
        kb.Emit("vst.f32 vmem[s12+" + I(c_vmem + nt * 512) + "], v12, " +
                I(s.np * 4));
        kb.Emit("sadd s10, s10, 8");
        kb.Emit("sloop s11, " + rows);
      }
    }
  }
  kb.Emit("sadd s15, s15, " + I(s.mp * s.kp * esz));
  kb.Emit("sadd s16, s16, " + I(s.kp * s.np * esz));
  kb.Emit("sadd s17, s17, " + I(s.mp * s.np * 4));
  kb.Emit("sloop s14, " + batch_loop);
}

void EmitVectorUnitDot(KernelBuilder& kb, const DotShape& s,
                       const std::string& lane, int64_t a_vmem, int64_t b_vmem,
                       int64_t c_vmem, bool accumulate) {
  const int64_t e = Bytes(lane);
  // Registers: v18 accumulator, v20 gather indices of A's column k (s32),
  // v21 = 1, v22 A values, v24 B row k, v26 products (pairs when 64-bit).
  // Scalars: s14 batch counter, s15 batch index, s16 row-block counter,
  // s17 row r, s18 column-block counter, s19 column j0, s10 B byte offset,
  // s11 k counter, s12/s13 scratch.
  kb.Splat(21, "s32", "1");
  const std::string batch_loop = kb.NewLabel("vbatch");
  const std::string row_loop = kb.NewLabel("vrow");
  const std::string col_loop = kb.NewLabel("vcol");
  const std::string k_loop = kb.NewLabel("vk");
  kb.Emit("simm s14, " + I(s.batch));
  kb.Emit("simm s15, 0");
  kb.PlaceLabel(batch_loop);
  kb.Emit("simm s16, " + I(s.mp / 8));
  kb.Emit("simm s17, 0");
  kb.PlaceLabel(row_loop);
  kb.Emit("simm s18, " + I(s.np / 128));
  kb.Emit("simm s19, 0");
  kb.PlaceLabel(col_loop);
  if (accumulate) {
    // v18 = C[batch][r][j0..] (the partial sums of earlier K tiles).
    kb.Emit("smul s12, s15, " + I(s.mp));
    kb.Emit("sadd s12, s12, s17");
    kb.Emit("smul s12, s12, " + I(s.np));
    kb.Emit("sadd s12, s12, s19");
    kb.Emit("smul s12, s12, " + I(e));
    kb.Emit("vld." + lane + " v18, vmem[s12+" + I(c_vmem) + "], " +
            I(s.np * e));
  } else {
    kb.Splat(18, lane, "0");
  }
  if (s.k > 0) {
    // v20 = (batch * mp + r + sublane) * k: A[batch][r + sublane][0].
    kb.Emit("smul s12, s15, " + I(s.mp));
    kb.Emit("sadd s12, s12, s17");
    kb.Emit("smul s12, s12, " + I(s.k));
    kb.Emit("viota v20, 0");
    kb.Splat(22, "s32", I(s.k));
    kb.Emit("vmul.s32 v20, v20, v22");
    kb.Emit("vbcast.s32 v22, s12");
    kb.Emit("vadd.s32 v20, v20, v22");
    // s10 = byte offset of B[batch][0][j0].
    kb.Emit("smul s10, s15, " + I(s.k * s.np * e));
    kb.Emit("smul s13, s19, " + I(e));
    kb.Emit("sadd s10, s10, s13");
    kb.Emit("simm s11, " + I(s.k));
    kb.PlaceLabel(k_loop);
    kb.Emit("vgather." + lane + " v22, vmem[" + I(a_vmem) + "], v20");
    kb.Emit("vld." + lane + " v24, vmem[s10+" + I(b_vmem) + "], 0");
    kb.Emit("vmul." + lane + " v26, v22, v24");
    kb.Emit("vadd." + lane + " v18, v18, v26");
    kb.Emit("vadd.s32 v20, v20, v21");
    kb.Emit("sadd s10, s10, " + I(s.np * e));
    kb.Emit("sloop s11, " + k_loop);
  }
  // C[batch][r][j0] at ((batch * mp + r) * np + j0) * e.
  kb.Emit("smul s12, s15, " + I(s.mp));
  kb.Emit("sadd s12, s12, s17");
  kb.Emit("smul s12, s12, " + I(s.np));
  kb.Emit("sadd s12, s12, s19");
  kb.Emit("smul s12, s12, " + I(e));
  kb.Emit("vst." + lane + " vmem[s12+" + I(c_vmem) + "], v18, " + I(s.np * e));
  kb.Emit("sadd s19, s19, 128");
  kb.Emit("sloop s18, " + col_loop);
  kb.Emit("sadd s17, s17, 8");
  kb.Emit("sloop s16, " + row_loop);
  kb.Emit("sadd s15, s15, 1");
  kb.Emit("sloop s14, " + batch_loop);
}

}  // namespace trench::codegen::dot_internal
