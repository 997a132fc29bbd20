// dot with general dimension numbers (any batch, contracting and free dims
// in any operand order, or none: an outer product) for every element type.
//
// Operands are staged into the canonical zero-padded batched form of
// emit_dot_internal.h by index-mapped gathers: directly when each operand
// has at most one free and one contracting dim (the gather's affine index
// map does the transpose), else through a dense transpose into
// [batch.., free.., contracting..] (lhs) / [batch.., contracting.., free..]
// (rhs) first, which flattens the dims.
//
// Operands are converted to the result type while staged (the oracle's and
// XLA's evaluator's semantics, oracle/dot.cc). Then:
//  * f32, bf16, f16 results run on the matrix unit (bf16 operand tiles, f32
//    accumulation) with operand_precision: DEFAULT one pass, HIGH bf16x3,
//    HIGHEST bf16x6; operands whose values are all bf16-exact (bf16, s8,
//    u8, pred, or converted to a bf16 result) take one exact pass. The f32
//    accumulator is rounded once to the result type.
//  * f64 and integer results (and pred: OR of ANDs, as sums of 0/1
//    products) run on the vector unit in the result's lane type: f64 sums
//    products in k order without FMA, integers wrap (narrow results keep
//    the low bits at the final store), so they match the oracle exactly.
// Operand conversion f64/s64 -> bf16/f16 goes through f32 (a double
// rounding only at exact f32 ties).
// When the whole dot does not fit in the VMEM left, a dot whose operands
// have at most one free and one contracting dim each (any batch dims) is
// tiled over batch, M, N and K (emit_dot_tiled.cc); other dots (several
// free or contracting dims in one operand) report ResourceExhausted.
#include <algorithm>

#include "compiler/codegen/emit_dot_internal.h"

namespace trench::codegen {
namespace {

using dot_internal::DotShape;

constexpr int kMaxRank = 8;

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    s[d] = s[d + 1] * dims[d + 1];
  }
  return s;
}

std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> f;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) ==
            contracting.end()) {
      f.push_back(d);
    }
  }
  return f;
}

int64_t Product(const std::vector<int64_t>& dims,
                const std::vector<int64_t>& which) {
  int64_t p = 1;
  for (int64_t d : which) p *= dims[d];
  return p;
}

// One operand's role: dims in canonical order (batch, then the two matrix
// dims: (free, contracting) for lhs, (contracting, free) for rhs).
struct OperandRole {
  std::vector<int64_t> batch, first, second;
};

// Stages `in` (already DMA'd to `in_vmem`) into the canonical padded
// [batch][rows_p][cols_p] array at `out_vmem` (memory type `mem`, lanes
// `lane`): rows/cols = products of role.first/role.second.
void Stage(KernelBuilder& kb, const ArrayBuffer& in, int64_t in_vmem,
           const OperandRole& role, int64_t rows_p, int64_t cols_p,
           int64_t out_vmem, const std::string& mem, const std::string& lane) {
  const std::vector<int64_t> st = RowMajorStrides(in.dims);
  const int64_t rows = Product(in.dims, role.first);
  const int64_t cols = Product(in.dims, role.second);
  GatherSource src;
  src.vmem = in_vmem;
  src.mem = in.dtype;
  std::vector<int64_t> out_dims;
  const bool direct = role.first.size() <= 1 && role.second.size() <= 1;
  if (direct) {
    for (int64_t d : role.batch) {
      out_dims.push_back(in.dims[d]);
      src.coeff.push_back(st[d]);
    }
  } else {
    // Dense transpose into [batch.., first.., second..] (flattened view
    // [batch][rows][cols]); it keeps the operand's memory type.
    std::vector<int64_t> perm = role.batch;
    perm.insert(perm.end(), role.first.begin(), role.first.end());
    perm.insert(perm.end(), role.second.begin(), role.second.end());
    std::vector<int64_t> tdims;
    GatherSource t{in_vmem, in.dtype, 0, {}, {}};
    for (int64_t d : perm) {
      tdims.push_back(in.dims[d]);
      t.coeff.push_back(st[d]);
    }
    const int64_t tv = kb.AllocVmem(in.bytes);
    EmitGather(kb, tdims, {t}, tv, in.dtype, LaneType(in.dtype));
    src.vmem = tv;
    const int64_t batch = Product(in.dims, role.batch);
    out_dims.push_back(batch);
    src.coeff.push_back(rows * cols);
  }
  const int nb = static_cast<int>(out_dims.size());
  out_dims.push_back(rows_p);
  out_dims.push_back(cols_p);
  if (direct) {
    src.coeff.push_back(role.first.empty() ? 0 : st[role.first[0]]);
    src.coeff.push_back(role.second.empty() ? 0 : st[role.second[0]]);
  } else {
    src.coeff.push_back(cols);
    src.coeff.push_back(1);
  }
  if (rows < rows_p) src.ranges.push_back({nb, 0, rows});
  if (cols < cols_p) src.ranges.push_back({nb + 1, 0, cols});
  dot_internal::EmitConvertingGather(kb, out_dims, src, out_vmem, mem,
                                     LaneType(in.dtype), lane);
}

}  // namespace

