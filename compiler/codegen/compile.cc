#include "compiler/codegen/compile.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/emit_collectives_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/opcode.h"
#include "tpu/topology.h"

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

// Taps name entry instructions or instructions inside fused computations
// (whose values the fusion's kernel writes to tap buffers).
StatusOr<std::vector<const HloInstruction*>> ResolveTaps(
    const HloModule& module, const std::vector<HloInstruction*>& order,
    const CompileOptions& options) {
  std::vector<const HloInstruction*> tapped;
  if (options.taps_all) {
    for (const HloInstruction* instr : order) {
      tapped.push_back(instr);
      if (instr->opcode() != HloOpcode::kFusion) continue;
      for (const HloComputation* c : instr->called_computations()) {
        for (const HloInstruction* f : c->MakeInstructionPostOrder()) {
          if (f->opcode() != HloOpcode::kParameter) tapped.push_back(f);
        }
      }
    }
    return tapped;
  }
  std::unordered_map<std::string, const HloInstruction*> by_name;
  for (const HloInstruction* i : TappableInstructions(module)) {
    by_name.emplace(i->name(), i);
  }
  for (const std::string& name : options.taps) {
    auto it = by_name.find(name);
    const HloInstruction* t = it == by_name.end() ? nullptr : it->second;
    if (t == nullptr) {
      return NotFound("hloc: --taps: no instruction named '" + name +
                      "' in the entry computation or a fused computation");
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

// Adds the buffer collectives receive into (emit_collectives_util.h),
// as large as the largest collective of the module needs.
void AddCollectiveScratch(const HloModule& module, BufferPlan* plan) {
  int64_t bytes = 0;
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* instr : c->instructions()) {
      bytes = std::max(bytes, coll::CollectiveScratchBytes(*instr, plan->mesh));
    }
  }
  if (bytes == 0) return;
  tpu::BufferDecl d;
  d.name = "collective_scratch";
  d.role = tpu::BufferRole::kTemp;
  d.dims = {bytes};
  d.bytes = bytes;
  plan->collective_scratch = d.name;
  plan->buffers.push_back(std::move(d));
}

}  // namespace

StatusOr<tpu::Executable> CompileModule(const HloModule& module,
                                        const CompileOptions& options) {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return InvalidArgument("hloc: module has no entry");
  std::vector<HloInstruction*> order = entry->MakeInstructionPostOrder();
  ASSIGN_OR_RETURN(std::vector<const HloInstruction*> tapped,
                   ResolveTaps(module, order, options));
  ASSIGN_OR_RETURN(BufferPlan plan,
                   PlanBuffers(*entry, order, tapped,
                               {.reuse = options.buffer_assignment,
                                .ctx = options.context}));
  if (options.mesh.size() < 1 || options.mesh.size() > tpu::kMaxSliceChips) {
    return InvalidArgument("hloc: a mesh of " +
                           std::to_string(options.mesh.replicas) + "x" +
                           std::to_string(options.mesh.partitions) +
                           " devices does not fit a slice of 1.." +
                           std::to_string(tpu::kMaxSliceChips) + " chips");
  }
  plan.mesh = options.mesh;
  AddCollectiveScratch(module, &plan);
  tpu::Executable exe;
  exe.slice = static_cast<int>(options.mesh.size());
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

std::vector<const HloInstruction*> TappableInstructions(
    const HloModule& module) {
  std::vector<const HloInstruction*> out;
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return out;
  std::vector<const HloComputation*> stack;
  for (const HloInstruction* instr : entry->instructions()) {
    out.push_back(instr);
    if (instr->opcode() != HloOpcode::kFusion) continue;
    stack.insert(stack.end(), instr->called_computations().begin(),
                 instr->called_computations().end());
  }
  std::set<const HloComputation*> seen;
  while (!stack.empty()) {
    const HloComputation* c = stack.back();
    stack.pop_back();
    if (!seen.insert(c).second) continue;
    for (const HloInstruction* instr : c->instructions()) {
      out.push_back(instr);
      stack.insert(stack.end(), instr->called_computations().begin(),
                   instr->called_computations().end());
    }
  }
  return out;
}

std::vector<std::string> SupportedOps() {
  std::vector<std::string> ops;
  for (int i = 0; i < kNumOpcodes; ++i) {
    HloOpcode op = static_cast<HloOpcode>(i);
    if (IsAlias(op) || IsEmittable(op)) ops.emplace_back(OpcodeName(op));
  }
  return ops;
}

std::vector<std::string> SupportedDtypes() {
  std::vector<std::string> out;
  for (PrimitiveType t :
       {PrimitiveType::PRED, PrimitiveType::S8, PrimitiveType::S16,
        PrimitiveType::S32, PrimitiveType::S64, PrimitiveType::U8,
        PrimitiveType::U16, PrimitiveType::U32, PrimitiveType::U64,
        PrimitiveType::F16, PrimitiveType::BF16, PrimitiveType::F32,
        PrimitiveType::F64, PrimitiveType::C64, PrimitiveType::C128}) {
    if (SupportedDtype(t)) out.emplace_back(PrimitiveTypeName(t));
  }
  return out;
}

}  // namespace trench::codegen
