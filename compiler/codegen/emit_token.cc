// Tokens and ordering: after-all, add-dependency and opt-barrier. A token
// orders side effects and carries no data (XLA operation_semantics.md
// "AfterAll"; add-dependency returns its operand 0 unchanged after the
// token's dependencies; opt-barrier returns its operand unchanged and only
// stops optimizations across it, which the passes honour by treating it as
// side-effecting). The target runs kernels in schedule order, so ordering
// needs no code. The buffer plan (buffer_plan.h) gives token leaves
// zero-byte buffers and makes add-dependency and opt-barrier alias their
// operand 0's leaves; these emitters only check that the plan did so, and
// emit nothing.
#include "compiler/codegen/emitters.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {

Status EmitAfterAll(const HloInstruction& instr, const BufferPlan& plan,
                    KernelBuilder& kb) {
  (void)kb;
  if (!instr.shape().IsToken()) {
    return CannotCompile(instr, instr.shape().ToString(false));
  }
  auto it = plan.leaves.find(&instr);
  if (it == plan.leaves.end() || it->second.size() != 1 ||
      plan.buffers.at(it->second[0]).bytes != 0) {
    return CannotCompile(instr, "a token without a zero-byte leaf");
  }
  return Status::Ok();
}

Status EmitOperandAlias(const HloInstruction& instr, const BufferPlan& plan,
                        KernelBuilder& kb) {
  (void)kb;
  auto it = plan.leaves.find(&instr);
  auto op =
      plan.leaves.find(instr.operand_count() > 0 ? instr.operand(0) : nullptr);
  if (it == plan.leaves.end() || op == plan.leaves.end() ||
      it->second != op->second) {
    return CannotCompile(instr, "a value not aliasing its operand");
  }
  return Status::Ok();
}

}  // namespace trench::codegen
