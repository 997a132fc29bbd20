// gather with XLA's general dimension numbers (operation_semantics.md,
// Gather; the oracle's EvalGather): one vector pass over the output tiles.
// For each output element (coordinates c):
//   G = c at the batch dims (the output dims not in offset_dims), which
//       enumerate start_indices with index_vector_dim removed;
//   start[start_index_map[k]] = clamp(S[G..., k], 0, dim - slice_size)
//       (XLA clamps so the whole slice is in bounds), read with a vgather
//       of the index array (any integer type; 64-bit indices are clamped
//       in 64-bit lanes, after which they fit 32 bits);
//   start[operand_batching_dims[i]] = G[start_indices_batching_dims[i]];
//   operand element = start + the offset coordinates (c at offset_dims,
//       in operand dim order over the non-collapsed, non-batching dims),
// and one vgather of the operand (staged in VMEM, bit containers) fetches
// it. indices_are_sorted / unique_indices change nothing here. When the
// operand, indices and result do not fit in VMEM together, the slices move
// HBM to HBM one by one instead (stream_gather_rows.h).
#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/codegen/stream_gather_rows.h"
#include "compiler/ir/dtype.h"

namespace trench::codegen {
namespace {

// v13 += v<coord> * factor (v14, v18 scratch).
void AddScaled(KernelBuilder& kb, int coord, int64_t factor) {
  dm::EmitAddScaled(kb, 13, coord, factor, 18);
}

}  // namespace

Status EmitGatherOp(const HloInstruction& instr, const BufferPlan& plan,
                    KernelBuilder& kb) {
  if (!instr.attrs().gather_dnums.has_value()) {
    return CannotCompile(instr, "missing dimension numbers");
  }
  const GatherDimNumbers& dn = *instr.attrs().gather_dnums;
  const std::vector<int64_t>& sizes = instr.attrs().gather_slice_sizes;
  ArrayBuffer op = plan.Array(instr.operand(0));
  ArrayBuffer idx = plan.Array(instr.operand(1));
  ArrayBuffer out = plan.Array(&instr);
  const int64_t orank = op.dims.size(), irank = idx.dims.size();
  const int64_t out_rank = out.dims.size();
  if (orank > 8 || out_rank > 8) return CannotCompile(instr, "rank > 8");
  if (!IsInteger(*PrimitiveTypeFromName(idx.dtype))) {
    return CannotCompile(instr, idx.dtype + " indices");
  }
  if (sizes.size() != static_cast<size_t>(orank) || op.dtype != out.dtype) {
    return CannotCompile(instr, "malformed gather");
  }
  if (out.elements == 0) return Status::Ok();
  const int64_t ivd = dn.index_vector_dim;
  if (ivd < 0 || ivd > irank || !dm::DimsInRange(dn.start_index_map, orank) ||
      !dm::DimsInRange(dn.collapsed_slice_dims, orank) ||
      !dm::DimsInRange(dn.operand_batching_dims, orank) ||
      !dm::DimsInRange(dn.offset_dims, out_rank) ||
      !dm::DimsInRange(dn.start_indices_batching_dims, irank)) {
    return CannotCompile(instr, "malformed gather");
  }
  const int64_t vec_len = ivd == irank ? 1 : idx.dims.at(ivd);
  // Index dim of each batch dim.
  const std::vector<int64_t> batch_src = dm::DimsExcept(irank, {ivd});
  // Operand dims kept in the slice.
  const std::vector<int64_t> window_dims =
      dm::DimsExcept(orank, dn.collapsed_slice_dims, dn.operand_batching_dims);
  // Output dim of each batch dim.
  const std::vector<int64_t> out_batch_pos =
      dm::DimsExcept(out_rank, dn.offset_dims);
  if (window_dims.size() != dn.offset_dims.size() ||
      out_batch_pos.size() != batch_src.size() ||
      static_cast<int64_t>(dn.start_index_map.size()) != vec_len ||
      dn.operand_batching_dims.size() !=
          dn.start_indices_batching_dims.size()) {
    return CannotCompile(instr, "malformed gather");
  }
  if (!GatherFitsStaged(kb, op, idx, out)) {
    return EmitGatherByRows(instr, op, idx, out, kb);
  }
  const std::string mem = dm::MoveType(op.dtype);
  const std::vector<int64_t> ostr = dm::RowMajorStrides(op.dims);
  const std::vector<int64_t> istr = dm::RowMajorStrides(idx.dims);
  const int64_t op_vmem = kb.AllocVmem(op.bytes);
  const int64_t idx_vmem = kb.AllocVmem(idx.bytes);
  const int64_t out_vmem = kb.AllocVmem(out.bytes);
  kb.DmaIn(op_vmem, op.name, op.bytes);
  kb.DmaIn(idx_vmem, idx.name, idx.bytes);
  kb.BeginLinearTiles(out.elements);
  kb.LinearIndex();
  EmitCoordinates(kb, out.dims);
  // v12 = index-array element of (G, 0); v13 = operand element.
  kb.Splat(12, "s32", "0");
  for (size_t i = 0; i < batch_src.size(); ++i) {
    dm::EmitAddScaled(kb, 12, 2 + static_cast<int>(out_batch_pos[i]),
                      istr[batch_src[i]], 18);
  }
  kb.Splat(13, "s32", "0");
  for (size_t i = 0; i < window_dims.size(); ++i) {
    AddScaled(kb, 2 + static_cast<int>(dn.offset_dims[i]),
              ostr[window_dims[i]]);
  }
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
    const int64_t pos =
        dm::IndexOf(batch_src, dn.start_indices_batching_dims[i]);
    if (pos >= static_cast<int64_t>(batch_src.size())) {
      return CannotCompile(instr, "malformed batching dims");
    }
    AddScaled(kb, 2 + static_cast<int>(out_batch_pos[pos]),
              ostr[dn.operand_batching_dims[i]]);
  }
  for (int64_t k = 0; k < vec_len; ++k) {
    const int64_t d = dn.start_index_map[k];
    dm::EmitLoadIndexComponent(kb, idx, idx_vmem, ivd, k, 12, 0);
    dm::EmitClampIndexLanes(kb, idx.dtype, op.dims[d] - sizes[d]);
    AddScaled(kb, 16, ostr[d]);
  }
  // c128: a quad v0..v3 (the coordinates in v2, v3 are no longer needed).
  kb.Gather(0, mem, "vmem[" + std::to_string(op_vmem) + "]", 13, "m0");
  kb.StoreTile(mem, out_vmem, 0);
  kb.EndLinearTiles();
  kb.DmaOut(out.name, out_vmem, out.bytes);
  return Status::Ok();
}

}  // namespace trench::codegen
