// scatter window by window, results in HBM (stream_scatter.h).
#include "compiler/codegen/stream_scatter.h"

#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/codegen/vector_ops.h"

namespace trench::codegen {
namespace {

// s<acc> += s<x> * factor (s5 scratch); nothing when factor is 0.
void AddScaled(KernelBuilder& kb, int acc, int x, int64_t factor) {
  if (factor == 0) return;
  kb.Emit("smul s5, s" + I(x) + ", " + I(factor));
  kb.Emit("sadd s" + I(acc) + ", s" + I(acc) + ", s5");
}

// s6 = HBM address of element s<elem> of `buffer` (elements of `esz`).
void ElementAddress(KernelBuilder& kb, int elem, const std::string& buffer,
                    int esz) {
  kb.Emit("saddr s6, " + buffer);
  kb.Emit("smul s7, s" + I(elem) + ", " + I(esz));
  kb.Emit("sadd s6, s6, s7");
}

// The window geometry: per window dim its size, operand and update
// strides; the scatter positions with their index, update and batching
// strides.
struct Windows {
  dm::Box result, update;  // HBM strides on src; dst set per direction.
  int64_t elements = 1;
  std::vector<int64_t> pdims, pstr, idx_stride, upd_stride, op_stride;
  std::vector<int64_t> wsize;    // Per operand dim (1: inserted, batching).
  int64_t component_stride = 0;  // Between index vector components.
};

StatusOr<Windows> Plan(const HloInstruction& instr, const ScatterBuffers& b) {
  const ScatterDimNumbers& dn = *instr.attrs().scatter_dnums;
  const std::vector<int64_t>& odims = b.ops[0].dims;
  const std::vector<int64_t>& udims = b.upds[0].dims;
  const int64_t irank = b.idx.dims.size();
  const std::vector<int64_t> wdims = dm::DimsExcept(
      odims.size(), dn.inserted_window_dims, dn.input_batching_dims);
  const std::vector<int64_t> index_dims =
      dm::DimsExcept(irank, {dn.index_vector_dim});
  const std::vector<int64_t> sc_udims =
      dm::DimsExcept(udims.size(), dn.update_window_dims);
  const std::vector<int64_t> ostr = dm::RowMajorStrides(odims);
  const std::vector<int64_t> ustr = dm::RowMajorStrides(udims);
  const std::vector<int64_t> istr = dm::RowMajorStrides(b.idx.dims);
  Windows w;
  w.wsize.assign(odims.size(), 1);
  if (dn.index_vector_dim < irank) {
    w.component_stride = istr[dn.index_vector_dim];
  }
  std::vector<int64_t> counts;
  for (size_t j = 0; j < wdims.size(); ++j) {
    counts.push_back(udims[dn.update_window_dims[j]]);
    w.wsize[wdims[j]] = counts.back();
    w.elements *= counts.back();
  }
  const std::vector<int64_t> dense = dm::RowMajorStrides(counts);
  for (size_t j = 0; j < wdims.size(); ++j) {
    w.result.counts.push_back(counts[j]);
    w.result.src.push_back(ostr[wdims[j]]);
    w.result.dst.push_back(dense[j]);
    w.update.counts.push_back(counts[j]);
    w.update.src.push_back(ustr[dn.update_window_dims[j]]);
    w.update.dst.push_back(dense[j]);
  }
  for (size_t i = 0; i < sc_udims.size(); ++i) {
    w.pdims.push_back(udims[sc_udims[i]]);
    w.idx_stride.push_back(istr[index_dims[i]]);
    w.upd_stride.push_back(ustr[sc_udims[i]]);
    w.op_stride.push_back(0);
  }
  for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
    const int64_t pos =
        dm::IndexOf(index_dims, dn.scatter_indices_batching_dims[i]);
    if (pos >= static_cast<int64_t>(sc_udims.size())) {
      return CannotCompile(instr, "malformed batching dims");
    }
    w.op_stride[pos] = ostr[dn.input_batching_dims[i]];
  }
  w.pstr = dm::RowMajorStrides(w.pdims);
  return w;
}

// The box `b` with source and destination swapped (VMEM window -> HBM).
dm::Box Reversed(const dm::Box& b) { return {b.counts, b.dst, b.src}; }

}  // namespace

bool ScatterFitsStaged(const KernelBuilder& kb, const ScatterBuffers& b) {
  int64_t bytes =
      VmemAligned(b.idx.bytes) + VmemAligned(b.ops[0].elements * 4) + 512;
  for (size_t i = 0; i < b.outs.size(); ++i) {
    bytes += VmemAligned(b.outs[i].bytes) + VmemAligned(b.upds[i].bytes);
  }
  return bytes <= kb.vmem_capacity() - kb.vmem_used();
}

