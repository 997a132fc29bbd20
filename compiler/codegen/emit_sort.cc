// sort: N operands sorted together along one dimension by any comparator
// computation, stable.
//
// Each lane sorts one row (one position of the other dimensions) with a
// bottom-up merge sort of a permutation array, the same algorithm as the
// oracle (oracle/sort.cc): a merge takes the right element only when
// less(right, left), so equal elements keep their order (stable), and even
// an inconsistent comparator (NaN-unaware LT) reorders exactly as the
// oracle does. The block structure of every merge pass depends only on the
// row length, so all lanes run the same scalar loops; each lane keeps its
// own merge cursors i, j in vector registers and reads keys by gather.
// The comparator runs lane-wise (EmitVectorOp) on the 2N gathered values.
// Finally every operand is permuted by gather + scatter.
//
// Permutations live in VMEM as s32 [length][rows] (lane-contiguous).
// Complex operands are gathered as register pairs (c64) or quads (c128,
// KernelBuilder::Gather); the comparator sees them as complex values.
// Operands too large to stage whole are sorted tile by tile
// (stream_sort.h) with the same row sort (EmitSortTile).
#include <algorithm>

#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/codegen/stream_sort.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

// s0 = (s_pos * rows + s20) * 4: the byte offset of element `s_pos` of the
// current tile in a [length][rows] s32 array.
void PermOffset(KernelBuilder& kb, const std::string& s_pos, int64_t rows) {
  kb.Emit("smul s0, " + s_pos + ", " + std::to_string(rows));
  kb.Emit("sadd s0, s0, s20");
  kb.Emit("smul s0, s0, 4");
}

}  // namespace

Status EmitSort(const HloInstruction& instr, const BufferPlan& plan,
                KernelBuilder& kb) {
  const int64_t n = instr.operand_count();
  if (n == 0 || instr.dimensions().size() != 1) {
    return CannotCompile(instr, "a malformed sort");
  }
  std::vector<ArrayBuffer> ins;
  for (int64_t i = 0; i < n; ++i) ins.push_back(plan.Array(instr.operand(i)));
  const std::vector<ArrayBuffer> outs = LeafBuffers(plan, &instr);
  if (static_cast<int64_t>(outs.size()) != n) {
    return CannotCompile(instr, "a nested tuple result");
  }
  for (int64_t i = 0; i < n; ++i) {
    if (LaneType(ins[i].dtype).empty() && ins[i].dtype != "c64" &&
        ins[i].dtype != "c128") {
      return CannotCompile(instr, ins[i].dtype);
    }
  }
  const std::vector<int64_t>& dims = ins[0].dims;
  const int64_t rank = dims.size();
  const int64_t sd = instr.dimensions()[0];
  if (sd < 0 || sd >= rank) return CannotCompile(instr, "a scalar sort");
  const HloComputation& comp = *instr.to_apply();
  if (comp.num_parameters() != 2 * n) {
    return CannotCompile(instr, "a comparator of the wrong arity");
  }
  RETURN_IF_ERROR(CheckScalarComputation(instr, comp));
  const int64_t total = Product(dims);
  if (total == 0) return Status::Ok();
  if (total > (int64_t{1} << 30))
    return CannotCompile(instr, "> 2^30 elements");
  SortTile t;
  t.len = dims[sd];
  for (int64_t d = sd + 1; d < rank; ++d) t.inner *= dims[d];
  t.outer = total / t.len / t.inner;
  for (int64_t i = 0; i < n; ++i) t.dtypes.push_back(ins[i].dtype);
  if (SortTileBytes(t.dtypes, total) > kb.vmem_capacity() - kb.vmem_used()) {
    return EmitStreamedSort(instr, ins, outs, t, kb);
  }
  for (int64_t i = 0; i < n; ++i) {
    t.in_vmem.push_back(kb.AllocVmem(ins[i].bytes));
    kb.DmaIn(t.in_vmem.back(), ins[i].name, ins[i].bytes);
  }
  t.perm[0] = kb.AllocVmem(total * 4);
  t.perm[1] = kb.AllocVmem(total * 4);
  for (int64_t i = 0; i < n; ++i) {
    t.out_vmem.push_back(kb.AllocVmem(outs[i].bytes));
  }
  RETURN_IF_ERROR(EmitSortTile(kb, instr, t));
  for (int64_t i = 0; i < n; ++i) {
    kb.DmaOut(outs[i].name, t.out_vmem[i], outs[i].bytes);
  }
  return Status::Ok();
}

