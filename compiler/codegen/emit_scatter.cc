// scatter with XLA's general dimension numbers (operation_semantics.md,
// Scatter; the oracle's EvalScatter, which follows XLA's evaluator): the
// results start as copies of the operands (staged in VMEM); the update
// elements are applied in the oracle's order, scatter positions row-major
// and, within each, the update window row-major, with
// result[target] = to_apply(result[target], update) for the N operands at
// once. A window whose start is out of bounds in any dim (start < 0 or
// start > dim - window size; starts are NOT clamped) is skipped whole.
//
// Vectorized, with conflicts resolved in order: each tile of 1024 update
// elements in application order is laid out REVERSED over the lanes (lane
// L holds element base + 1023 - L), so when several lanes target one
// element, vscatter's "highest lane wins" picks the earliest of them.
// Rounds: every pending lane scatters its lane id to a scratch array at its
// target and gathers it back; the lanes that read their own id (one per
// target, the earliest pending) apply the combiner (gather the result,
// EmitScalarComputation, scatter it back) and leave the pending set; repeat
// until none is pending (a vector max stored and read back by the scalar
// unit). Distinct targets commute, and each target sees its updates in
// order, so duplicates agree with the oracle bit for bit.
// indices_are_sorted / unique_indices are accepted and not relied on.
// When the staged arrays do not fit in VMEM, the results stay in HBM and
// are updated window by window instead (stream_scatter.h).
#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/codegen/stream_scatter.h"
#include "compiler/codegen/vector_ops.h"
#include "compiler/ir/dtype.h"

