// Shape rules of contractions: dot (general dimension numbers) and
// convolution (N spatial dims, grouped and batch-grouped).
#include <algorithm>

#include "compiler/ir/shape_inference_internal.h"

namespace trench::shape_inference_internal {
namespace {

std::string Num(int64_t v) { return std::to_string(v); }

std::vector<int64_t> Concat(const std::vector<int64_t>& a,
                            const std::vector<int64_t>& b) {
  std::vector<int64_t> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// The element type of a contraction's result: the declared one (XLA's
// preferred_element_type). As in XLA it may widen the operands' type but not
// narrow an integer one; floating-point operands give a floating-point (or
// complex) result.
StatusOr<PrimitiveType> ResultType(const HloInstruction& instr,
                                   const Shape& lhs, const Shape& rhs) {
  const PrimitiveType t = instr.shape().element_type();
  if (!IsArrayType(t)) {
    return Err(instr,
               "result must be an array, declared " + Str(instr.shape()));
  }
  const PrimitiveType a = lhs.element_type(), b = rhs.element_type();
  const bool float_operands =
      IsFloat(a) || IsFloat(b) || IsComplex(a) || IsComplex(b);
  if (float_operands && !IsFloat(t) && !IsComplex(t)) {
    return Err(instr, "result type " + TypeStr(t) +
                          " is not floating-point for operands " + Str(lhs) +
                          " and " + Str(rhs));
  }
  if (!float_operands && IsInteger(t) &&
      BitWidth(t) < std::max(BitWidth(a), BitWidth(b))) {
    return Err(instr, "result type " + TypeStr(t) +
                          " is narrower than operands " + Str(lhs) + " and " +
                          Str(rhs));
  }
  return t;
}

Status CheckOperandPrecision(const HloInstruction& instr) {
  const size_t n = instr.attrs().operand_precision.size();
  if (n != 0 && n != 2) {
    return Err(instr,
               "operand_precision has " + Num(n) + " entries, expected 2");
  }
  return Status::Ok();
}

// Checks that dims {a, b, rest...} are a permutation of [0, rank).
Status CheckLabels(const HloInstruction& instr, int64_t a, int64_t b,
                   const std::vector<int64_t>& rest, int64_t rank,
                   const std::string& what) {
  const std::vector<int64_t> all = Concat({a, b}, rest);
  if (static_cast<int64_t>(all.size()) != rank) {
    return Err(instr, what + " dimension numbers " + Str(all) +
                          " do not cover rank " + Num(rank));
  }
  return CheckDimList(instr, all, rank, what + " dimension numbers");
}

}  // namespace

StatusOr<Shape> InferDot(const HloInstruction& instr) {
  const Shape& lhs = OperandShape(instr, 0);
  const Shape& rhs = OperandShape(instr, 1);
  RETURN_IF_ERROR(ExpectArray(instr, lhs, "lhs"));
  RETURN_IF_ERROR(ExpectArray(instr, rhs, "rhs"));
  RETURN_IF_ERROR(CheckOperandPrecision(instr));
  const DotDimNumbers dn = instr.attrs().dot_dnums.value_or(DotDimNumbers{});
  RETURN_IF_ERROR(CheckDimList(instr, Concat(dn.lhs_batch, dn.lhs_contracting),
                               lhs.rank(), "lhs batch/contracting dims"));
  RETURN_IF_ERROR(CheckDimList(instr, Concat(dn.rhs_batch, dn.rhs_contracting),
                               rhs.rank(), "rhs batch/contracting dims"));
  if (dn.lhs_batch.size() != dn.rhs_batch.size() ||
      dn.lhs_contracting.size() != dn.rhs_contracting.size()) {
    return Err(instr,
               "lhs and rhs have different numbers of batch or "
               "contracting dimensions");
  }
  for (size_t i = 0; i < dn.lhs_batch.size(); ++i) {
    if (lhs.dim(dn.lhs_batch[i]) != rhs.dim(dn.rhs_batch[i])) {
      return Err(instr, "batch dimension sizes differ: " + Str(lhs) + " and " +
                            Str(rhs));
    }
  }
  for (size_t i = 0; i < dn.lhs_contracting.size(); ++i) {
    if (lhs.dim(dn.lhs_contracting[i]) != rhs.dim(dn.rhs_contracting[i])) {
      return Err(instr, "contracting dimension sizes differ: " + Str(lhs) +
                            " and " + Str(rhs));
    }
  }
  ASSIGN_OR_RETURN(PrimitiveType type, ResultType(instr, lhs, rhs));
  std::vector<int64_t> dims;
  for (int64_t d : dn.lhs_batch) dims.push_back(lhs.dim(d));
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    if (!Contains(dn.lhs_batch, i) && !Contains(dn.lhs_contracting, i)) {
      dims.push_back(lhs.dim(i));
    }
  }
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (!Contains(dn.rhs_batch, i) && !Contains(dn.rhs_contracting, i)) {
      dims.push_back(rhs.dim(i));
    }
  }
  return Shape(type, dims);
}

