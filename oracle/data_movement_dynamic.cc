// Data movement with computed offsets: dynamic-slice, dynamic-update-slice,
// concatenate, pad. Type-agnostic byte copies built on StridedCopy.
#include <algorithm>

#include "oracle/index_util.h"
#include "oracle/kernels.h"

namespace trench::oracle {
namespace {

std::vector<int64_t> ByteStrides(std::span<const int64_t> dims, int64_t w) {
  std::vector<int64_t> s = Strides(dims);
  for (int64_t& v : s) v *= w;
  return s;
}

Status CheckSameType(const HloInstruction& instr, const Literal& a,
                     const char* what) {
  if (instr.shape().element_type() != a.element_type()) {
    return Invalid(
        instr,
        std::string(what) + " has element type " +
            std::string(PrimitiveTypeName(a.element_type())) + ", result has " +
            std::string(PrimitiveTypeName(instr.shape().element_type())));
  }
  return Status::Ok();
}

// Reads the start indices of dynamic-slice / dynamic-update-slice from
// ops[first...]: either one scalar per dimension (the current form) or a
// single rank-1 vector (XLA's older form). Each start is clamped to
// [0, dim - size] as XLA specifies (operation_semantics.md, DynamicSlice:
// "the start indices are clamped ... before the slice is performed").
// Indices may be of any integer type; unsigned values above INT64_MAX
// saturate, which the clamp then maps to dim - size.
StatusOr<std::vector<int64_t>> ClampedStarts(const HloInstruction& instr,
                                             Operands ops, size_t first,
                                             std::span<const int64_t> dims,
                                             std::span<const int64_t> sizes) {
  const size_t rank = dims.size();
  std::vector<int64_t> starts(rank, 0);
  const size_t given = ops.size() - first;
  const bool vector_form =
      given == 1 && rank != 1 && ops[first]->shape().rank() == 1;
  if (vector_form) {
    const Literal& v = *ops[first];
    if (!IsInteger(v.element_type()) ||
        v.element_count() != static_cast<int64_t>(rank)) {
      return Invalid(instr, "start index vector must hold " +
                                std::to_string(rank) + " integers");
    }
    for (size_t d = 0; d < rank; ++d) {
      Literal s = MakeScalar(v.element_type());
      LoadScalar(v, d, s);
      starts[d] = ScalarIndexValue(s);
    }
  } else {
    if (given != rank) {
      return Invalid(instr, "expected " + std::to_string(rank) +
                                " start indices, got " + std::to_string(given));
    }
    for (size_t d = 0; d < rank; ++d) {
      const Literal& s = *ops[first + d];
      RETURN_IF_ERROR(CheckScalar(instr, s, "start index"));
      if (!IsInteger(s.element_type())) {
        return Invalid(
            instr, "start index " + std::to_string(d) + " is not an integer");
      }
      starts[d] = ScalarIndexValue(s);
    }
  }
  for (size_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0 || sizes[d] > dims[d]) {
      return Invalid(instr, "slice size " + std::to_string(sizes[d]) +
                                " exceeds dimension " + std::to_string(d) +
                                " of size " + std::to_string(dims[d]));
    }
    starts[d] = std::clamp<int64_t>(starts[d], 0, dims[d] - sizes[d]);
  }
  return starts;
}

}  // namespace

StatusOr<Literal> EvalDynamicSlice(const HloInstruction& instr, Operands ops) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 1, /*at_least=*/true));
  const Literal& in = *ops[0];
  RETURN_IF_ERROR(CheckSameType(instr, in, "operand"));
  const std::vector<int64_t>& sizes = instr.attrs().dynamic_slice_sizes;
  const std::vector<int64_t>& dims = in.shape().dims();
  if (sizes.size() != dims.size()) {
    return Invalid(instr,
                   "dynamic_slice_sizes has " + std::to_string(sizes.size()) +
                       " entries for rank " + std::to_string(dims.size()));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                   ClampedStarts(instr, ops, 1, dims, sizes));
  RETURN_IF_ERROR(CheckResultDims(instr, sizes));
  Literal out(instr.shape());
  if (out.element_count() == 0) return out;
  const int64_t w = ByteWidth(in.element_type());
  const std::vector<int64_t> src = ByteStrides(dims, w);
  int64_t base = 0;
  for (size_t d = 0; d < dims.size(); ++d) base += starts[d] * src[d];
  StridedCopy(in.bytes().data() + base, src, out.mutable_bytes().data(),
              ByteStrides(sizes, w), sizes, w);
  return out;
}

StatusOr<Literal> EvalDynamicUpdateSlice(const HloInstruction& instr,
                                         Operands ops) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 2, /*at_least=*/true));
  const Literal& in = *ops[0];
  const Literal& update = *ops[1];
  RETURN_IF_ERROR(CheckSameType(instr, in, "operand"));
  RETURN_IF_ERROR(CheckSameType(instr, update, "update"));
  const std::vector<int64_t>& dims = in.shape().dims();
  const std::vector<int64_t>& sizes = update.shape().dims();
  if (sizes.size() != dims.size()) {
    return Invalid(instr, "update rank " + std::to_string(sizes.size()) +
                              " differs from operand rank " +
                              std::to_string(dims.size()));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                   ClampedStarts(instr, ops, 2, dims, sizes));
  RETURN_IF_ERROR(CheckResultDims(instr, dims));
  Literal out(instr.shape());
  std::copy(in.bytes().begin(), in.bytes().end(), out.mutable_bytes().begin());
  if (update.element_count() == 0) return out;
  const int64_t w = ByteWidth(in.element_type());
  const std::vector<int64_t> dst = ByteStrides(dims, w);
  int64_t base = 0;
  for (size_t d = 0; d < dims.size(); ++d) base += starts[d] * dst[d];
  StridedCopy(update.bytes().data(), ByteStrides(sizes, w),
              out.mutable_bytes().data() + base, dst, sizes, w);
  return out;
}