namespace trench::codegen {
namespace {

// v<acc> += v<coord> * factor (v14, v13 scratch).
void AddScaled(KernelBuilder& kb, int acc, int coord, int64_t factor) {
  dm::EmitAddScaled(kb, acc, coord, factor, 13);
}

}  // namespace

Status EmitScatterOp(const HloInstruction& instr, const BufferPlan& plan,
                     KernelBuilder& kb) {
  const int64_t nops = instr.operand_count();
  if (!instr.attrs().scatter_dnums.has_value() || nops < 3 || nops % 2 != 1 ||
      instr.called_computations().empty()) {
    return CannotCompile(instr, "malformed scatter");
  }
  const ScatterDimNumbers& dn = *instr.attrs().scatter_dnums;
  const int n = static_cast<int>(nops / 2);
  std::vector<ArrayBuffer> ops, upds, outs;
  for (int i = 0; i < n; ++i) {
    ops.push_back(plan.Array(instr.operand(i)));
    upds.push_back(plan.Array(instr.operand(n + 1 + i)));
    outs.push_back(plan.LeafArray(&instr, i));
    if (ops[i].dims != ops[0].dims || upds[i].dims != upds[0].dims ||
        ops[i].dtype != outs[i].dtype || upds[i].dtype != outs[i].dtype) {
      return CannotCompile(instr, "malformed scatter");
    }
  }
  ArrayBuffer idx = plan.Array(instr.operand(n));
  if (!IsInteger(*PrimitiveTypeFromName(idx.dtype))) {
    return CannotCompile(instr, idx.dtype + " indices");
  }
  RETURN_IF_ERROR(CheckScalarComputation(instr, *instr.to_apply()));
  const std::vector<int64_t>& odims = ops[0].dims;
  const std::vector<int64_t>& udims = upds[0].dims;
  const int64_t orank = odims.size(), urank = udims.size();
  const int64_t irank = idx.dims.size();
  const int64_t ivd = dn.index_vector_dim;
  if (ivd < 0 || ivd > irank ||
      !dm::DimsInRange(dn.scatter_dims_to_operand_dims, orank) ||
      !dm::DimsInRange(dn.inserted_window_dims, orank) ||
      !dm::DimsInRange(dn.input_batching_dims, orank) ||
      !dm::DimsInRange(dn.update_window_dims, urank) ||
      !dm::DimsInRange(dn.scatter_indices_batching_dims, irank)) {
    return CannotCompile(instr, "malformed scatter");
  }
  const int64_t vec_len = ivd == irank ? 1 : idx.dims.at(ivd);
  const std::vector<int64_t> window_operand_dims =
      dm::DimsExcept(orank, dn.inserted_window_dims, dn.input_batching_dims);
  const std::vector<int64_t> index_dims = dm::DimsExcept(irank, {ivd});
  const std::vector<int64_t> scatter_udims =
      dm::DimsExcept(urank, dn.update_window_dims);
  if (window_operand_dims.size() != dn.update_window_dims.size() ||
      index_dims.size() != scatter_udims.size() ||
      static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) != vec_len ||
      dn.input_batching_dims.size() !=
          dn.scatter_indices_batching_dims.size()) {
    return CannotCompile(instr, "malformed scatter");
  }
  // Element order: scatter positions (update scatter dims), then the window.
  std::vector<int64_t> cdims;
  for (int64_t d : scatter_udims) cdims.push_back(udims[d]);
  std::vector<int64_t> wsize(orank, 1);
  for (size_t j = 0; j < window_operand_dims.size(); ++j) {
    cdims.push_back(udims[dn.update_window_dims[j]]);
    wsize[window_operand_dims[j]] = udims[dn.update_window_dims[j]];
  }
  if (cdims.size() > 8 || orank > 8) return CannotCompile(instr, "rank > 8");
  const int64_t total = dm::Product(cdims);
  if (outs[0].elements == 0) return Status::Ok();
  if (total == 0 || ops[0].elements == 0) {  // Nothing applies: copies.
    for (int i = 0; i < n; ++i) {
      kb.Emit("saddr s1, " + ops[i].name);
      kb.Emit("saddr s2, " + outs[i].name);
      kb.Emit("dmastart hbm[s2], hbm[s1], " + I(outs[i].bytes) + ", 0");
      kb.Emit("dmawait 0");
    }
    return Status::Ok();
  }
  if (!ScatterFitsStaged(kb, {ops, upds, outs, idx})) {
    return EmitScatterByWindows(instr, {ops, upds, outs, idx}, kb);
  }
  const int nsc = static_cast<int>(scatter_udims.size());
  const std::vector<int64_t> ostr = dm::RowMajorStrides(odims);
  const std::vector<int64_t> ustr = dm::RowMajorStrides(udims);
  const std::vector<int64_t> istr = dm::RowMajorStrides(idx.dims);
  std::vector<int64_t> res_vmem(n), upd_vmem(n);
  for (int i = 0; i < n; ++i) {
    res_vmem[i] = kb.AllocVmem(outs[i].bytes);
    kb.DmaIn(res_vmem[i], ops[i].name, ops[i].bytes);
    upd_vmem[i] = kb.AllocVmem(upds[i].bytes);
    kb.DmaIn(upd_vmem[i], upds[i].name, upds[i].bytes);
  }
  const int64_t idx_vmem = kb.AllocVmem(idx.bytes);
  kb.DmaIn(idx_vmem, idx.name, idx.bytes);
  const int64_t scratch = kb.AllocVmem(ops[0].elements * 4);
  const int64_t flag = kb.AllocVmem(4);