namespace dot_internal {

DotTypes ChooseTypes(const HloInstruction& instr, const std::string& a,
                     const std::string& b, const std::string& out) {
  DotTypes t;
  t.mxu = out == "f32" || out == "bf16" || out == "f16";
  t.lane = t.mxu ? "f32" : LaneType(out);
  t.mem = t.mxu ? out : t.lane;
  t.esz = t.lane == "f64" || t.lane == "s64" || t.lane == "u64" ? 8
          : t.mem == "bf16" || t.mem == "f16"                   ? 2
                                                                : 4;
  t.ce = t.mxu ? 4 : t.esz;
  for (Precision p : instr.attrs().operand_precision) {
    t.passes = std::max(t.passes, p == Precision::kHighest ? 6
                                  : p == Precision::kHigh  ? 3
                                                           : 1);
  }
  // Values exactly representable in bf16 multiply exactly in one pass.
  auto exact = [&](const std::string& x) {
    return t.mem == "bf16" || x == "bf16" || x == "s8" || x == "u8" ||
           x == "pred";
  };
  if (exact(a) && exact(b)) t.passes = 1;
  return t;
}

}  // namespace dot_internal

Status EmitDot(const HloInstruction& instr, const BufferPlan& plan,
               KernelBuilder& kb) {
  ArrayBuffer a = plan.Array(instr.operand(0));
  ArrayBuffer b = plan.Array(instr.operand(1));
  ArrayBuffer out = plan.Array(&instr);
  const std::string types = a.dtype + " x " + b.dtype + " -> " + out.dtype;
  if (LaneType(a.dtype).empty() || LaneType(b.dtype).empty() ||
      LaneType(out.dtype).empty()) {
    return CannotCompile(instr, types);
  }
  if (a.dims.size() > kMaxRank || b.dims.size() > kMaxRank) {
    return CannotCompile(instr, types + " (operand rank > 8)");
  }
  const DotDimNumbers dn = instr.attrs().dot_dnums.value_or(DotDimNumbers{});
  if (dn.lhs_batch.size() != dn.rhs_batch.size() ||
      dn.lhs_contracting.size() != dn.rhs_contracting.size() ||
      dn.lhs_batch.size() > kMaxRank - 2) {
    return CannotCompile(instr, types + " (dimension numbers)");
  }
  const int64_t la = a.dims.size(), lb = b.dims.size();
  const OperandRole lrole{dn.lhs_batch,
                          FreeDims(la, dn.lhs_batch, dn.lhs_contracting),
                          dn.lhs_contracting};
  const OperandRole rrole{dn.rhs_batch, dn.rhs_contracting,
                          FreeDims(lb, dn.rhs_batch, dn.rhs_contracting)};
  DotShape s;
  s.batch = Product(a.dims, dn.lhs_batch);
  s.m = Product(a.dims, lrole.first);
  s.k = Product(a.dims, dn.lhs_contracting);
  s.n = Product(b.dims, rrole.second);
  if (out.elements == 0) return Status::Ok();

  const std::string ot = out.dtype;
  const dot_internal::DotTypes t =
      dot_internal::ChooseTypes(instr, a.dtype, b.dtype, ot);
  const bool mxu = t.mxu;
  const std::string& lane = t.lane;
  const std::string& mem = t.mem;
  const int64_t esz = t.esz, ce = t.ce;
  s.mp = RoundUp(s.m, 8);
  s.np = RoundUp(s.n, 128);
  s.kp = mxu ? RoundUp(std::max<int64_t>(s.k, 1), 128) : s.k;
  auto r = [](int64_t x) { return (x + 511) / 512 * 512; };
  const bool direct = lrole.first.size() <= 1 && lrole.second.size() <= 1 &&
                      rrole.first.size() <= 1 && rrole.second.size() <= 1;
  const int64_t need =
      r(a.bytes) + r(b.bytes) + (direct ? 0 : r(a.bytes) + r(b.bytes)) +
      r(s.batch * s.mp * s.kp * esz) + r(s.batch * s.kp * s.np * esz) +
      r(s.batch * s.mp * s.np * ce) + r(out.bytes);
  if (kb.vmem_used() + need > kb.vmem_capacity() &&
      dot_internal::TiledDotSupported(instr, la, lb)) {
    return dot_internal::EmitTiledDot(instr, a, b, out, t, kb);
  }

  const int64_t va = kb.AllocVmem(a.bytes), vb = kb.AllocVmem(b.bytes);
  const int64_t ap = kb.AllocVmem(s.batch * s.mp * s.kp * esz);
  const int64_t bp = kb.AllocVmem(s.batch * s.kp * s.np * esz);
  const int64_t cp = kb.AllocVmem(s.batch * s.mp * s.np * ce);
  const int64_t vo = kb.AllocVmem(out.bytes);
  if (s.k > 0) {
    kb.DmaIn(va, a.name, a.bytes);
    kb.DmaIn(vb, b.name, b.bytes);
    Stage(kb, a, va, lrole, s.mp, s.kp, ap, mem, lane);
    Stage(kb, b, vb, rrole, s.kp, s.np, bp, mem, lane);
  }
  if (mxu) {
    EmitGather(kb, {s.batch * s.mp * s.np}, {}, cp, "f32", "f32");  // C = 0.
    if (s.k > 0) {
      dot_internal::EmitMatrixUnitDot(kb, s, mem, ap, bp, cp, t.passes);
    }
  } else {
    dot_internal::EmitVectorUnitDot(kb, s, lane, ap, bp, cp);
  }
  GatherSource sc{cp, mxu ? "f32" : lane, 0, {s.mp * s.np, s.np, 1}, {}};
  EmitGather(kb, {s.batch, s.m, s.n}, {sc}, vo, ot, lane);
  kb.DmaOut(out.name, vo, out.bytes);
  return Status::Ok();
}

}  // namespace trench::codegen
