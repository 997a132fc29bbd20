// dot on the 128x128 bf16 matrix unit. Operands are staged into zero-padded
// f32 VMEM matrices A[Mp,Kp] and B[Kp,Np] (Mp a multiple of 8, Kp and Np of
// 128) by index-mapped gathers, which also apply the contracting-dimension
// transposes. C[Mp,Np] accumulates in f32 over K tiles; precision DEFAULT
// is one pass on bf16-rounded operands, HIGH three (bf16x3) and HIGHEST six
// (bf16x6) passes on vector-split operands (tpu/ISA.md, Matrix unit).
#include <algorithm>
#include <utility>

#include "compiler/codegen/emitters.h"

namespace trench::codegen {
namespace {

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Splits v(s) into bf16 parts: hi -> v(h), mid -> v(h+1), lo -> v(h+2)
// (as many as `parts`). Scratch: v30, v31.
void Split(KernelBuilder& kb, int s, int h, int parts) {
  auto v = [](int r) { return "v" + std::to_string(r); };
  kb.Emit("vpack.bf16 v30, " + v(s));
  kb.Emit("vunpack.bf16 " + v(h) + ", v30");
  if (parts > 1) {
    kb.Emit("vsub.f32 v31, " + v(s) + ", " + v(h));
    kb.Emit("vpack.bf16 v30, v31");
    kb.Emit("vunpack.bf16 " + v(h + 1) + ", v30");
  }
  if (parts > 2) {
    kb.Emit("vsub.f32 v31, v31, " + v(h + 1));
    kb.Emit("vpack.bf16 v30, v31");
    kb.Emit("vunpack.bf16 " + v(h + 2) + ", v30");
  }
}

}  // namespace

Status EmitDot(const HloInstruction& instr, const BufferPlan& plan,
               KernelBuilder& kb) {
  ArrayBuffer a = plan.Array(instr.operand(0));
  ArrayBuffer b = plan.Array(instr.operand(1));
  ArrayBuffer out = plan.Array(&instr);
  if (LaneType(a.dtype) != "f32" || LaneType(b.dtype) != "f32" ||
      LaneType(out.dtype) != "f32") {
    return CannotCompile(instr, a.dtype + " x " + b.dtype + " -> " + out.dtype);
  }
  const auto& dn = instr.attrs().dot_dnums;
  if (!dn || !dn->lhs_batch.empty() || a.dims.size() != 2 ||
      b.dims.size() != 2 || dn->lhs_contracting.size() != 1 ||
      dn->rhs_contracting.size() != 1) {
    return CannotCompile(instr, a.dtype +
                                    " (only rank-2 operands, one "
                                    "contracting dimension, no batch)");
  }
  const int64_t lc = dn->lhs_contracting[0], rc = dn->rhs_contracting[0];
  const int64_t M = a.dims[1 - lc], K = a.dims[lc], N = b.dims[1 - rc];
  if (out.elements == 0) return Status::Ok();
  int passes = 1;
  for (Precision p : instr.attrs().operand_precision) {
    passes = std::max(passes, p == Precision::kHighest ? 6
                              : p == Precision::kHigh  ? 3
                                                       : 1);
  }
  // Two bf16 operands are exact in one pass.
  if (a.dtype == "bf16" && b.dtype == "bf16") passes = 1;
  const int64_t Mp = RoundUp(std::max<int64_t>(M, 1), 8);
  const int64_t Kp = RoundUp(std::max<int64_t>(K, 1), 128);
  const int64_t Np = RoundUp(std::max<int64_t>(N, 1), 128);
  const int64_t va = kb.AllocVmem(a.bytes), vb = kb.AllocVmem(b.bytes);
  const int64_t ap = kb.AllocVmem(Mp * Kp * 4), bp = kb.AllocVmem(Kp * Np * 4);
  const int64_t cp = kb.AllocVmem(Mp * Np * 4), vo = kb.AllocVmem(out.bytes);
  kb.DmaIn(va, a.name, a.bytes);
  kb.DmaIn(vb, b.name, b.bytes);
  // A[i,k] = lhs[i,k] (lc == 1) or lhs[k,i]; B[k,j] = rhs[k,j] or rhs[j,k].
  GatherSource sa{va,
                  a.dtype,
                  0,
                  {lc == 1 ? K : 1, lc == 1 ? 1 : M},
                  {{0, 0, M}, {1, 0, K}}};
  GatherSource sb{vb,
                  b.dtype,
                  0,
                  {rc == 0 ? N : 1, rc == 0 ? 1 : K},
                  {{0, 0, K}, {1, 0, N}}};
  if (K > 0) {
    EmitGather(kb, {Mp, Kp}, {sa}, ap, "f32", "f32");
    EmitGather(kb, {Kp, Np}, {sb}, bp, "f32", "f32");
  }
  EmitGather(kb, {Mp, Np}, {}, cp, "f32", "f32");  // C = 0.
  // (lhs part, weight part) products; -1 = the raw value. Smallest first.
  std::vector<std::pair<int, int>> prods = {{-1, -1}};
  if (passes == 3) prods = {{1, 0}, {0, 1}, {0, 0}};
  if (passes == 6) prods = {{2, 0}, {1, 1}, {0, 2}, {1, 0}, {0, 1}, {0, 0}};
  const int parts = passes == 1 ? 0 : passes == 3 ? 2 : 3;
  const int64_t kt_count = K > 0 ? Kp / 128 : 0;
  for (int64_t nt = 0; nt < Np / 128; ++nt) {
    for (int64_t kt = 0; kt < kt_count; ++kt) {
      for (int wp = -1; wp <= 2; ++wp) {
        bool used = false;
        for (auto [lp, p] : prods) used |= p == wp;
        if (!used) continue;
        for (int g = 0; g < 16; ++g) {
          kb.Emit(
              "vld.f32 v0, vmem[" +
              std::to_string(bp + ((kt * 128 + 8 * g) * Np + nt * 128) * 4) +
              "], " + std::to_string(Np * 4));
          if (wp >= 0) Split(kb, 0, 1, parts);
          kb.Emit("mxwpush v" + std::to_string(wp < 0 ? 0 : 1 + wp) + ", " +
                  std::to_string(g));
        }
        const std::string loop = kb.NewLabel("rows");
        kb.Emit("simm s10, 0");
        kb.Emit("simm s11, " + std::to_string(Mp / 8));
        kb.PlaceLabel(loop);
        kb.Emit("smul s12, s10, " + std::to_string(Np * 4));
        kb.Emit("smul s13, s10, " + std::to_string(Kp * 4));
        kb.Emit("vld.f32 v12, vmem[s12+" + std::to_string(cp + nt * 512) +
                "], " + std::to_string(Np * 4));
        kb.Emit("vld.f32 v8, vmem[s13+" + std::to_string(ap + kt * 512) +
                "], " + std::to_string(Kp * 4));
        if (parts > 0) Split(kb, 8, 9, parts);
        for (auto [lp, p] : prods) {
          if (p != wp) continue;
          kb.Emit("mxmatmulacc v12, v" + std::to_string(lp < 0 ? 8 : 9 + lp));
        }
        kb.Emit("vst.f32 vmem[s12+" + std::to_string(cp + nt * 512) +
                "], v12, " + std::to_string(Np * 4));
        kb.Emit("sadd s10, s10, 8");
        kb.Emit("sloop s11, " + loop);
      }
    }
  }
  GatherSource sc{cp, "f32", 0, {Np, 1}, {}};
  EmitGather(kb, {M, N}, {sc}, vo, out.dtype, "f32");
  kb.DmaOut(out.name, vo, out.bytes);
  return Status::Ok();
}

}  // namespace trench::codegen
