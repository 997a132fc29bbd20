// Dispatch from HLO opcode to emitter, generated from emitters.def.
#include "compiler/codegen/emitters.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

using EmitterFn = Status (*)(const HloInstruction&, const BufferPlan&,
                             KernelBuilder&);

EmitterFn EmitterFor(HloOpcode op) {
  switch (op) {
#define X(opcode, fn)     \
  case HloOpcode::opcode: \
    return &fn;
#include "compiler/codegen/emitters.def"
#undef X
    default:
      return nullptr;
  }
}

}  // namespace

bool IsEmittable(HloOpcode op) { return EmitterFor(op) != nullptr; }

Status EmitInstruction(const HloInstruction& instr, const BufferPlan& plan,
                       KernelBuilder& kb) {
  EmitterFn fn = EmitterFor(instr.opcode());
  if (fn == nullptr) {
    return CannotCompile(
        instr,
        instr.shape().IsTuple()
            ? std::string("tuple")
            : std::string(PrimitiveTypeName(instr.shape().element_type())));
  }
  return fn(instr, plan, kb);
}

}  // namespace trench::codegen
