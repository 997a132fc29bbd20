#include "compiler/codegen/compile.h"

#include <algorithm>
#include <cctype>

#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/emitters.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

std::string KernelName(int index, const std::string& hlo_name) {
  std::string s = "k" + std::to_string(index) + "_";
  for (char c : hlo_name) {
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  }
  return s;
}

bool IsAlias(HloOpcode op) {
  return op == HloOpcode::kParameter || op == HloOpcode::kTuple ||
         op == HloOpcode::kGetTupleElement || op == HloOpcode::kConstant;
}

// reshape / bitcast / copy of a row-major array: an HBM-to-HBM DMA.
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

Status EmitInstruction(const HloInstruction& instr, const BufferPlan& plan,
                       KernelBuilder& kb) {
  const HloOpcode op = instr.opcode();
  if (op == HloOpcode::kReshape || op == HloOpcode::kBitcast ||
      op == HloOpcode::kCopy) {
    return EmitCopy(instr, plan, kb);
  }
  if (IsElementwiseEmittable(op)) return EmitElementwise(instr, plan, kb);
  if (IsDataMovementEmittable(op)) return EmitDataMovement(instr, plan, kb);
  if (op == HloOpcode::kReduce) return EmitReduce(instr, plan, kb);
  if (op == HloOpcode::kDot) return EmitDot(instr, plan, kb);
  return CannotCompile(
      instr,
      instr.shape().IsTuple()
          ? std::string("tuple")
          : std::string(PrimitiveTypeName(instr.shape().element_type())));
}

StatusOr<std::vector<const HloInstruction*>> ResolveTaps(
    const HloComputation& entry, const std::vector<HloInstruction*>& order,
    const CompileOptions& options) {
  std::vector<const HloInstruction*> tapped;
  if (options.taps_all) {
    tapped.assign(order.begin(), order.end());
    return tapped;
  }
  for (const std::string& name : options.taps) {
    const HloInstruction* t = entry.GetInstructionWithName(name);
    if (t == nullptr) {
      return NotFound("hloc: --taps: no instruction named '" + name +
                      "' in the entry computation");
    }
    if (std::find(tapped.begin(), tapped.end(), t) == tapped.end()) {
      tapped.push_back(t);
    }
  }
  return tapped;
}

// The final kernel: result leaves to outputs, tapped leaves to taps.
StatusOr<tpu::Kernel> CopyOutKernel(const BufferPlan& plan,
                                    const CompileOptions& options) {
  KernelBuilder kb("copy_out", options.vmem_bytes);
  int in_flight = 0;
  for (auto [src, dst] : plan.copies) {
    const tpu::BufferDecl& d = plan.buffers[dst];
    if (d.bytes == 0) continue;
    kb.Emit("saddr s1, " + plan.buffers[src].name);
    kb.Emit("saddr s2, " + d.name);
    kb.Emit("dmastart hbm[s2], hbm[s1], " + std::to_string(d.bytes) + ", 0");
    if (++in_flight == 32) {
      kb.Emit("dmawait 0");
      in_flight = 0;
    }
  }
  if (in_flight > 0) kb.Emit("dmawait 0");
  return kb.Finish();
}

}  // namespace

StatusOr<tpu::Executable> CompileModule(const HloModule& module,
                                        const CompileOptions& options) {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return InvalidArgument("hloc: module has no entry");
  std::vector<HloInstruction*> order = entry->MakeInstructionPostOrder();
  ASSIGN_OR_RETURN(std::vector<const HloInstruction*> tapped,
                   ResolveTaps(*entry, order, options));
  ASSIGN_OR_RETURN(BufferPlan plan, PlanBuffers(*entry, order, tapped));
  tpu::Executable exe;
  exe.module = "module";
  if (!module.name().empty() &&
      (std::isalpha(static_cast<unsigned char>(module.name()[0])) ||
       module.name()[0] == '_')) {
    exe.module.clear();
    for (char c : module.name()) {
      exe.module +=
          (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')
              ? c
              : '_';
    }
  }
  exe.buffers = plan.buffers;
  int index = 0;
  for (const HloInstruction* instr : order) {
    if (IsAlias(instr->opcode())) continue;
    KernelBuilder kb(KernelName(index++, instr->name()), options.vmem_bytes);
    RETURN_IF_ERROR(EmitInstruction(*instr, plan, kb));
    ASSIGN_OR_RETURN(tpu::Kernel k, kb.Finish());
    if (k.code.empty()) continue;  // Nothing to compute (empty arrays).
    exe.launches.push_back(k.name);
    exe.kernels.push_back(std::move(k));
  }
  ASSIGN_OR_RETURN(tpu::Kernel copy, CopyOutKernel(plan, options));
  if (!copy.code.empty()) {
    exe.launches.push_back(copy.name);
    exe.kernels.push_back(std::move(copy));
  }
  Status valid = tpu::ValidateExecutable(exe);
  if (!valid.ok()) {
    return Internal("hloc: emitted an invalid executable: " + valid.message());
  }
  return exe;
}

std::vector<std::string> SupportedOps() {
  std::vector<std::string> ops;
  for (int i = 0; i < kNumOpcodes; ++i) {
    HloOpcode op = static_cast<HloOpcode>(i);
    if (IsAlias(op) || IsElementwiseEmittable(op) ||
        IsDataMovementEmittable(op) || op == HloOpcode::kReduce ||
        op == HloOpcode::kDot || op == HloOpcode::kReshape ||
        op == HloOpcode::kBitcast || op == HloOpcode::kCopy) {
      ops.emplace_back(OpcodeName(op));
    }
  }
  return ops;
}

std::vector<std::string> SupportedDtypes() {
  return {"pred", "s32", "u32", "f16", "bf16", "f32"};
}

}  // namespace trench::codegen