StatusOr<Literal> EvalConcatenate(const HloInstruction& instr, Operands ops) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 1, /*at_least=*/true));
  if (instr.dimensions().size() != 1) {
    return Invalid(instr, "concatenate needs exactly one dimension");
  }
  const int64_t rank = ops[0]->shape().rank();
  const int64_t cdim = instr.dimensions()[0];
  RETURN_IF_ERROR(CheckDim(instr, cdim, rank, "concatenate"));
  std::vector<int64_t> dims = ops[0]->shape().dims();
  dims[cdim] = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Literal& op = *ops[i];
    RETURN_IF_ERROR(CheckSameType(instr, op, "operand"));
    if (op.shape().rank() != rank) {
      return Invalid(instr, "operand " + std::to_string(i) + " has rank " +
                                std::to_string(op.shape().rank()));
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != cdim && op.shape().dim(d) != dims[d]) {
        return Invalid(instr, "operand " + std::to_string(i) +
                                  " differs in dimension " + std::to_string(d));
      }
    }
    dims[cdim] += op.shape().dim(cdim);
  }
  RETURN_IF_ERROR(CheckResultDims(instr, dims));
  Literal out(instr.shape());
  const int64_t w = ByteWidth(out.element_type());
  const std::vector<int64_t> dst = ByteStrides(dims, w);
  int64_t offset = 0;
  for (const Literal* op : ops) {
    StridedCopy(op->bytes().data(), ByteStrides(op->shape().dims(), w),
                out.mutable_bytes().data() + offset * dst[cdim], dst,
                op->shape().dims(), w);
    offset += op->shape().dim(cdim);
  }
  return out;
}

// Interior padding happens before edge padding, so negative edges crop the
// interior-padded operand (operation_semantics.md, Pad; XLA's evaluator
// HandlePad places operand element i at lo + i * (interior + 1) and skips
// targets outside the result).
StatusOr<Literal> EvalPad(const HloInstruction& instr, Operands ops) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 2));
  const Literal& in = *ops[0];
  const Literal& value = *ops[1];
  RETURN_IF_ERROR(CheckSameType(instr, in, "operand"));
  RETURN_IF_ERROR(CheckSameType(instr, value, "padding value"));
  RETURN_IF_ERROR(CheckScalar(instr, value, "padding value"));
  const std::vector<PaddingDim>& pad = instr.attrs().padding;
  const int64_t rank = in.shape().rank();
  if (static_cast<int64_t>(pad.size()) != rank) {
    return Invalid(instr, "padding has " + std::to_string(pad.size()) +
                              " entries for rank " + std::to_string(rank));
  }
  std::vector<int64_t> dims(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t n = in.shape().dim(d);
    if (pad[d].interior < 0) {
      return Invalid(instr, "negative interior padding");
    }
    dims[d] = pad[d].lo + pad[d].hi + n +
              std::max<int64_t>(n - 1, 0) * pad[d].interior;
    if (dims[d] < 0) {
      return Invalid(
          instr, "padding makes dimension " + std::to_string(d) + " negative");
    }
  }
  RETURN_IF_ERROR(CheckResultDims(instr, dims));
  Literal out(instr.shape());
  const int64_t w = ByteWidth(out.element_type());
  FillElements(out.mutable_bytes().data(), out.element_count(),
               value.bytes().data(), w);
  // Per dimension: the operand range [first, last] whose targets land
  // inside the result, and where the first one lands.
  const std::vector<int64_t> src_strides = ByteStrides(in.shape().dims(), w);
  const std::vector<int64_t> dst_strides = ByteStrides(dims, w);
  std::vector<int64_t> counts(rank), src(rank), dst(rank);
  int64_t src_base = 0, dst_base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t step = pad[d].interior + 1;
    const int64_t lo = pad[d].lo;
    // Smallest i with lo + i * step >= 0; largest with target < dims[d].
    const int64_t first = lo >= 0 ? 0 : (-lo + step - 1) / step;
    const int64_t last =
        dims[d] - 1 - lo < 0
            ? -1
            : std::min(in.shape().dim(d) - 1, (dims[d] - 1 - lo) / step);
    counts[d] = std::max<int64_t>(0, last - first + 1);
    if (counts[d] == 0) return out;
    src_base += first * src_strides[d];
    dst_base += (lo + first * step) * dst_strides[d];
    src[d] = src_strides[d];
    dst[d] = dst_strides[d] * step;
  }
  StridedCopy(in.bytes().data() + src_base, src,
              out.mutable_bytes().data() + dst_base, dst, counts, w);
  return out;
}

}  // namespace trench::oracle
