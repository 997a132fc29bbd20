// Shape rules of data-dependent indexing: dynamic-slice,
// dynamic-update-slice, gather and scatter.
#include "compiler/ir/shape_inference_internal.h"

namespace trench::shape_inference_internal {
namespace {

std::string Num(int64_t v) { return std::to_string(v); }

// Checks the start indices of dynamic-slice/-update-slice, operands
// [first, operand_count): one integer scalar per operand dimension, all of
// one type, or (XLA's older form) a single integer vector of that length.
Status CheckStartIndices(const HloInstruction& instr, int64_t first,
                         int64_t rank) {
  const int64_t n = instr.operand_count() - first;
  if (n == 1 && rank != 0) {
    const Shape& v = OperandShape(instr, first);
    if (v.IsArray() && v.rank() == 1 && v.dim(0) == rank &&
        IsInteger(v.element_type())) {
      return Status::Ok();
    }
  }
  if (n != rank) {
    return Err(instr, "has " + Num(n) +
                          " start indices for an operand of rank " + Num(rank));
  }
  for (int64_t i = first; i < instr.operand_count(); ++i) {
    const Shape& s = OperandShape(instr, i);
    if (!s.IsArray() || s.rank() != 0 || !IsInteger(s.element_type()) ||
        s.element_type() != OperandShape(instr, first).element_type()) {
      return Err(instr,
                 "start indices must be integer scalars of one type, "
                 "got " +
                     Str(s));
    }
  }
  return Status::Ok();
}

// Index dims with the index vector dim appended when it is implicit
// (index_vector_dim == rank), after checking index_vector_dim's range.
StatusOr<std::vector<int64_t>> ExpandedIndexDims(const HloInstruction& instr,
                                                 const Shape& indices,
                                                 int64_t index_vector_dim) {
  RETURN_IF_ERROR(ExpectArray(instr, indices, "indices"));
  if (!IsInteger(indices.element_type())) {
    return Err(instr, "indices must be integers, got " + Str(indices));
  }
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return Err(instr, "index_vector_dim " + Num(index_vector_dim) +
                          " is out of range for indices " + Str(indices));
  }
  std::vector<int64_t> dims = indices.dims();
  if (index_vector_dim == indices.rank()) dims.push_back(1);
  return dims;
}

// Checks a sorted, unique list of operand dims.
Status CheckSortedDims(const HloInstruction& instr,
                       const std::vector<int64_t>& dims, int64_t rank,
                       const std::string& what) {
  RETURN_IF_ERROR(CheckDimList(instr, dims, rank, what));
  if (!IsSortedStrictly(dims)) {
    return Err(instr, what + " " + Str(dims) + " must be sorted");
  }
  return Status::Ok();
}

// Checks the batching dims shared by gather and scatter: operand-side dims
// disjoint from `collapsed` and sized like the index-side dims.
Status CheckBatchingDims(const HloInstruction& instr, const Shape& operand,
                         const std::vector<int64_t>& operand_batching,
                         const std::vector<int64_t>& collapsed,
                         const std::vector<int64_t>& index_batching,
                         const std::vector<int64_t>& expanded,
                         int64_t index_vector_dim) {
  for (int64_t d : operand_batching) {
    if (Contains(collapsed, d)) {
      return Err(instr, "operand batching dim " + Num(d) +
                            " is also a collapsed/inserted dim");
    }
  }
  if (index_batching.size() != operand_batching.size()) {
    return Err(instr, "has " + Num(operand_batching.size()) +
                          " operand batching dims but " +
                          Num(index_batching.size()) +
                          " indices batching dims");
  }
  RETURN_IF_ERROR(CheckDimList(instr, index_batching, expanded.size(),
                               "indices batching dims"));
  for (size_t i = 0; i < index_batching.size(); ++i) {
    if (index_batching[i] == index_vector_dim) {
      return Err(instr, "indices batching dims contain index_vector_dim");
    }
    if (operand.dim(operand_batching[i]) != expanded[index_batching[i]]) {
      return Err(instr, "batching dim sizes differ between operand " +
                            Str(operand) + " and indices");
    }
  }
  return Status::Ok();
}

// Checks the map from index vector entries to operand dims.
Status CheckIndexMap(const HloInstruction& instr,
                     const std::vector<int64_t>& map, int64_t rank,
                     int64_t index_vector_size,
                     const std::vector<int64_t>& operand_batching) {
  if (static_cast<int64_t>(map.size()) != index_vector_size) {
    return Err(instr, "index map " + Str(map) + " has " + Num(map.size()) +
                          " entries but index vectors have " +
                          Num(index_vector_size));
  }
  RETURN_IF_ERROR(CheckDimList(instr, map, rank, "index map"));
  for (int64_t d : map) {
    if (Contains(operand_batching, d)) {
      return Err(instr,
                 "index map " + Str(map) + " contains batching dim " + Num(d));
    }
  }
  return Status::Ok();
}

// `expanded` without entry `skip`.
std::vector<int64_t> Without(const std::vector<int64_t>& expanded,
                             int64_t skip) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < expanded.size(); ++i) {
    if (static_cast<int64_t>(i) != skip) out.push_back(expanded[i]);
  }
  return out;
}

}  // namespace

