// Shape rules of ops that move or re-view data without computing on it:
// parameter, constant, iota, broadcast, reshape, bitcast, transpose, slice,
// concatenate, pad, reverse and the dimension-size ops.
#include "compiler/ir/shape_inference_internal.h"

namespace trench::shape_inference_internal {
namespace {

std::string Num(int64_t v) { return std::to_string(v); }

// Dims are taken from the declared shape; checks it is an array.
StatusOr<Shape> DeclaredArray(const HloInstruction& instr) {
  if (!instr.shape().IsArray()) {
    return Err(instr,
               "result must be an array, declared " + Str(instr.shape()));
  }
  return NoLayout(instr.shape());
}

// The single entry of dimensions={d}, checked against `rank`.
StatusOr<int64_t> SingleDimension(const HloInstruction& instr, int64_t rank) {
  const auto& dims = instr.attrs().dimensions;
  if (dims.size() != 1) {
    return Err(instr,
               "needs exactly one dimension, has dimensions=" + Str(dims));
  }
  RETURN_IF_ERROR(CheckDimList(instr, dims, rank, "dimensions"));
  return dims[0];
}

}  // namespace

StatusOr<Shape> InferParameter(const HloInstruction& instr) {
  return NoLayout(instr.shape());
}

StatusOr<Shape> InferConstant(const HloInstruction& instr) {
  if (!instr.has_literal()) return Err(instr, "has no value");
  return NoLayout(instr.literal().shape());
}

StatusOr<Shape> InferIota(const HloInstruction& instr) {
  ASSIGN_OR_RETURN(Shape shape, DeclaredArray(instr));
  if (shape.rank() == 0) return Err(instr, "result must not be a scalar");
  const int64_t d = instr.attrs().iota_dimension;
  if (d < 0 || d >= shape.rank()) {
    return Err(instr, "iota_dimension " + Num(d) + " is out of range for " +
                          Str(shape));
  }
  return shape;
}

StatusOr<Shape> InferBroadcast(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  ASSIGN_OR_RETURN(Shape out, DeclaredArray(instr));
  const auto& dims = instr.attrs().dimensions;
  if (static_cast<int64_t>(dims.size()) != operand.rank()) {
    return Err(instr, "dimensions " + Str(dims) +
                          " must have one entry per "
                          "dimension of operand " +
                          Str(operand));
  }
  RETURN_IF_ERROR(CheckDimList(instr, dims, out.rank(), "dimensions"));
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (operand.dim(i) != out.dim(dims[i])) {
      return Err(instr, "operand " + Str(operand) + " dimension " + Num(i) +
                            " does not match result " + Str(out) +
                            " dimension " + Num(dims[i]));
    }
  }
  out.set_element_type(operand.element_type());
  return out;
}

StatusOr<Shape> InferReshape(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  ASSIGN_OR_RETURN(Shape out, DeclaredArray(instr));
  if (out.element_count() != operand.element_count()) {
    return Err(instr, "changes the element count: " + Str(operand) + " to " +
                          Str(out));
  }
  out.set_element_type(operand.element_type());
  return out;
}

StatusOr<Shape> InferBitcast(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  ASSIGN_OR_RETURN(Shape out, DeclaredArray(instr));
  if (out.byte_size() != operand.byte_size()) {
    return Err(instr,
               "changes the byte size: " + Str(operand) + " to " + Str(out));
  }
  return out;
}

StatusOr<Shape> InferTranspose(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  const auto& perm = instr.attrs().dimensions;
  if (static_cast<int64_t>(perm.size()) != operand.rank()) {
    return Err(instr, "dimensions " + Str(perm) +
                          " is not a permutation of the dimensions of " +
                          Str(operand));
  }
  RETURN_IF_ERROR(CheckDimList(instr, perm, operand.rank(), "dimensions"));
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(operand.dim(p));
  Shape out(operand.element_type(), dims);
  for (size_t i = 0; i < perm.size(); ++i) {
    out.set_dynamic_dim(i, operand.is_dynamic_dim(perm[i]));
  }
  return out;
}

StatusOr<Shape> InferSlice(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  const auto& slice = instr.attrs().slice;
  if (static_cast<int64_t>(slice.size()) != operand.rank()) {
    return Err(instr, "has " + Num(slice.size()) +
                          " slice dimensions for operand " + Str(operand));
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const SliceDim& s = slice[i];
    if (s.start < 0 || s.start > s.limit || s.limit > operand.dim(i) ||
        s.stride < 1) {
      return Err(instr, "slice [" + Num(s.start) + ":" + Num(s.limit) + ":" +
                            Num(s.stride) + "] is out of range for dimension " +
                            Num(i) + " of " + Str(operand));
    }
    dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
  }
  return Shape(operand.element_type(), dims);
}