  kb.Emit("simm s28, 1");
  kb.Emit("mbox m7, s28, s28");  // Lane 0 only.
  kb.Emit("simm s21, " + I(total));
  kb.Emit("simm s20, 0");
  const std::string tile = kb.NewLabel("scatter_tile");
  kb.PlaceLabel(tile);
  // v31 = element index (reversed lanes), m4 = valid, v18 = lane id.
  kb.Emit("viota v18, 2");
  kb.Splat(31, "s32", "1023");
  kb.Emit("vsub.s32 v31, v31, v18");
  kb.Emit("vbcast.s32 v30, s20");
  kb.Emit("vadd.s32 v31, v31, v30");
  kb.Emit("vbcast.s32 v30, s21");
  kb.Emit("vcmplt.s32 m4, v31, v30");
  EmitCoordinates(kb, cdims);  // v2.. = positions, then window coords.
  // v10 = index-array element of (position, 0); v11 = update element;
  // v12 = target element of the operand.
  kb.Splat(10, "s32", "0");
  kb.Splat(11, "s32", "0");
  kb.Splat(12, "s32", "0");
  for (int i = 0; i < nsc; ++i) {
    AddScaled(kb, 10, 2 + i, istr[index_dims[i]]);
    AddScaled(kb, 11, 2 + i, ustr[scatter_udims[i]]);
  }
  for (size_t j = 0; j < window_operand_dims.size(); ++j) {
    const int c = 2 + nsc + static_cast<int>(j);
    AddScaled(kb, 11, c, ustr[dn.update_window_dims[j]]);
    AddScaled(kb, 12, c, ostr[window_operand_dims[j]]);
  }
  for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
    const int64_t pos =
        dm::IndexOf(index_dims, dn.scatter_indices_batching_dims[i]);
    if (pos >= nsc) return CannotCompile(instr, "malformed batching dims");
    AddScaled(kb, 12, 2 + static_cast<int>(pos),
              ostr[dn.input_batching_dims[i]]);
  }
  for (int64_t k = 0; k < vec_len; ++k) {
    const int64_t d = dn.scatter_dims_to_operand_dims[k];
    dm::EmitLoadIndexComponent(kb, idx, idx_vmem, ivd, k, 10, 4);
    dm::EmitAndIndexInBounds(kb, idx.dtype, odims[d] - wsize[d]);
    AddScaled(kb, 12, 16, ostr[d]);
  }
  // Registers live through the rounds: v11, v12, v13, v18, the updates
  // and the current values (pool).
  VRegPool pool;
  for (int r : {11, 12, 13, 18}) pool.Reserve(r, false);
  std::vector<int> params(2 * n);
  for (int i = 0; i < 2 * n; ++i) {
    StatusOr<int> r = pool.AllocN(RegCount(outs[i % n].dtype));
    if (!r.ok()) return CannotCompile(instr, "too many operands");
    params[i] = *r;
  }
  for (int i = 0; i < n; ++i) {
    kb.Gather(params[n + i], upds[i].dtype, "vmem[" + I(upd_vmem[i]) + "]", 11,
              "m4");
  }
  const std::string round = kb.NewLabel("scatter_round");
  kb.PlaceLabel(round);
  kb.Emit("vscatter.s32 vmem[" + I(scratch) + "], v12, v18 @m4");
  kb.Emit("vgather.s32 v13, vmem[" + I(scratch) + "], v12 @m4");
  kb.Emit("vcmpeq.s32 m5, v13, v18");
  kb.Emit("mand m5, m5, m4");
  for (int i = 0; i < n; ++i) {
    kb.Gather(params[i], outs[i].dtype, "vmem[" + I(res_vmem[i]) + "]", 12,
              "m5");
  }
  std::vector<int> results(params.begin(), params.begin() + n);
  RETURN_IF_ERROR(EmitScalarComputation(kb, pool, instr, *instr.to_apply(),
                                        params, results));
  for (int i = 0; i < n; ++i) {
    kb.Scatter(outs[i].dtype, "vmem[" + I(res_vmem[i]) + "]", 12, results[i],
               "m5");
  }
  kb.Emit("mnot m6, m5");
  kb.Emit("mand m4, m4, m6");
  kb.Emit("vmtov v13, m4");
  kb.Emit("vlredmax.s32 v13, v13");
  kb.Emit("vsredmax.s32 v13, v13");
  kb.Emit("vst.s32 vmem[" + I(flag) + "], v13 @m7");
  kb.Emit("sld.s32 s9, vmem[" + I(flag) + "]");
  kb.Emit("brnz s9, " + round);
  kb.Emit("sadd s20, s20, 1024");
  kb.Emit("scmplt s22, s20, s21");
  kb.Emit("brnz s22, " + tile);
  for (int i = 0; i < n; ++i) {
    kb.DmaOut(outs[i].name, res_vmem[i], outs[i].bytes);
  }
  return Status::Ok();
}

}  // namespace trench::codegen