Status EmitScatterByWindows(const HloInstruction& instr,
                            const ScatterBuffers& b, KernelBuilder& kb) {
  const ScatterDimNumbers& dn = *instr.attrs().scatter_dnums;
  const int n = static_cast<int>(b.outs.size());
  ASSIGN_OR_RETURN(const Windows w, Plan(instr, b));
  int64_t need = 0;
  for (int i = 0; i < n; ++i) {
    need += VmemAligned(w.elements * dm::ElemBytes(b.outs[i].dtype)) +
            VmemAligned(w.elements * dm::ElemBytes(b.upds[i].dtype));
  }
  if (need > kb.vmem_capacity() - kb.vmem_used()) {
    return ResourceExhausted("hloc: " + instr.name() +
                             ": not even one scatter window of every result "
                             "and update fits in VMEM");
  }
  // The combiner's registers: current values, then updates.
  VRegPool pool;
  std::vector<int> params(2 * n);
  for (int i = 0; i < 2 * n; ++i) {
    StatusOr<int> r = pool.AllocN(RegCount(b.outs[i % n].dtype));
    if (!r.ok()) return CannotCompile(instr, "too many operands");
    params[i] = *r;
  }
  const std::vector<int> results(params.begin(), params.begin() + n);
  std::vector<int64_t> res_vmem(n), upd_vmem(n);
  for (int i = 0; i < n; ++i) {
    res_vmem[i] = kb.AllocVmem(w.elements * dm::ElemBytes(b.outs[i].dtype));
    upd_vmem[i] = kb.AllocVmem(w.elements * dm::ElemBytes(b.upds[i].dtype));
    if (b.ops[i].name == b.outs[i].name) continue;
    kb.Emit("saddr s1, " + b.ops[i].name);
    kb.Emit("saddr s2, " + b.outs[i].name);
    kb.Emit("dmastart hbm[s2], hbm[s1], " + I(b.outs[i].bytes) + ", 0");
    kb.Emit("dmawait 0");
  }
  const int64_t positions = dm::Product(w.pdims);
  const int isz = dm::ElemBytes(b.idx.dtype);
  const std::vector<int64_t>& odims = b.ops[0].dims;
  // s0 = P; per position s1 = window start (result element), s2 = update
  // element, s3 = index element of component 0.
  kb.Emit("simm s0, 0");
  const std::string loop = kb.NewLabel("scatter_window");
  const std::string next = kb.NewLabel("scatter_next");
  kb.PlaceLabel(loop);
  kb.Emit("simm s1, 0");
  kb.Emit("simm s2, 0");
  kb.Emit("simm s3, 0");
  for (size_t i = 0; i < w.pdims.size(); ++i) {
    kb.Emit("sdiv s4, s0, " + I(w.pstr[i]));
    kb.Emit("srem s4, s4, " + I(w.pdims[i]));
    AddScaled(kb, 1, 4, w.op_stride[i]);
    AddScaled(kb, 2, 4, w.upd_stride[i]);
    AddScaled(kb, 3, 4, w.idx_stride[i]);
  }
  const std::vector<int64_t> ostr = dm::RowMajorStrides(odims);
  for (size_t k = 0; k < dn.scatter_dims_to_operand_dims.size(); ++k) {
    const int64_t d = dn.scatter_dims_to_operand_dims[k];
    kb.Emit("sadd s8, s3, " + I(static_cast<int64_t>(k) * w.component_stride));
    ElementAddress(kb, 8, b.idx.name, isz);
    kb.Emit("sld." + b.idx.dtype + " s4, hbm[s6]");
    kb.Emit("scmplt s9, s4, 0");
    kb.Emit("brnz s9, " + next);
    kb.Emit("scmpgt s9, s4, " + I(odims[d] - w.wsize[d]));
    kb.Emit("brnz s9, " + next);
    AddScaled(kb, 1, 4, ostr[d]);
  }
  for (int i = 0; i < n; ++i) {
    const int esz = dm::ElemBytes(b.outs[i].dtype);
    ElementAddress(kb, 1, b.outs[i].name, esz);
    dm::EmitBoxDma(kb, {"vmem", -1, res_vmem[i]}, {"hbm", 6, 0}, w.result, esz,
                   0);
    ElementAddress(kb, 2, b.upds[i].name, dm::ElemBytes(b.upds[i].dtype));
    dm::EmitBoxDma(kb, {"vmem", -1, upd_vmem[i]}, {"hbm", 6, 0}, w.update,
                   dm::ElemBytes(b.upds[i].dtype), 0);
  }
  kb.BeginLinearTiles(w.elements);
  for (int i = 0; i < n; ++i) {
    kb.LoadTile(params[i], b.outs[i].dtype, res_vmem[i]);
    kb.LoadTile(params[n + i], b.upds[i].dtype, upd_vmem[i]);
  }
  RETURN_IF_ERROR(EmitScalarComputation(kb, pool, instr, *instr.to_apply(),
                                        params, results));
  for (int i = 0; i < n; ++i) {
    kb.StoreTile(b.outs[i].dtype, res_vmem[i], results[i]);
  }
  kb.EndLinearTiles();
  for (int i = 0; i < n; ++i) {
    const int esz = dm::ElemBytes(b.outs[i].dtype);
    ElementAddress(kb, 1, b.outs[i].name, esz);
    dm::EmitBoxDma(kb, {"hbm", 6, 0}, {"vmem", -1, res_vmem[i]},
                   Reversed(w.result), esz, 0);
  }
  kb.PlaceLabel(next);
  kb.Emit("sadd s0, s0, 1");
  kb.Emit("scmplt s9, s0, " + I(positions));
  kb.Emit("brnz s9, " + loop);
  return Status::Ok();
}

}  // namespace trench::codegen
