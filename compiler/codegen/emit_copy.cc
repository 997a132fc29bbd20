// reshape, bitcast and copy: every buffer of the code generator is a dense
// row-major array (layouts are logical only), so all three are one
// HBM-to-HBM DMA of the operand's bytes.
#include "compiler/codegen/emitters.h"

namespace trench::codegen {

Status EmitCopy(const HloInstruction& instr, const BufferPlan& plan,
                KernelBuilder& kb) {
  ArrayBuffer in = plan.Array(instr.operand(0));
  ArrayBuffer out = plan.Array(&instr);
  if (in.dtype != out.dtype || in.bytes != out.bytes) {
    return CannotCompile(instr, in.dtype + " -> " + out.dtype);
  }
  if (out.bytes == 0) return Status::Ok();
  kb.Emit("saddr s1, " + in.name);
  kb.Emit("saddr s2, " + out.name);
  kb.Emit("dmastart hbm[s2], hbm[s1], " + std::to_string(out.bytes) + ", 0");
  kb.Emit("dmawait 0");
  return Status::Ok();
}

}  // namespace trench::codegen