StatusOr<Shape> InferConvolution(const HloInstruction& instr) {
  const Shape& lhs = OperandShape(instr, 0);
  const Shape& rhs = OperandShape(instr, 1);
  RETURN_IF_ERROR(ExpectArray(instr, lhs, "lhs"));
  RETURN_IF_ERROR(ExpectArray(instr, rhs, "rhs"));
  RETURN_IF_ERROR(CheckOperandPrecision(instr));
  if (!instr.attrs().conv_dnums) return Err(instr, "has no dim_labels");
  const ConvDimNumbers& dn = *instr.attrs().conv_dnums;
  const int64_t spatial = dn.input_spatial.size();
  if (static_cast<int64_t>(dn.kernel_spatial.size()) != spatial ||
      static_cast<int64_t>(dn.output_spatial.size()) != spatial) {
    return Err(instr, "dim_labels have different spatial dimension counts");
  }
  if (lhs.rank() != spatial + 2 || rhs.rank() != spatial + 2) {
    return Err(instr, "operands " + Str(lhs) + " and " + Str(rhs) +
                          " must have rank " + Num(spatial + 2));
  }
  RETURN_IF_ERROR(CheckLabels(instr, dn.input_batch, dn.input_feature,
                              dn.input_spatial, lhs.rank(), "input"));
  RETURN_IF_ERROR(CheckLabels(instr, dn.kernel_input_feature,
                              dn.kernel_output_feature, dn.kernel_spatial,
                              rhs.rank(), "kernel"));
  RETURN_IF_ERROR(CheckLabels(instr, dn.output_batch, dn.output_feature,
                              dn.output_spatial, spatial + 2, "output"));
  const int64_t fgc = instr.attrs().feature_group_count;
  const int64_t bgc = instr.attrs().batch_group_count;
  if (fgc < 1 || bgc < 1 || (fgc > 1 && bgc > 1)) {
    return Err(instr, "feature_group_count " + Num(fgc) +
                          " and batch_group_count " + Num(bgc) +
                          " must be positive and not both above 1");
  }
  const int64_t batch = lhs.dim(dn.input_batch);
  const int64_t in_features = lhs.dim(dn.input_feature);
  const int64_t kernel_in = rhs.dim(dn.kernel_input_feature);
  const int64_t kernel_out = rhs.dim(dn.kernel_output_feature);
  if (in_features % fgc != 0 || in_features / fgc != kernel_in) {
    return Err(instr, "input features " + Num(in_features) +
                          " / feature_group_count " + Num(fgc) +
                          " must equal kernel input features " +
                          Num(kernel_in));
  }
  if (kernel_out % fgc != 0 || kernel_out % bgc != 0 || batch % bgc != 0) {
    return Err(instr, "kernel output features " + Num(kernel_out) +
                          " and batch " + Num(batch) +
                          " must divide by the group counts");
  }
  const std::vector<WindowDim>& window = WindowOf(instr);
  if (static_cast<int64_t>(window.size()) != spatial) {
    return Err(instr, "window has " + Num(window.size()) +
                          " dimension(s), expected " + Num(spatial));
  }
  std::vector<int64_t> base;
  for (int64_t i = 0; i < spatial; ++i) {
    if (window[i].size != rhs.dim(dn.kernel_spatial[i])) {
      return Err(instr, "window size " + Num(window[i].size) +
                            " does not match kernel spatial dimension " +
                            Num(rhs.dim(dn.kernel_spatial[i])));
    }
    base.push_back(lhs.dim(dn.input_spatial[i]));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> out_spatial,
                   WindowOutputDims(instr, base, window));
  ASSIGN_OR_RETURN(PrimitiveType type, ResultType(instr, lhs, rhs));
  std::vector<int64_t> dims(spatial + 2);
  dims[dn.output_batch] = batch / bgc;
  dims[dn.output_feature] = kernel_out;
  for (int64_t i = 0; i < spatial; ++i) {
    dims[dn.output_spatial[i]] = out_spatial[i];
  }
  return Shape(type, dims);
}

StatusOr<Shape> InferCholesky(const HloInstruction& instr) {
  const Shape& a = OperandShape(instr, 0);
  RETURN_IF_ERROR(ExpectArray(instr, a, "operand"));
  if (!IsFloat(a.element_type()) && !IsComplex(a.element_type())) {
    return Err(instr,
               "expects a floating-point or complex operand, got " + Str(a));
  }
  if (a.rank() < 2 || a.dim(a.rank() - 1) != a.dim(a.rank() - 2)) {
    return Err(instr,
               "operand " + Str(a) + " must be a batch of square matrices");
  }
  return NoLayout(a);
}

}  // namespace trench::shape_inference_internal
