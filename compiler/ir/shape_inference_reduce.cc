// Shape rules of reductions and sort: reduce, reduce-window (both variadic),
// select-and-scatter and sort.
#include "compiler/ir/shape_inference_internal.h"

namespace trench::shape_inference_internal {
namespace {

std::string Num(int64_t v) { return std::to_string(v); }

// The operands of a variadic reduction: N arrays of equal dims followed by
// N scalar initial values.
struct ReduceOperands {
  const Shape* input = nullptr;  // Input 0, for dims.
  std::vector<PrimitiveType> input_types, init_types;
};

StatusOr<ReduceOperands> SplitReduceOperands(const HloInstruction& instr) {
  const int64_t count = instr.operand_count();
  if (count < 2 || count % 2 != 0) {
    return Err(instr, "needs N inputs and N init values, has " + Num(count) +
                          " operands");
  }
  const int64_t n = count / 2;
  ReduceOperands ops;
  ops.input = &OperandShape(instr, 0);
  for (int64_t i = 0; i < n; ++i) {
    const Shape& in = OperandShape(instr, i);
    const Shape& init = OperandShape(instr, n + i);
    RETURN_IF_ERROR(ExpectArray(instr, in, "input " + Num(i)));
    RETURN_IF_ERROR(ExpectScalar(instr, init, "init value " + Num(i)));
    if (in.dims() != ops.input->dims()) {
      return Err(instr, "inputs have different dimensions " + Str(*ops.input) +
                            " and " + Str(in));
    }
    ops.input_types.push_back(in.element_type());
    ops.init_types.push_back(init.element_type());
  }
  return ops;
}

// One array of each type with the given dims; a tuple when more than one.
Shape ResultOf(const std::vector<PrimitiveType>& types, const Shape& dims) {
  if (types.size() == 1) return WithType(dims, types[0]);
  std::vector<Shape> elements;
  for (PrimitiveType t : types) elements.push_back(WithType(dims, t));
  return Shape::Tuple(elements);
}

Status CheckReducerOf(const HloInstruction& instr, const ReduceOperands& ops) {
  RETURN_IF_ERROR(ExpectCalledCount(instr, 1));
  ASSIGN_OR_RETURN(Signature sig, CalleeSignature(instr, 0, "to_apply"));
  return CheckReducer(instr, sig, ops.init_types, ops.input_types);
}

}  // namespace

StatusOr<Shape> InferReduce(const HloInstruction& instr) {
  ASSIGN_OR_RETURN(ReduceOperands ops, SplitReduceOperands(instr));
  const Shape& input = *ops.input;
  const auto& reduced = instr.attrs().dimensions;
  RETURN_IF_ERROR(CheckDimList(instr, reduced, input.rank(), "dimensions"));
  RETURN_IF_ERROR(CheckReducerOf(instr, ops));
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  for (int64_t i = 0; i < input.rank(); ++i) {
    if (Contains(reduced, i)) continue;
    dims.push_back(input.dim(i));
    dynamic.push_back(input.is_dynamic_dim(i));
  }
  Shape kept(input.element_type(), dims);
  for (size_t i = 0; i < dynamic.size(); ++i) {
    kept.set_dynamic_dim(i, dynamic[i]);
  }
  return ResultOf(ops.init_types, kept);
}

StatusOr<Shape> InferReduceWindow(const HloInstruction& instr) {
  ASSIGN_OR_RETURN(ReduceOperands ops, SplitReduceOperands(instr));
  ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                   WindowOutputDims(instr, ops.input->dims(), WindowOf(instr)));
  RETURN_IF_ERROR(CheckReducerOf(instr, ops));
  return ResultOf(ops.init_types, Shape(ops.input->element_type(), dims));
}

StatusOr<Shape> InferSelectAndScatter(const HloInstruction& instr) {
  const Shape& operand = OperandShape(instr, 0);
  const Shape& source = OperandShape(instr, 1);
  const Shape& init = OperandShape(instr, 2);
  RETURN_IF_ERROR(ExpectArray(instr, operand, "operand"));
  RETURN_IF_ERROR(ExpectArray(instr, source, "source"));
  RETURN_IF_ERROR(ExpectScalar(instr, init, "init value"));
  ASSIGN_OR_RETURN(std::vector<int64_t> windows,
                   WindowOutputDims(instr, operand.dims(), WindowOf(instr)));
  if (source.dims() != windows ||
      !SameTypeIgnoringFpPrecision(source.element_type(),
                                   operand.element_type())) {
    return Err(instr, "source " + Str(source) +
                          " does not match the windows of operand " +
                          Str(operand) + ": " +
                          Str(Shape(operand.element_type(), windows)));
  }
  RETURN_IF_ERROR(ExpectCalledCount(instr, 2));
  ASSIGN_OR_RETURN(Signature select, CalleeSignature(instr, 0, "select"));
  RETURN_IF_ERROR(CheckComparator(instr, select, {operand.element_type()}));
  ASSIGN_OR_RETURN(Signature scatter, CalleeSignature(instr, 1, "scatter"));
  RETURN_IF_ERROR(CheckReducer(instr, scatter, {init.element_type()},
                               {source.element_type()}));
  return NoLayout(operand);
}

StatusOr<Shape> InferSort(const HloInstruction& instr) {
  if (instr.operand_count() == 0) return Err(instr, "has no operands");
  const Shape& first = OperandShape(instr, 0);
  std::vector<PrimitiveType> types;
  std::vector<Shape> results;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    const Shape& s = OperandShape(instr, i);
    RETURN_IF_ERROR(ExpectArray(instr, s, "operand " + Num(i)));
    if (s.dims() != first.dims()) {
      return Err(instr, "operands have different dimensions " + Str(first) +
                            " and " + Str(s));
    }
    types.push_back(s.element_type());
    results.push_back(NoLayout(s));
  }
  const auto& dims = instr.attrs().dimensions;
  if (dims.size() != 1) {
    return Err(instr,
               "needs exactly one dimension, has dimensions=" + Str(dims));
  }
  RETURN_IF_ERROR(CheckDimList(instr, dims, first.rank(), "dimensions"));
  RETURN_IF_ERROR(ExpectCalledCount(instr, 1));
  ASSIGN_OR_RETURN(Signature sig, CalleeSignature(instr, 0, "comparator"));
  RETURN_IF_ERROR(CheckComparator(instr, sig, types));
  return results.size() == 1 ? results[0] : Shape::Tuple(results);
}

}  // namespace trench::shape_inference_internal
