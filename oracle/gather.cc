// gather with full dimension numbers (operation_semantics.md, Gather).
//
// The output's batch dims (those not in offset_dims, in order) enumerate
// the start_indices positions with index_vector_dim removed;
// index_vector_dim == rank(start_indices) means an implicit trailing 1.
// For each batch position G the operand start is
//   start[start_index_map[k]] = clamp(S[k], 0, operand_dim - slice_size)
// (XLA clamps gather starts so the whole slice is in bounds) and
//   start[operand_batching_dims[i]] = G[start_indices_batching_dims[i]].
// The slice (collapsed and operand-batching dims have size 1 and are
// dropped) lands on offset_dims in operand dim order. Each slice is one
// strided box copy, so this is type-agnostic.
#include <algorithm>

#include "oracle/index_util.h"
#include "oracle/kernels.h"

namespace trench::oracle {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

StatusOr<Literal> EvalGather(const HloInstruction& instr, Operands ops) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 2));
  const Literal& operand = *ops[0];
  const Literal& indices = *ops[1];
  if (!instr.attrs().gather_dnums.has_value()) {
    return Invalid(instr, "missing gather dimension numbers");
  }
  const GatherDimNumbers& dn = *instr.attrs().gather_dnums;
  const std::vector<int64_t>& sizes = instr.attrs().gather_slice_sizes;
  const Shape& os = operand.shape();
  const int64_t orank = os.rank();
  if (!IsInteger(indices.element_type())) {
    return Invalid(instr, "start indices must be integers");
  }
  if (instr.shape().element_type() != operand.element_type()) {
    return Invalid(instr, "result type differs from the operand type");
  }
  if (static_cast<int64_t>(sizes.size()) != orank) {
    return Invalid(instr, "slice_sizes has " + std::to_string(sizes.size()) +
                              " entries for operand rank " +
                              std::to_string(orank));
  }
  const int64_t irank = indices.shape().rank();
  const int64_t ivd = dn.index_vector_dim;
  if (ivd < 0 || ivd > irank) {
    return Invalid(instr, "index_vector_dim out of range");
  }
  const int64_t vec_len = ivd == irank ? 1 : indices.shape().dim(ivd);
  if (static_cast<int64_t>(dn.start_index_map.size()) != vec_len) {
    return Invalid(instr, "start_index_map has " +
                              std::to_string(dn.start_index_map.size()) +
                              " entries for an index vector of " +
                              std::to_string(vec_len));
  }
  std::vector<int64_t> mapped = dn.start_index_map;
  mapped.insert(mapped.end(), dn.operand_batching_dims.begin(),
                dn.operand_batching_dims.end());
  RETURN_IF_ERROR(CheckDimList(instr, mapped, orank, "start_index_map"));
  std::vector<int64_t> dropped = dn.collapsed_slice_dims;
  dropped.insert(dropped.end(), dn.operand_batching_dims.begin(),
                 dn.operand_batching_dims.end());
  RETURN_IF_ERROR(CheckDimList(instr, dropped, orank, "collapsed"));
  if (dn.operand_batching_dims.size() !=
      dn.start_indices_batching_dims.size()) {
    return Invalid(instr, "batching dimension lists differ in length");
  }
  for (size_t i = 0; i < dn.start_indices_batching_dims.size(); ++i) {
    const int64_t d = dn.start_indices_batching_dims[i];
    RETURN_IF_ERROR(CheckDim(instr, d, irank, "start_indices_batching"));
    if (d == ivd) return Invalid(instr, "batching dim is index_vector_dim");
    if (indices.shape().dim(d) != os.dim(dn.operand_batching_dims[i])) {
      return Invalid(instr, "batching dimension sizes differ");
    }
  }
  for (int64_t d = 0; d < orank; ++d) {
    if (sizes[d] < 0 || sizes[d] > os.dim(d) ||
        (Contains(dropped, d) && sizes[d] != 1)) {
      return Invalid(instr, "invalid slice size for operand dimension " +
                                std::to_string(d));
    }
  }
  // Batch shape: start_indices dims without index_vector_dim.
  std::vector<int64_t> batch_dims;  // Sizes.
  std::vector<int64_t> batch_src;   // Index dim each batch dim comes from.
  for (int64_t d = 0; d < irank; ++d) {
    if (d == ivd) continue;
    batch_dims.push_back(indices.shape().dim(d));
    batch_src.push_back(d);
  }
  // Offset dims: operand dims kept in the slice, in order.
  std::vector<int64_t> window_dims;
  for (int64_t d = 0; d < orank; ++d) {
    if (!Contains(dropped, d)) window_dims.push_back(d);
  }
  const int64_t out_rank = batch_dims.size() + window_dims.size();
  if (static_cast<int64_t>(dn.offset_dims.size()) != window_dims.size() ||
      instr.shape().rank() != out_rank) {
    return Invalid(instr, "offset_dims do not match the slice's kept dims");
  }
  RETURN_IF_ERROR(CheckDimList(instr, dn.offset_dims, out_rank, "offset"));
  for (size_t i = 1; i < dn.offset_dims.size(); ++i) {
    if (dn.offset_dims[i] <= dn.offset_dims[i - 1]) {
      return Invalid(instr, "offset_dims must be sorted");
    }
  }
  std::vector<int64_t> out_dims(out_rank, -1), out_batch_pos;
  for (size_t i = 0; i < window_dims.size(); ++i) {
    out_dims[dn.offset_dims[i]] = sizes[window_dims[i]];
  }
  for (int64_t d = 0, b = 0; d < out_rank; ++d) {
    if (out_dims[d] == -1) {
      out_dims[d] = batch_dims[b++];
      out_batch_pos.push_back(d);
    }
  }
  RETURN_IF_ERROR(CheckResultDims(instr, out_dims));
  Literal out(instr.shape());
  if (out.element_count() == 0) return out;

  const int64_t w = ByteWidth(operand.element_type());
  const std::vector<int64_t> ostr = Strides(os.dims());
  const std::vector<int64_t> rstr = Strides(out_dims);
  const std::vector<int64_t> istr = Strides(indices.shape().dims());
  std::vector<int64_t> src(window_dims.size()), dst(window_dims.size()),
      counts(window_dims.size());
  for (size_t i = 0; i < window_dims.size(); ++i) {
    src[i] = ostr[window_dims[i]] * w;
    dst[i] = rstr[dn.offset_dims[i]] * w;
    counts[i] = sizes[window_dims[i]];
  }
  // Where each batching dim's coordinate comes from in the batch index.
  std::vector<int64_t> batching_pos;
  for (int64_t d : dn.start_indices_batching_dims) {
    batching_pos.push_back(std::find(batch_src.begin(), batch_src.end(), d) -
                           batch_src.begin());
  }
  Literal scalar = MakeScalar(indices.element_type());
  std::vector<int64_t> g(batch_dims.size(), 0);
  const int64_t batches = Product(batch_dims);
  for (int64_t bi = 0; bi < batches; ++bi, NextIndex(batch_dims, g)) {
    int64_t ibase = 0, obase = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      ibase += g[i] * istr[batch_src[i]];
      obase += g[i] * rstr[out_batch_pos[i]];
    }
    int64_t start = 0;
    for (int64_t k = 0; k < vec_len; ++k) {
      LoadScalar(indices, ibase + (ivd == irank ? 0 : k * istr[ivd]), scalar);
      const int64_t d = dn.start_index_map[k];
      const int64_t s = std::clamp<int64_t>(ScalarIndexValue(scalar), 0,
                                            os.dim(d) - sizes[d]);
      start += s * ostr[d];
    }
    for (size_t i = 0; i < batching_pos.size(); ++i) {
      start += g[batching_pos[i]] * ostr[dn.operand_batching_dims[i]];
    }
    StridedCopy(operand.bytes().data() + start * w, src,
                out.mutable_bytes().data() + obase * w, dst, counts, w);
  }
  return out;
}

}  // namespace trench::oracle
