// Data movement that is a pure relabeling or strided view of the operand:
// broadcast, reshape, bitcast, transpose, slice, reverse. All are
// type-agnostic byte copies (complex included) built on StridedCopy.
#include <algorithm>
#include <numeric>

#include "oracle/index_util.h"
#include "oracle/kernels.h"

namespace trench::oracle {
namespace {

// Byte strides of a row-major array with `dims`.
std::vector<int64_t> ByteStrides(std::span<const int64_t> dims, int64_t w) {
  std::vector<int64_t> s = Strides(dims);
  for (int64_t& v : s) v *= w;
  return s;
}

Status CheckSameType(const HloInstruction& instr, const Literal& operand) {
  if (instr.shape().element_type() != operand.element_type()) {
    return Invalid(
        instr,
        "element type " +
            std::string(PrimitiveTypeName(instr.shape().element_type())) +
            " differs from the operand's " +
            std::string(PrimitiveTypeName(operand.element_type())));
  }
  return Status::Ok();
}

// Row-major data of `in` permuted so that result dim i is input dim
// perm[i]. REQUIRES: perm is a permutation of [0, rank).
void PermuteInto(const Literal& in, std::span<const int64_t> perm,
                 uint8_t* out) {
  const int64_t w = ByteWidth(in.element_type());
  const std::vector<int64_t> in_strides = ByteStrides(in.shape().dims(), w);
  std::vector<int64_t> counts(perm.size()), src(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    counts[i] = in.shape().dim(perm[i]);
    src[i] = in_strides[perm[i]];
  }
  const std::vector<int64_t> dst = ByteStrides(counts, w);
  StridedCopy(in.bytes().data(), src, out, dst, counts, w);
}

// Dimensions in physical order, most major first.
std::vector<int64_t> MajorToMinor(const Shape& s) {
  std::vector<int64_t> m = s.minor_to_major();
  std::reverse(m.begin(), m.end());
  return m;
}

bool IsPermutation(std::span<const int64_t> p, int64_t rank) {
  if (static_cast<int64_t>(p.size()) != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t d : p) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

}  // namespace

StatusOr<Literal> EvalBroadcast(const HloInstruction& instr, Operands ops) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 1));
  const Literal& in = *ops[0];
  RETURN_IF_ERROR(CheckSameType(instr, in));
  if (!instr.shape().IsArray()) return Invalid(instr, "result is not an array");
  const Shape& out_shape = instr.shape();
  const std::vector<int64_t>& map = instr.dimensions();
  if (static_cast<int64_t>(map.size()) != in.shape().rank()) {
    return Invalid(instr, "dimensions={} has " + std::to_string(map.size()) +
                              " entries for an operand of rank " +
                              std::to_string(in.shape().rank()));
  }
  RETURN_IF_ERROR(CheckDimList(instr, map, out_shape.rank(), "broadcast"));
  const int64_t w = ByteWidth(in.element_type());
  const std::vector<int64_t> in_strides = ByteStrides(in.shape().dims(), w);
  // Result dims that do not come from the operand repeat it: stride 0.
  std::vector<int64_t> src(out_shape.rank(), 0);
  for (size_t i = 0; i < map.size(); ++i) {
    if (in.shape().dim(i) != out_shape.dim(map[i])) {
      return Invalid(instr,
                     "operand dimension " + std::to_string(i) + " has size " +
                         std::to_string(in.shape().dim(i)) +
                         " but result dimension " + std::to_string(map[i]) +
                         " has size " + std::to_string(out_shape.dim(map[i])));
    }
    src[map[i]] = in_strides[i];
  }
  Literal out(out_shape);
  StridedCopy(in.bytes().data(), src, out.mutable_bytes().data(),
              ByteStrides(out_shape.dims(), w), out_shape.dims(), w);
  return out;
}

StatusOr<Literal> EvalReshape(const HloInstruction& instr, Operands ops) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 1));
  const Literal& in = *ops[0];
  RETURN_IF_ERROR(CheckSameType(instr, in));
  if (!instr.shape().IsArray() ||
      instr.shape().element_count() != in.element_count()) {
    return Invalid(instr, "reshape from " + in.shape().ToString(false) +
                              " to " + instr.shape().ToString(false) +
                              " changes the element count");
  }
  // Reshape is defined on the logical row-major order, which is exactly how
  // literals store data: the bytes carry over unchanged.
  Literal out(instr.shape());
  std::copy(in.bytes().begin(), in.bytes().end(), out.mutable_bytes().begin());
  return out;
}