StatusOr<Shape> InferConcatenate(const HloInstruction& instr) {
  if (instr.operand_count() == 0) return Err(instr, "has no operands");
  const Shape& first = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, first, "operand 0"));
  ASSIGN_OR_RETURN(int64_t d, SingleDimension(instr, first.rank()));
  Shape out = NoLayout(first);
  for (int64_t i = 1; i < instr.operand_count(); ++i) {
    const Shape& s = OperandShape(instr, i);
    RETURN_IF_ERROR(ExpectArray(instr, s, "operand " + Num(i)));
    bool ok =
        s.element_type() == first.element_type() && s.rank() == first.rank();
    for (int64_t j = 0; ok && j < s.rank(); ++j) {
      ok = j == d || s.dim(j) == first.dim(j);
    }
    if (!ok) {
      return Err(instr, "operands " + Str(first) + " and " + Str(s) +
                            " differ outside dimension " + Num(d));
    }
    out.set_dim(d, out.dim(d) + s.dim(d));
    if (s.is_dynamic_dim(d)) out.set_dynamic_dim(d, true);
  }
  return out;
}

StatusOr<Shape> InferPad(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  const Shape& value = OperandShape(instr, 1);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectScalar(instr, value, "padding value"));
  if (value.element_type() != operand.element_type()) {
    return Err(instr, "padding value " + Str(value) +
                          " does not match the type of operand " +
                          Str(operand));
  }
  const auto& padding = instr.attrs().padding;
  if (static_cast<int64_t>(padding.size()) != operand.rank()) {
    return Err(instr, "has " + Num(padding.size()) +
                          " padding dimensions for operand " + Str(operand));
  }
  Shape out = NoLayout(operand);
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PaddingDim& p = padding[i];
    if (p.interior < 0) {
      return Err(instr, "has negative interior padding in dimension " + Num(i));
    }
    const int64_t d = operand.dim(i);
    const int64_t size =
        d + p.lo + p.hi + std::max<int64_t>(d - 1, 0) * p.interior;
    if (size < 0) {
      return Err(instr, "padding makes dimension " + Num(i) + " of " +
                            Str(operand) + " negative");
    }
    out.set_dim(i, size);
  }
  return out;
}

StatusOr<Shape> InferReverse(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(CheckDimList(instr, instr.attrs().dimensions, operand.rank(),
                               "dimensions"));
  return NoLayout(operand);
}

StatusOr<Shape> InferGetDimensionSize(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(SingleDimension(instr, operand.rank()).status());
  return Shape(PrimitiveType::S32, {});
}

StatusOr<Shape> InferSetDimensionSize(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  const Shape& size = OperandShape(instr, 1);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectScalar(instr, size, "size"));
  if (size.element_type() != PrimitiveType::S32) {
    return Err(instr, "size must be s32[], got " + Str(size));
  }
  ASSIGN_OR_RETURN(int64_t d, SingleDimension(instr, operand.rank()));
  Shape out = NoLayout(operand);
  // XLA makes the dimension dynamic unless the size is a known constant;
  // which of the two the producer chose is taken from the declared shape.
  const Shape& declared = instr.shape();
  out.set_dynamic_dim(d, declared.IsArray() && declared.rank() > d &&
                             declared.is_dynamic_dim(d));
  return out;
}

StatusOr<Shape> InferDynamicReshape(const HloInstruction& instr) {
  if (instr.operand_count() < 1) return Err(instr, "has no operand");
  const Shape& operand = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  ASSIGN_OR_RETURN(Shape out, DeclaredArray(instr));
  if (instr.operand_count() != out.rank() + 1) {
    return Err(instr, "needs one size operand per result dimension of " +
                          Str(out) + ", has " + Num(instr.operand_count() - 1));
  }
  for (int64_t i = 1; i < instr.operand_count(); ++i) {
    const Shape& size = OperandShape(instr, i);
    if (!size.IsArray() || size.rank() != 0 ||
        size.element_type() != PrimitiveType::S32) {
      return Err(instr, "size operands must be s32[], got " + Str(size));
    }
  }
  // The bounds hold as many elements as the operand's bounds.
  if (out.element_count() != operand.element_count()) {
    return Err(instr, "changes the element count: " + Str(operand) + " to " +
                          Str(out));
  }
  out.set_element_type(operand.element_type());
  return out;
}

}  // namespace trench::shape_inference_internal
