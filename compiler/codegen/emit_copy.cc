// reshape, bitcast and copy: every buffer of the code generator is a dense
// row-major array (layouts are logical only), so reshape, copy and a
// bitcast between default layouts are one HBM-to-HBM DMA of the operand's
// bytes. A bitcast with other layouts reinterprets the *physical* bytes
// (XLA's evaluator: memcpy of the physical buffers, which the oracle
// follows): operand logical -> operand physical (a transpose) -> the same
// bytes viewed as the result's physical array -> result logical (another
// transpose), each an index-mapped gather in VMEM. The element type may
// change as long as the result needs no more bytes than the operand.
#include <algorithm>

#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

// Dimensions in physical order, most major first.
std::vector<int64_t> MajorToMinor(const Shape& s) {
  std::vector<int64_t> m = s.minor_to_major();
  std::reverse(m.begin(), m.end());
  return m;
}

bool IsIdentity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool IsPermutation(const std::vector<int64_t>& p, size_t rank) {
  if (p.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t d : p) {
    if (d < 0 || d >= static_cast<int64_t>(rank) || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

}  // namespace

Status EmitCopy(const HloInstruction& instr, const BufferPlan& plan,
                KernelBuilder& kb) {
  ArrayBuffer in = plan.Array(instr.operand(0));
  ArrayBuffer out = plan.Array(&instr);
  const bool bitcast = instr.opcode() == HloOpcode::kBitcast;
  if (bitcast ? out.bytes > in.bytes
              : in.dtype != out.dtype || in.bytes != out.bytes) {
    return CannotCompile(instr, in.dtype + " -> " + out.dtype);
  }
  // In place (the buffer plan may give a copy its operand's buffer): the
  // bytes are already there.
  if (out.bytes == 0 || (!bitcast && in.name == out.name)) return Status::Ok();
  std::vector<int64_t> in_m2m = MajorToMinor(instr.operand(0)->shape());
  std::vector<int64_t> out_m2m = MajorToMinor(instr.shape());
  if (!bitcast || (IsIdentity(in_m2m) && IsIdentity(out_m2m))) {
    kb.Emit("saddr s1, " + in.name);
    kb.Emit("saddr s2, " + out.name);
    kb.Emit("dmastart hbm[s2], hbm[s1], " + std::to_string(out.bytes) + ", 0");
    kb.Emit("dmawait 0");
    return Status::Ok();
  }
  if (!IsPermutation(in_m2m, in.dims.size()) ||
      !IsPermutation(out_m2m, out.dims.size())) {
    return CannotCompile(instr, "layout that is not a permutation");
  }
  if (in.dims.size() > 8 || out.dims.size() > 8) {
    return CannotCompile(instr, "rank > 8");
  }
  // The operand's physical bytes in VMEM.
  const int64_t phys = kb.AllocVmem(in.bytes);
  if (IsIdentity(in_m2m)) {
    kb.DmaIn(phys, in.name, in.bytes);
  } else {
    const int64_t staged = kb.AllocVmem(in.bytes);
    kb.DmaIn(staged, in.name, in.bytes);
    const std::vector<int64_t> st = dm::RowMajorStrides(in.dims);
    std::vector<int64_t> pdims;
    GatherSource src{staged, dm::MoveType(in.dtype), 0, {}, {}};
    for (int64_t d : in_m2m) {
      pdims.push_back(in.dims[d]);
      src.coeff.push_back(st[d]);
    }
    EmitGather(kb, pdims, {src}, phys, src.mem, dm::MoveLane(in.dtype));
  }
  // Result logical dim out_m2m[j] is physical dim j.
  std::vector<int64_t> pdims;
  for (int64_t d : out_m2m) pdims.push_back(out.dims[d]);
  const std::vector<int64_t> pst = dm::RowMajorStrides(pdims);
  GatherSource src{phys, dm::MoveType(out.dtype), 0, {}, {}};
  src.coeff.assign(out.dims.size(), 0);
  for (size_t j = 0; j < out_m2m.size(); ++j) src.coeff[out_m2m[j]] = pst[j];
  const int64_t out_vmem = kb.AllocVmem(out.bytes);
  EmitGather(kb, out.dims, {src}, out_vmem, src.mem, dm::MoveLane(out.dtype));
  kb.DmaOut(out.name, out_vmem, out.bytes);
  return Status::Ok();
}

}  // namespace trench::codegen