// XLA's evaluator copies the operand's physical buffer into the result's
// physical buffer (hlo_evaluator.cc, HandleBitcast: memcpy of
// untyped_data, result no larger than the operand). Our literals are
// row-major whatever the layout, so: operand logical -> operand physical
// bytes -> result physical bytes -> result logical. With default layouts
// on both sides this is a reshape. The element type may change as long as
// the result needs no more bytes than the operand has.
StatusOr<Literal> EvalBitcast(const HloInstruction& instr, Operands ops,
                              const Shape* operand_shape) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 1));
  const Literal& in = *ops[0];
  const Shape& out_shape = instr.shape();
  if (!out_shape.IsArray()) return Invalid(instr, "result is not an array");
  if (out_shape.byte_size() > in.shape().byte_size()) {
    return Invalid(instr, "bitcast from " + in.shape().ToString() + " to " +
                              out_shape.ToString() +
                              " needs more bytes than the operand has");
  }
  // The operand's layout is the operand instruction's, the default when
  // it names none. A literal's own layout is incidental (an argument, or
  // a value passed through a collective or a call, may carry another
  // one) and must not change what the bitcast means.
  if (operand_shape == nullptr && instr.operand_count() == 1) {
    operand_shape = &instr.operand(0)->shape();
  }
  if (operand_shape == nullptr) {
    return Invalid(instr, "the operand's layout is unknown");
  }
  const Shape& in_shape = *operand_shape;
  const std::vector<int64_t> in_m2m = MajorToMinor(in_shape);
  const std::vector<int64_t> out_m2m = MajorToMinor(out_shape);
  if (!in_shape.SameDimensions(in.shape()) ||
      !IsPermutation(in_m2m, in.shape().rank()) ||
      !IsPermutation(out_m2m, out_shape.rank())) {
    return Invalid(instr, "layout is not a permutation of the dimensions");
  }
  std::vector<uint8_t> physical(in.bytes().size());
  PermuteInto(in, in_m2m, physical.data());
  Literal out(out_shape);
  // The physical buffer viewed with the result's physical dims; result
  // logical dim out_m2m[j] is physical dim j.
  const int64_t w = ByteWidth(out_shape.element_type());
  std::vector<int64_t> phys_dims(out_shape.rank());
  for (int64_t j = 0; j < out_shape.rank(); ++j) {
    phys_dims[j] = out_shape.dim(out_m2m[j]);
  }
  const std::vector<int64_t> phys_strides = ByteStrides(phys_dims, w);
  std::vector<int64_t> src(out_shape.rank());
  for (int64_t j = 0; j < out_shape.rank(); ++j) {
    src[out_m2m[j]] = phys_strides[j];
  }
  StridedCopy(physical.data(), src, out.mutable_bytes().data(),
              ByteStrides(out_shape.dims(), w), out_shape.dims(), w);
  return out;
}

StatusOr<Literal> EvalTranspose(const HloInstruction& instr, Operands ops) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 1));
  const Literal& in = *ops[0];
  RETURN_IF_ERROR(CheckSameType(instr, in));
  const std::vector<int64_t>& perm = instr.dimensions();
  if (!IsPermutation(perm, in.shape().rank())) {
    return Invalid(instr, "dimensions=" + DimsToString(perm) +
                              " is not a permutation of the operand's " +
                              std::to_string(in.shape().rank()) + " dims");
  }
  std::vector<int64_t> dims(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) dims[i] = in.shape().dim(perm[i]);
  RETURN_IF_ERROR(CheckResultDims(instr, dims));
  Literal out(instr.shape());
  PermuteInto(in, perm, out.mutable_bytes().data());
  return out;
}

StatusOr<Literal> EvalSlice(const HloInstruction& instr, Operands ops) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 1));
  const Literal& in = *ops[0];
  RETURN_IF_ERROR(CheckSameType(instr, in));
  const std::vector<SliceDim>& slice = instr.attrs().slice;
  const int64_t rank = in.shape().rank();
  if (static_cast<int64_t>(slice.size()) != rank) {
    return Invalid(instr, "slice={} has " + std::to_string(slice.size()) +
                              " entries for rank " + std::to_string(rank));
  }
  const int64_t w = ByteWidth(in.element_type());
  const std::vector<int64_t> in_strides = ByteStrides(in.shape().dims(), w);
  std::vector<int64_t> dims(rank), src(rank);
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const SliceDim& s = slice[d];
    if (s.stride <= 0 || s.start < 0 || s.start > s.limit ||
        s.limit > in.shape().dim(d)) {
      return Invalid(
          instr, "slice dimension " + std::to_string(d) + " [" +
                     std::to_string(s.start) + ":" + std::to_string(s.limit) +
                     ":" + std::to_string(s.stride) + "] is invalid for size " +
                     std::to_string(in.shape().dim(d)));
    }
    dims[d] = (s.limit - s.start + s.stride - 1) / s.stride;
    src[d] = in_strides[d] * s.stride;
    base += s.start * in_strides[d];
  }
  RETURN_IF_ERROR(CheckResultDims(instr, dims));
  Literal out(instr.shape());
  if (out.element_count() == 0) return out;
  StridedCopy(in.bytes().data() + base, src, out.mutable_bytes().data(),
              ByteStrides(dims, w), dims, w);
  return out;
}

StatusOr<Literal> EvalReverse(const HloInstruction& instr, Operands ops) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 1));
  const Literal& in = *ops[0];
  RETURN_IF_ERROR(CheckSameType(instr, in));
  const int64_t rank = in.shape().rank();
  RETURN_IF_ERROR(CheckDimList(instr, instr.dimensions(), rank, "reverse"));
  RETURN_IF_ERROR(CheckResultDims(instr, in.shape().dims()));
  Literal out(instr.shape());
  if (out.element_count() == 0) return out;
  const int64_t w = ByteWidth(in.element_type());
  std::vector<int64_t> src = ByteStrides(in.shape().dims(), w);
  int64_t base = 0;
  for (int64_t d : instr.dimensions()) {
    base += (in.shape().dim(d) - 1) * src[d];
    src[d] = -src[d];
  }
  StridedCopy(in.bytes().data() + base, src, out.mutable_bytes().data(),
              ByteStrides(in.shape().dims(), w), in.shape().dims(), w);
  return out;
}

}  // namespace trench::oracle