int64_t SortTileBytes(const std::vector<std::string>& dtypes,
                      int64_t elements) {
  auto aligned = [](int64_t b) { return (b + 511) / 512 * 512; };
  int64_t bytes = 2 * aligned(elements * 4);
  for (const std::string& t : dtypes) {
    bytes += 2 * aligned(elements * MemTypeBytes(MemType(t)));
  }
  return bytes;
}

Status EmitSortTile(KernelBuilder& kb, const HloInstruction& instr,
                    const SortTile& t) {
  const int64_t n = t.dtypes.size();
  const int64_t len = t.len, inner = t.inner, outer = t.outer;
  const int64_t rows = outer * inner;
  const std::vector<int64_t>& in_vmem = t.in_vmem;
  const std::vector<int64_t>& out_vmem = t.out_vmem;
  const int64_t* perm = t.perm;
  const HloComputation& comp = *instr.to_apply();
  VRegPool pool;
  ASSIGN_OR_RETURN(int rowbase, pool.Alloc(false));
  ASSIGN_OR_RETURN(int tmp, pool.Alloc(false));
  ASSIGN_OR_RETURN(int vi, pool.Alloc(false));
  ASSIGN_OR_RETURN(int vj, pool.Alloc(false));
  ASSIGN_OR_RETURN(int ia, pool.Alloc(false));
  ASSIGN_OR_RETURN(int ja, pool.Alloc(false));
  ASSIGN_OR_RETURN(int flag, pool.Alloc(false));
  // The comparator's parameters (lhs_0, rhs_0, lhs_1, ...) are gathered
  // where it first reads each and held until its last read
  // (EmitScalarComputation's loader), so a comparator over many operands
  // (a lexicographic compare of many keys) holds only those in use. The
  // final permute moves one operand at a time through `moved`.
  const std::vector<int> params(2 * n, -1);
  int widest = 1;
  for (int64_t i = 0; i < n; ++i) {
    widest = std::max(widest, RegCount(t.dtypes[i]));
  }
  // Element `pos_reg` (s32 row position) of operand i: rowbase + pos*inner.
  auto element_index = [&](int pos_reg, int dst) {
    if (inner == 1) {
      kb.Emit("vadd.s32 " + VReg(dst) + ", " + VReg(rowbase) + ", " +
              VReg(pos_reg));
    } else {
      kb.Splat(28, "s32", std::to_string(inner));
      kb.Emit("vmul.s32 " + VReg(dst) + ", " + VReg(pos_reg) + ", v28");
      kb.Emit("vadd.s32 " + VReg(dst) + ", " + VReg(dst) + ", " +
              VReg(rowbase));
    }
  };
  // dst = perm[pos * rows + lane row] (gather under `mask`).
  auto perm_gather = [&](int64_t base, int pos_reg, int dst, int mask) {
    kb.Splat(28, "s32", std::to_string(rows));
    kb.Emit("vmul.s32 " + VReg(tmp) + ", " + VReg(pos_reg) + ", v28");
    kb.Emit("vadd.s32 " + VReg(tmp) + ", " + VReg(tmp) + ", v31");
    kb.Emit("vgather.s32 " + VReg(dst) + ", vmem[" + std::to_string(base) +
            "], " + VReg(tmp) + " @m" + std::to_string(mask));
  };

  kb.BeginLinearTiles(rows);
  kb.LinearIndex();  // v31: the row of each lane (kept for the kernel).
  EmitIndexFromLinear(kb, 31, {outer, inner}, {len * inner, 1}, 0, rowbase,
                      tmp);
  // perm[0][k] = k.
  kb.Emit("simm s10, 0");
  kb.Emit("simm s1, " + std::to_string(len));
  const std::string init_loop = kb.NewLabel("perm_init");
  kb.PlaceLabel(init_loop);
  kb.Emit("vbcast.s32 " + VReg(tmp) + ", s10");
  PermOffset(kb, "s10", rows);
  kb.Emit("vst.s32 vmem[s0+" + std::to_string(perm[0]) + "], " + VReg(tmp) +
          " @m0");
  kb.Emit("sadd s10, s10, 1");
  kb.Emit("sloop s1, " + init_loop);

  int cur = 0;
  for (int64_t w = 1; w < len; w *= 2, cur ^= 1) {
    const int64_t src = perm[cur], dst = perm[cur ^ 1];
    // Blocks: s11 = lo, s12 = mid, s13 = hi, s2 = blocks left.
    kb.Emit("simm s11, 0");
    kb.Emit("simm s2, " + std::to_string((len + 2 * w - 1) / (2 * w)));
    const std::string block_loop = kb.NewLabel("block");
    const std::string merge_loop = kb.NewLabel("merge");
    kb.PlaceLabel(block_loop);
    kb.Emit("sadd s12, s11, " + std::to_string(w));
    kb.Emit("smin s12, s12, " + std::to_string(len));
    kb.Emit("sadd s13, s11, " + std::to_string(2 * w));
    kb.Emit("smin s13, s13, " + std::to_string(len));
    kb.Emit("vbcast.s32 " + VReg(vi) + ", s11");
    kb.Emit("vbcast.s32 " + VReg(vj) + ", s12");
    kb.Emit("smov s14, s11");      // k: output position.
    kb.Emit("ssub s3, s13, s11");  // Merge steps left (> 0).
    kb.PlaceLabel(merge_loop);
    // m4: i < mid (left not exhausted), m5: j < hi; both within m0.
    kb.Emit("vbcast.s32 v28, s12");
    kb.Emit("vcmplt.s32 m4, " + VReg(vi) + ", v28");
    kb.Emit("mand m4, m4, m0");
    kb.Emit("vbcast.s32 v28, s13");
    kb.Emit("vcmplt.s32 m5, " + VReg(vj) + ", v28");
    kb.Emit("mand m5, m5, m0");
    perm_gather(src, vi, ia, 4);
    perm_gather(src, vj, ja, 5);
    // less(element j, element i): lhs from the right run.
    auto load = [&](int64_t p, int reg) -> Status {
      const int64_t i = p / 2;
      const bool lhs = p % 2 == 0;
      element_index(lhs ? ja : ia, tmp);
      kb.Gather(reg, t.dtypes[i], "vmem[" + std::to_string(in_vmem[i]) + "]",
                tmp, lhs ? "m5" : "m4");
      return Status::Ok();
    };
    RETURN_IF_ERROR(
        EmitScalarComputation(kb, pool, instr, comp, params, {flag}, load));
    // m6 = take j: left exhausted, or j valid and less(j, i).
    kb.Emit("vvtom m7, " + VReg(flag));
    kb.Emit("mand m7, m7, m5");
    kb.Emit("mnot m6, m4");
    kb.Emit("mor m6, m6, m7");
    EmitSelect(kb, "s32", tmp, 6, ja, ia);
    PermOffset(kb, "s14", rows);
    kb.Emit("vst.s32 vmem[s0+" + std::to_string(dst) + "], " + VReg(tmp) +
            " @m0");
    kb.Splat(28, "s32", "1");
    kb.Emit("vadd.s32 " + VReg(tmp) + ", " + VReg(vi) + ", v28");
    EmitSelect(kb, "s32", vi, 6, vi, tmp);
    kb.Emit("vadd.s32 " + VReg(tmp) + ", " + VReg(vj) + ", v28");
    EmitSelect(kb, "s32", vj, 6, tmp, vj);
    kb.Emit("sadd s14, s14, 1");
    kb.Emit("sloop s3, " + merge_loop);
    kb.Emit("sadd s11, s11, " + std::to_string(2 * w));
    kb.Emit("sloop s2, " + block_loop);
  }

  // out_i[row, k] = in_i[row, perm[k]].
  ASSIGN_OR_RETURN(const int moved, pool.AllocN(widest));
  kb.Emit("simm s10, 0");
  kb.Emit("simm s1, " + std::to_string(len));
  const std::string final_loop = kb.NewLabel("permute");
  kb.PlaceLabel(final_loop);
  PermOffset(kb, "s10", rows);
  kb.Emit("vld.s32 " + VReg(ia) + ", vmem[s0+" + std::to_string(perm[cur]) +
          "] @m0");
  element_index(ia, ja);
  kb.Emit("vbcast.s32 " + VReg(vi) + ", s10");
  element_index(vi, vj);
  for (int64_t i = 0; i < n; ++i) {
    kb.Gather(moved, t.dtypes[i], "vmem[" + std::to_string(in_vmem[i]) + "]",
              ja, "m0");
    kb.Scatter(t.dtypes[i], "vmem[" + std::to_string(out_vmem[i]) + "]", vj,
               moved, "m0");
  }
  kb.Emit("sadd s10, s10, 1");
  kb.Emit("sloop s1, " + final_loop);
  kb.EndLinearTiles();
  return Status::Ok();
}

}  // namespace trench::codegen