StatusOr<Shape> InferDynamicSlice(const HloInstruction& instr) {
  if (instr.operand_count() < 1) return Err(instr, "has no operand");
  const Shape& operand = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(CheckStartIndices(instr, 1, operand.rank()));
  const auto& sizes = instr.attrs().dynamic_slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != operand.rank()) {
    return Err(instr, "dynamic_slice_sizes " + Str(sizes) +
                          " must have one entry per dimension of " +
                          Str(operand));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (sizes[i] < 0 || sizes[i] > operand.dim(i)) {
      return Err(instr, "dynamic_slice_sizes " + Str(sizes) +
                            " do not fit in operand " + Str(operand));
    }
  }
  return Shape(operand.element_type(), sizes);
}

StatusOr<Shape> InferDynamicUpdateSlice(const HloInstruction& instr) {
  if (instr.operand_count() < 2) return Err(instr, "needs operand and update");
  const Shape& operand = OperandShape(instr, 0);
  const Shape& update = OperandShape(instr, 1);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectArray(instr, update, "update"));
  RETURN_IF_ERROR(CheckStartIndices(instr, 2, operand.rank()));
  bool fits = update.element_type() == operand.element_type() &&
              update.rank() == operand.rank();
  for (int64_t i = 0; fits && i < update.rank(); ++i) {
    fits = update.dim(i) <= operand.dim(i);
  }
  if (!fits) {
    return Err(instr, "update " + Str(update) + " does not fit in operand " +
                          Str(operand));
  }
  return NoLayout(operand);
}

StatusOr<Shape> InferGather(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  if (!instr.attrs().gather_dnums) {
    return Err(instr, "has no gather dimension numbers");
  }
  const GatherDimNumbers& dn = *instr.attrs().gather_dnums;
  const auto& slice_sizes = instr.attrs().gather_slice_sizes;
  const int64_t rank = operand.rank();
  ASSIGN_OR_RETURN(
      std::vector<int64_t> expanded,
      ExpandedIndexDims(instr, OperandShape(instr, 1), dn.index_vector_dim));
  if (static_cast<int64_t>(slice_sizes.size()) != rank) {
    return Err(instr, "slice_sizes " + Str(slice_sizes) +
                          " must have one entry per dimension of " +
                          Str(operand));
  }
  for (int64_t i = 0; i < rank; ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > operand.dim(i)) {
      return Err(instr, "slice_sizes " + Str(slice_sizes) +
                            " do not fit in operand " + Str(operand));
    }
  }
  RETURN_IF_ERROR(CheckSortedDims(instr, dn.collapsed_slice_dims, rank,
                                  "collapsed_slice_dims"));
  RETURN_IF_ERROR(CheckSortedDims(instr, dn.operand_batching_dims, rank,
                                  "operand_batching_dims"));
  for (const auto* dims :
       {&dn.collapsed_slice_dims, &dn.operand_batching_dims}) {
    for (int64_t d : *dims) {
      if (slice_sizes[d] > 1) {
        return Err(instr, "collapses dimension " + Num(d) +
                              " whose slice size " + Num(slice_sizes[d]) +
                              " is not 1");
      }
    }
  }
  RETURN_IF_ERROR(CheckBatchingDims(
      instr, operand, dn.operand_batching_dims, dn.collapsed_slice_dims,
      dn.start_indices_batching_dims, expanded, dn.index_vector_dim));
  RETURN_IF_ERROR(CheckIndexMap(instr, dn.start_index_map, rank,
                                expanded[dn.index_vector_dim],
                                dn.operand_batching_dims));
  if (static_cast<int64_t>(dn.offset_dims.size() +
                           dn.collapsed_slice_dims.size() +
                           dn.operand_batching_dims.size()) != rank) {
    return Err(instr, "offset_dims " + Str(dn.offset_dims) +
                          ", collapsed and batching dims do not add up to "
                          "the operand rank " +
                          Num(rank));
  }
  const std::vector<int64_t> batch = Without(expanded, dn.index_vector_dim);
  const int64_t out_rank = dn.offset_dims.size() + batch.size();
  RETURN_IF_ERROR(
      CheckSortedDims(instr, dn.offset_dims, out_rank, "offset_dims"));
  std::vector<int64_t> offsets;
  for (int64_t i = 0; i < rank; ++i) {
    if (!Contains(dn.collapsed_slice_dims, i) &&
        !Contains(dn.operand_batching_dims, i)) {
      offsets.push_back(slice_sizes[i]);
    }
  }
  std::vector<int64_t> dims;
  size_t next_offset = 0, next_batch = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    dims.push_back(Contains(dn.offset_dims, i) ? offsets[next_offset++]
                                               : batch[next_batch++]);
  }
  return Shape(operand.element_type(), dims);
}

