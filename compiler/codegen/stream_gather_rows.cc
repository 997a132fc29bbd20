// gather slice by slice, HBM to HBM (stream_gather_rows.h).
#include "compiler/codegen/stream_gather_rows.h"

#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/emitters.h"

namespace trench::codegen {
namespace {

// Slice DMAs in flight before a wait (the machine allows 64).
constexpr int64_t kInFlight = 32;

// s<acc> += s<x> * factor (s5 scratch); nothing when factor is 0.
void AddScaled(KernelBuilder& kb, int acc, int x, int64_t factor) {
  if (factor == 0) return;
  kb.Emit("smul s5, s" + I(x) + ", " + I(factor));
  kb.Emit("sadd s" + I(acc) + ", s" + I(acc) + ", s5");
}

}  // namespace

bool GatherFitsStaged(const KernelBuilder& kb, const ArrayBuffer& op,
                      const ArrayBuffer& idx, const ArrayBuffer& out) {
  return VmemAligned(op.bytes) + VmemAligned(idx.bytes) +
             VmemAligned(out.bytes) <=
         kb.vmem_capacity() - kb.vmem_used();
}

Status EmitGatherByRows(const HloInstruction& instr, const ArrayBuffer& op,
                        const ArrayBuffer& idx, const ArrayBuffer& out,
                        KernelBuilder& kb) {
  const GatherDimNumbers& dn = *instr.attrs().gather_dnums;
  const std::vector<int64_t>& sizes = instr.attrs().gather_slice_sizes;
  const int64_t orank = op.dims.size(), irank = idx.dims.size();
  const int64_t ivd = dn.index_vector_dim;
  const std::vector<int64_t> batch_src = dm::DimsExcept(irank, {ivd});
  const std::vector<int64_t> window_dims =
      dm::DimsExcept(orank, dn.collapsed_slice_dims, dn.operand_batching_dims);
  const std::vector<int64_t> out_batch_pos =
      dm::DimsExcept(out.dims.size(), dn.offset_dims);
  const std::vector<int64_t> ostr = dm::RowMajorStrides(op.dims);
  const std::vector<int64_t> istr = dm::RowMajorStrides(idx.dims);
  const std::vector<int64_t> rstr = dm::RowMajorStrides(out.dims);
  std::vector<int64_t> bdims;
  for (int64_t d : batch_src) bdims.push_back(idx.dims[d]);
  const std::vector<int64_t> bstr = dm::RowMajorStrides(bdims);
  // Operand batching dim of each batch dim (-1: none).
  std::vector<int64_t> batching(batch_src.size(), -1);
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
    const int64_t pos =
        dm::IndexOf(batch_src, dn.start_indices_batching_dims[i]);
    if (pos >= static_cast<int64_t>(batch_src.size())) {
      return CannotCompile(instr, "malformed batching dims");
    }
    batching[pos] = dn.operand_batching_dims[i];
  }
  dm::Box box;
  for (size_t j = 0; j < window_dims.size(); ++j) {
    box.counts.push_back(sizes[window_dims[j]]);
    box.src.push_back(ostr[window_dims[j]]);
    box.dst.push_back(rstr[dn.offset_dims[j]]);
  }
  const int esz = dm::ElemBytes(op.dtype);
  const int isz = dm::ElemBytes(idx.dtype);
  const int64_t positions = dm::Product(bdims);
  if (positions == 0) return Status::Ok();
  // s20 = G, s21 = positions left; per position s1 = source element, s2 =
  // result element, s3 = index element of component 0.
  kb.Emit("simm s20, 0");
  kb.Emit("simm s21, " + I(positions));
  const std::string loop = kb.NewLabel("gather_slice");
  kb.PlaceLabel(loop);
  kb.Emit("simm s1, 0");
  kb.Emit("simm s2, 0");
  kb.Emit("simm s3, 0");
  for (size_t i = 0; i < bdims.size(); ++i) {
    kb.Emit("sdiv s4, s20, " + I(bstr[i]));
    kb.Emit("srem s4, s4, " + I(bdims[i]));
    AddScaled(kb, 2, 4, rstr[out_batch_pos[i]]);
    AddScaled(kb, 3, 4, istr[batch_src[i]]);
    if (batching[i] >= 0) AddScaled(kb, 1, 4, ostr[batching[i]]);
  }
  kb.Emit("saddr s6, " + idx.name);
  for (size_t k = 0; k < dn.start_index_map.size(); ++k) {
    const int64_t d = dn.start_index_map[k];
    const int64_t step = ivd < irank ? istr[ivd] : 0;
    kb.Emit("sadd s7, s3, " + I(static_cast<int64_t>(k) * step));
    kb.Emit("smul s7, s7, " + I(isz));
    kb.Emit("sadd s7, s7, s6");
    kb.Emit("sld." + idx.dtype + " s4, hbm[s7]");
    dm::EmitClampScalar(kb, 4, idx.dtype, op.dims[d] - sizes[d], 8);
    AddScaled(kb, 1, 4, ostr[d]);
  }
  kb.Emit("saddr s6, " + op.name);
  kb.Emit("smul s1, s1, " + I(esz));
  kb.Emit("sadd s1, s1, s6");
  kb.Emit("saddr s6, " + out.name);
  kb.Emit("smul s2, s2, " + I(esz));
  kb.Emit("sadd s2, s2, s6");
  // Slices that are one dmastart stay in flight, kInFlight at a time.
  const bool in_flight =
      dm::EmitBoxDma(kb, {"hbm", 2, 0}, {"hbm", 1, 0}, box, esz, 0, false);
  if (in_flight) {
    const std::string go_on = kb.NewLabel("gather_go_on");
    kb.Emit("srem s4, s20, " + I(kInFlight));
    kb.Emit("scmpeq s4, s4, " + I(kInFlight - 1));
    kb.Emit("brz s4, " + go_on);
    kb.Emit("dmawait 0");
    kb.PlaceLabel(go_on);
  }
  kb.Emit("sadd s20, s20, 1");
  kb.Emit("sloop s21, " + loop);
  if (in_flight && positions % kInFlight != 0) kb.Emit("dmawait 0");
  return Status::Ok();
}

}  // namespace trench::codegen
