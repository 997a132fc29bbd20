// Shape rules of the collectives whose result does not depend on the
// mesh (operation_semantics.md): all-reduce gives its operands' shapes (a
// tuple of them for several operands), all-to-all its operand's shape
// (with dimensions) or a tuple of its operands' (without). All-gather and
// reduce-scatter scale a dimension by the group size, which an empty
// replica_groups leaves to the mesh, and collective-permute has forms
// (combined, in place) whose results differ: they have no rule
// (InferShape answers Unimplemented and the declared shape is trusted).
#include "compiler/ir/shape_inference_internal.h"

namespace trench::shape_inference_internal {
namespace {

// The operands' shapes: one array operand gives its shape, several a
// tuple of them.
StatusOr<Shape> OperandsAsResult(const HloInstruction& instr) {
  if (instr.operand_count() == 0) return Err(instr, "needs an operand");
  std::vector<Shape> shapes;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    const Shape& s = OperandShape(instr, i);
    RETURN_IF_ERROR(ExpectArray(instr, s, "operand " + std::to_string(i)));
    shapes.push_back(s);
  }
  if (shapes.size() == 1) return NoLayout(shapes[0]);
  return NoLayout(Shape::Tuple(std::move(shapes)));
}

}  // namespace

StatusOr<Shape> InferAllReduce(const HloInstruction& instr) {
  return OperandsAsResult(instr);
}

StatusOr<Shape> InferAllToAll(const HloInstruction& instr) {
  const std::vector<int64_t>& dims = instr.attrs().dimensions;
  if (instr.operand_count() == 1 && !dims.empty()) {
    // The array form splits and concatenates along dimensions[0].
    const Shape& s = OperandShape(instr, 0);
    RETURN_IF_ERROR(ExpectArray(instr, s, "operand 0"));
    RETURN_IF_ERROR(CheckDimList(instr, dims, s.rank(), "dimensions"));
    return NoLayout(s);
  }
  // The tuple form (no dimensions): a tuple even of one operand.
  ASSIGN_OR_RETURN(Shape shape, OperandsAsResult(instr));
  if (!shape.IsTuple()) shape = Shape::Tuple({shape});
  return NoLayout(std::move(shape));
}

}  // namespace trench::shape_inference_internal