StatusOr<Shape> InferScatter(const HloInstruction& instr) {
  const int64_t count = instr.operand_count();
  if (count < 3 || count % 2 == 0) {
    return Err(instr, "needs N operands, indices and N updates, has " +
                          Num(count) + " operands");
  }
  const int64_t n = (count - 1) / 2;
  if (!instr.attrs().scatter_dnums) {
    return Err(instr, "has no scatter dimension numbers");
  }
  const ScatterDimNumbers& dn = *instr.attrs().scatter_dnums;
  const Shape& operand = OperandShape(instr, 0);
  const Shape& update = OperandShape(instr, n + 1);
  std::vector<PrimitiveType> types;
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& o = OperandShape(instr, i);
    const Shape& u = OperandShape(instr, n + 1 + i);
    RETURN_IF_ERROR(ExpectArray(instr, o, "operand " + Num(i)));
    RETURN_IF_ERROR(ExpectArray(instr, u, "update " + Num(i)));
    if (o.dims() != operand.dims() || u.dims() != update.dims() ||
        u.element_type() != o.element_type()) {
      return Err(instr, "operand " + Num(i) + " " + Str(o) + " and update " +
                            Str(u) + " do not match operand 0 " + Str(operand) +
                            " and update 0 " + Str(update));
    }
    types.push_back(o.element_type());
    results.push_back(NoLayout(o));
  }
  const int64_t rank = operand.rank();
  ASSIGN_OR_RETURN(
      std::vector<int64_t> expanded,
      ExpandedIndexDims(instr, OperandShape(instr, n), dn.index_vector_dim));
  RETURN_IF_ERROR(CheckSortedDims(instr, dn.update_window_dims, update.rank(),
                                  "update_window_dims"));
  RETURN_IF_ERROR(CheckSortedDims(instr, dn.inserted_window_dims, rank,
                                  "inserted_window_dims"));
  RETURN_IF_ERROR(CheckSortedDims(instr, dn.input_batching_dims, rank,
                                  "input_batching_dims"));
  RETURN_IF_ERROR(CheckBatchingDims(
      instr, operand, dn.input_batching_dims, dn.inserted_window_dims,
      dn.scatter_indices_batching_dims, expanded, dn.index_vector_dim));
  RETURN_IF_ERROR(CheckIndexMap(instr, dn.scatter_dims_to_operand_dims, rank,
                                expanded[dn.index_vector_dim],
                                dn.input_batching_dims));
  if (static_cast<int64_t>(dn.update_window_dims.size() +
                           dn.inserted_window_dims.size() +
                           dn.input_batching_dims.size()) != rank) {
    return Err(instr, "update_window_dims " + Str(dn.update_window_dims) +
                          ", inserted and batching dims do not add up to "
                          "the operand rank " +
                          Num(rank));
  }
  const std::vector<int64_t> scatter = Without(expanded, dn.index_vector_dim);
  if (update.rank() !=
      static_cast<int64_t>(dn.update_window_dims.size() + scatter.size())) {
    return Err(instr, "update " + Str(update) + " must have rank " +
                          Num(dn.update_window_dims.size() + scatter.size()));
  }
  size_t next_scatter = 0, next_window = 0;
  for (int64_t i = 0; i < update.rank(); ++i) {
    if (!Contains(dn.update_window_dims, i)) {
      if (update.dim(i) != scatter[next_scatter++]) {
        return Err(instr, "update " + Str(update) + " scatter dimension " +
                              Num(i) + " does not match the indices");
      }
      continue;
    }
    while (Contains(dn.inserted_window_dims, next_window) ||
           Contains(dn.input_batching_dims, next_window)) {
      ++next_window;
    }
    if (update.dim(i) > operand.dim(next_window)) {
      return Err(instr, "update " + Str(update) + " window dimension " +
                            Num(i) + " is larger than operand " + Str(operand) +
                            " dimension " + Num(next_window));
    }
    ++next_window;
  }
  RETURN_IF_ERROR(ExpectCalledCount(instr, 1));
  ASSIGN_OR_RETURN(Signature sig, CalleeSignature(instr, 0, "to_apply"));
  RETURN_IF_ERROR(CheckReducer(instr, sig, types, types));
  return n == 1 ? results[0] : Shape::Tuple(results);
}

}  // namespace trench::shape_inference_internal
