// Dispatch from HLO opcode to emitter, and the emitters' list, generated
// from emitters.def.
#include <string_view>
#include <utility>
#include <vector>

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

const std::vector<EmitterInfo>& RegisteredEmitters() {
  static const std::vector<EmitterInfo>* emitters = [] {
    auto* out = new std::vector<EmitterInfo>{
#define EMITTER(fn, sources) {#fn, sources, {}},
#include "compiler/codegen/emitters.def"
    };
    const std::pair<std::string_view, HloOpcode> rows[] = {
#define X(opcode, fn) {#fn, HloOpcode::opcode},
#include "compiler/codegen/emitters.def"
    };
    for (const auto& [fn, op] : rows) {
      for (EmitterInfo& e : *out) {
        if (e.name == fn) e.ops.emplace_back(OpcodeName(op));
      }
    }
    return out;
  }();
  return *emitters;
}

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
