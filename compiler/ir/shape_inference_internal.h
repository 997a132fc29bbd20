// Internals of shape inference shared by its per-family files. Not for use
// outside compiler/ir/shape_inference*.cc.
//
// Every rule below REQUIRES that the dispatcher (InferShape) has checked
// that all operands are non-null and that fixed-arity ops have exactly
// their arity's operand count; anything else a rule checks itself.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_attributes.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/shape.h"

namespace trench::shape_inference_internal {

// ---- Messages. ----

// InvalidArgument("%<name>: <op> <what>").
Status Err(const HloInstruction& instr, const std::string& what);
// Shape without layout, as XLA prints it: "f32[2,3]", "(f32[], s32[])".
std::string Str(const Shape& shape);
// "{0,2}".
std::string Str(const std::vector<int64_t>& dims);
std::string TypeStr(PrimitiveType t);

// ---- Checks. ----

const Shape& OperandShape(const HloInstruction& instr, int64_t i);
// Ok when `shape` is an array (not tuple, not token); else an error naming
// `what` ("operand 1", "start index").
Status ExpectArray(const HloInstruction& instr, const Shape& shape,
                   const std::string& what);
Status ExpectScalar(const HloInstruction& instr, const Shape& shape,
                    const std::string& what);
// Ok when every entry of `dims` is in [0, rank) and none repeats; `what`
// names the attribute ("dimensions", "lhs_batch_dims").
Status CheckDimList(const HloInstruction& instr,
                    const std::vector<int64_t>& dims, int64_t rank,
                    const std::string& what);
bool Contains(const std::vector<int64_t>& v, int64_t x);
bool IsSortedStrictly(const std::vector<int64_t>& v);
// The same shape with all layouts removed.
Shape NoLayout(Shape shape);
// Array shape of type `t` with the dims (and dynamic flags) of `dims_from`.
Shape WithType(const Shape& dims_from, PrimitiveType t);
// Equal element types, or both floating point (XLA's "ignoring fp
// precision" for reducer inputs).
bool SameTypeIgnoringFpPrecision(PrimitiveType a, PrimitiveType b);

// ---- Called computations. ----

struct Signature {
  std::string name;                  // The computation's name.
  std::vector<const Shape*> params;  // By parameter number.
  const Shape* result = nullptr;     // The root's shape.
};
// Checks that `instr` has exactly `count` called computations.
Status ExpectCalledCount(const HloInstruction& instr, int64_t count);
// The signature of called computation `index` (which plays `role`, e.g.
// "to_apply", "body"). Fails when it is missing, has no root, or its
// parameters are not numbered 0..n-1.
StatusOr<Signature> CalleeSignature(const HloInstruction& instr, int64_t index,
                                    const std::string& role);
// Checks a reduction computation: 2N scalar parameters (accumulators of
// types `acc`, then inputs of types `in`, which may differ in floating
// point precision) returning the N accumulators (a tuple when N > 1).
Status CheckReducer(const HloInstruction& instr, const Signature& sig,
                    const std::vector<PrimitiveType>& acc,
                    const std::vector<PrimitiveType>& in);
// Checks a comparator: 2N scalar parameters, (2i, 2i+1) of type types[i],
// returning pred[].
Status CheckComparator(const HloInstruction& instr, const Signature& sig,
                       const std::vector<PrimitiveType>& types);

// ---- Windows (reduce-window, select-and-scatter, convolution). ----

// The window attribute, or an empty window when it is absent.
const std::vector<WindowDim>& WindowOf(const HloInstruction& instr);
// Output dims of sliding `window` over `base` (one window dim per base
// dim): dilate the base, pad it, count strided window positions.
StatusOr<std::vector<int64_t>> WindowOutputDims(
    const HloInstruction& instr, const std::vector<int64_t>& base,
    const std::vector<WindowDim>& window);

// ---- Rules, by family. ----
using Rule = StatusOr<Shape> (*)(const HloInstruction&);

// shape_inference_elementwise.cc
StatusOr<Shape> InferUnary(const HloInstruction& instr);
StatusOr<Shape> InferBinary(const HloInstruction& instr);
StatusOr<Shape> InferCompare(const HloInstruction& instr);
StatusOr<Shape> InferSelect(const HloInstruction& instr);
StatusOr<Shape> InferClamp(const HloInstruction& instr);
StatusOr<Shape> InferConvert(const HloInstruction& instr);
StatusOr<Shape> InferBitcastConvert(const HloInstruction& instr);
StatusOr<Shape> InferReducePrecision(const HloInstruction& instr);
StatusOr<Shape> InferMap(const HloInstruction& instr);
StatusOr<Shape> InferStochasticConvert(const HloInstruction& instr);

// shape_inference_structural.cc
StatusOr<Shape> InferParameter(const HloInstruction& instr);
StatusOr<Shape> InferConstant(const HloInstruction& instr);
StatusOr<Shape> InferIota(const HloInstruction& instr);
StatusOr<Shape> InferBroadcast(const HloInstruction& instr);
StatusOr<Shape> InferReshape(const HloInstruction& instr);
StatusOr<Shape> InferBitcast(const HloInstruction& instr);
StatusOr<Shape> InferTranspose(const HloInstruction& instr);
StatusOr<Shape> InferSlice(const HloInstruction& instr);
StatusOr<Shape> InferConcatenate(const HloInstruction& instr);
StatusOr<Shape> InferPad(const HloInstruction& instr);
StatusOr<Shape> InferReverse(const HloInstruction& instr);
StatusOr<Shape> InferGetDimensionSize(const HloInstruction& instr);
StatusOr<Shape> InferSetDimensionSize(const HloInstruction& instr);
StatusOr<Shape> InferDynamicReshape(const HloInstruction& instr);

// shape_inference_control.cc
StatusOr<Shape> InferTuple(const HloInstruction& instr);
StatusOr<Shape> InferGetTupleElement(const HloInstruction& instr);
StatusOr<Shape> InferCall(const HloInstruction& instr);  // call, fusion
StatusOr<Shape> InferWhile(const HloInstruction& instr);
StatusOr<Shape> InferConditional(const HloInstruction& instr);
// opt-barrier, domain.
StatusOr<Shape> InferIdentity(const HloInstruction& instr);
StatusOr<Shape> InferCopyStart(const HloInstruction& instr);
StatusOr<Shape> InferCopyDone(const HloInstruction& instr);
StatusOr<Shape> InferAddDependency(const HloInstruction& instr);
StatusOr<Shape> InferAfterAll(const HloInstruction& instr);

// shape_inference_indexing.cc
StatusOr<Shape> InferDynamicSlice(const HloInstruction& instr);
StatusOr<Shape> InferDynamicUpdateSlice(const HloInstruction& instr);
StatusOr<Shape> InferGather(const HloInstruction& instr);
StatusOr<Shape> InferScatter(const HloInstruction& instr);

// shape_inference_reduce.cc
StatusOr<Shape> InferReduce(const HloInstruction& instr);
StatusOr<Shape> InferReduceWindow(const HloInstruction& instr);
StatusOr<Shape> InferSelectAndScatter(const HloInstruction& instr);
StatusOr<Shape> InferSort(const HloInstruction& instr);

// shape_inference_collective.cc
StatusOr<Shape> InferAllReduce(const HloInstruction& instr);
StatusOr<Shape> InferAllToAll(const HloInstruction& instr);

// shape_inference_contraction.cc
StatusOr<Shape> InferDot(const HloInstruction& instr);
StatusOr<Shape> InferConvolution(const HloInstruction& instr);
StatusOr<Shape> InferCholesky(const HloInstruction& instr);

}  // namespace trench::shape_inference_internal
