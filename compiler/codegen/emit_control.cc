// Control flow: while, conditional and call. The executable is a linear
// list of kernel launches, so each of these is ONE kernel whose scalar unit
// runs the control flow: the called computations' instructions are emitted
// inline, one after another, by their ordinary emitters (EmitInstruction),
// with VMEM released between instructions. Nothing is kept in registers
// across an emitted instruction (emitters own s0..s31, v0..v31, m0..m7):
// loop state and branch results live in HBM buffers (buffer_plan.h), a
// while's predicate and a conditional's selector are read with `sld` from
// their HBM buffers.
//
// while (XLA semantics, operation_semantics.md "While"): state = init;
// loop { if (!cond(state)) break; state = body(state); }.
// conditional: an s32 (any integer) index selects branch i, an index
// outside [0, N) selects branch N-1; a pred selects branch 0 (true) or 1.
// call: the computation applied to the operands. A fusion the fused-kernel
// emitter does not accept runs the same way (emit_inline.h).
#include <string>
#include <vector>

#include "compiler/codegen/emit_inline.h"
#include "compiler/codegen/emitters.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

// DMA semaphore of the copies below (emitters wait on theirs before they
// return, so any works; a distinct one keeps dumps readable).
constexpr int kCopySem = 2;

bool IsAliasOp(HloOpcode op) {
  return op == HloOpcode::kParameter || op == HloOpcode::kTuple ||
         op == HloOpcode::kGetTupleElement || op == HloOpcode::kConstant ||
         op == HloOpcode::kAddDependency ||
         op == HloOpcode::kOptimizationBarrier;
}

std::vector<int64_t> LeafBytes(const Shape& shape) {
  std::vector<int64_t> out;
  ForEachLeafShape(shape, [&](const Shape& s) {
    out.push_back(s.IsArray() ? s.byte_size() : 0);
  });
  return out;
}

// HBM-to-HBM copies src[k] -> dst[k] of bytes[k] each, skipping leaves
// already in place and empty ones, then waits. REQUIRES: no destination is
// a source of another copy in the same call.
void CopyLeaves(KernelBuilder& kb, const BufferPlan& plan,
                const std::vector<int>& src, const std::vector<int>& dst,
                const std::vector<int64_t>& bytes) {
  int in_flight = 0;
  for (size_t k = 0; k < dst.size(); ++k) {
    if (src[k] == dst[k] || bytes[k] == 0) continue;
    kb.Emit("saddr s28, " + plan.buffers[src[k]].name);
    kb.Emit("saddr s29, " + plan.buffers[dst[k]].name);
    kb.Emit("dmastart hbm[s29], hbm[s28], " + std::to_string(bytes[k]) + ", " +
            std::to_string(kCopySem));
    if (++in_flight == 32) {
      kb.Emit("dmawait " + std::to_string(kCopySem));
      in_flight = 0;
    }
  }
  if (in_flight > 0) kb.Emit("dmawait " + std::to_string(kCopySem));
}

// Copies `args` (leaves per parameter) into `c`'s parameter buffers where
// they are not the same buffers (computations with several call sites).
void BindParameters(KernelBuilder& kb, const BufferPlan& plan,
                    const HloComputation& c,
                    const std::vector<std::vector<int>>& args) {
  std::vector<int> src, dst;
  std::vector<int64_t> bytes;
  for (int64_t p = 0; p < c.num_parameters(); ++p) {
    const HloInstruction* param = c.parameter_instruction(p);
    const std::vector<int>& pl = plan.leaves.at(param);
    std::vector<int64_t> b = LeafBytes(param->shape());
    src.insert(src.end(), args[p].begin(), args[p].end());
    dst.insert(dst.end(), pl.begin(), pl.end());
    bytes.insert(bytes.end(), b.begin(), b.end());
  }
  CopyLeaves(kb, plan, src, dst, bytes);
}

// Emits every instruction of `c` (post order) into `kb`, each with the
// VMEM it allocates released afterwards.
Status EmitComputationInline(const HloComputation& c, const BufferPlan& plan,
                             KernelBuilder& kb) {
  for (const HloInstruction* instr : c.MakeInstructionPostOrder()) {
    if (IsAliasOp(instr->opcode())) continue;
    const int64_t mark = kb.VmemMark();
    RETURN_IF_ERROR(EmitInstruction(*instr, plan, kb));
    kb.ReleaseVmem(mark);
  }
  return Status::Ok();
}

// s29 = the scalar at HBM buffer `buffer` (sld type `type`).
void LoadScalar(KernelBuilder& kb, const std::string& buffer,
                const std::string& type) {
  kb.Emit("saddr s28, " + buffer);
  kb.Emit("sld." + type + " s29, hbm[s28]");
}

bool IsScalarOf(const Shape& s, PrimitiveType t) {
  return s.IsArray() && s.rank() == 0 && s.element_type() == t;
}

// PlanBuffers plans control flow reachable from the entry through control
// flow only (not, e.g., a while inside a fused computation).
Status CheckPlanned(const HloInstruction& instr, const BufferPlan& plan) {
  if (plan.leaves.count(&instr) && (instr.opcode() != HloOpcode::kWhile ||
                                    plan.while_staging.count(&instr))) {
    return Status::Ok();
  }
  return CannotCompile(instr, "a computation without planned buffers");
}

}  // namespace

Status EmitWhile(const HloInstruction& instr, const BufferPlan& plan,
                 KernelBuilder& kb) {
  RETURN_IF_ERROR(CheckPlanned(instr, plan));
  const HloComputation& cond = *instr.while_condition();
  const HloComputation& body = *instr.while_body();
  const HloInstruction* pred = cond.root_instruction();
  if (!IsScalarOf(pred->shape(), PrimitiveType::PRED)) {
    return CannotCompile(instr,
                         "condition result " + pred->shape().ToString(false));
  }
  const std::vector<int>& state = plan.leaves.at(&instr);
  const std::vector<int64_t> bytes = LeafBytes(instr.shape());
  CopyLeaves(kb, plan, plan.leaves.at(instr.operand(0)), state, bytes);
  const std::string top = kb.NewLabel("while_cond");
  const std::string exit = kb.NewLabel("while_exit");
  kb.PlaceLabel(top);
  BindParameters(kb, plan, cond, {state});
  RETURN_IF_ERROR(EmitComputationInline(cond, plan, kb));
  LoadScalar(kb, plan.buffers[plan.leaves.at(pred).at(0)].name, "pred");
  kb.Emit("brz s29, " + exit);
  BindParameters(kb, plan, body, {state});
  RETURN_IF_ERROR(EmitComputationInline(body, plan, kb));
  // state = body result: leaves that are other state leaves go through
  // staging buffers first (a parallel assignment).
  const std::vector<int>& result = plan.leaves.at(body.root_instruction());
  const std::vector<int>& staging = plan.while_staging.at(&instr);
  std::vector<int> to_stage, staged, src(result);
  std::vector<int64_t> stage_bytes;
  for (size_t k = 0; k < state.size(); ++k) {
    if (staging[k] < 0) continue;
    to_stage.push_back(result[k]);
    staged.push_back(staging[k]);
    stage_bytes.push_back(bytes[k]);
    src[k] = staging[k];
  }
  CopyLeaves(kb, plan, to_stage, staged, stage_bytes);
  CopyLeaves(kb, plan, src, state, bytes);
  kb.Emit("jmp " + top);
  kb.PlaceLabel(exit);
  return Status::Ok();
}

Status EmitConditional(const HloInstruction& instr, const BufferPlan& plan,
                       KernelBuilder& kb) {
  RETURN_IF_ERROR(CheckPlanned(instr, plan));
  const auto& branches = instr.called_computations();
  const int64_t n = static_cast<int64_t>(branches.size());
  const Shape& sel = instr.operand(0)->shape();
  const bool is_pred = IsScalarOf(sel, PrimitiveType::PRED);
  if (!(sel.IsArray() && sel.rank() == 0 &&
        (is_pred || IsInteger(sel.element_type()))) ||
      (is_pred && n != 2)) {
    return CannotCompile(instr, "selector " + sel.ToString(false));
  }
  std::vector<std::string> labels;
  for (int64_t i = 0; i < n; ++i) labels.push_back(kb.NewLabel("branch"));
  const std::string done = kb.NewLabel("cond_done");
  LoadScalar(kb, plan.Array(instr.operand(0)).name,
             std::string(PrimitiveTypeName(sel.element_type())));
  if (is_pred) {
    kb.Emit("brnz s29, " + labels[0]);  // {true_computation, false_...}.
    kb.Emit("jmp " + labels[1]);
  } else {
    // operation_semantics.md (Conditional): an index outside [0, N)
    // executes branch N-1.
    kb.Emit("scmplt s30, s29, 0");
    kb.Emit("scmpge s31, s29, " + std::to_string(n));
    kb.Emit("sor s30, s30, s31");
    kb.Emit("simm s31, " + std::to_string(n - 1));
    kb.Emit("ssel s29, s30, s31, s29");
    for (int64_t i = 0; i + 1 < n; ++i) {
      kb.Emit("scmpeq s30, s29, " + std::to_string(i));
      kb.Emit("brnz s30, " + labels[i]);
    }
    kb.Emit("jmp " + labels[n - 1]);
  }
  const std::vector<int>& out = plan.leaves.at(&instr);
  const std::vector<int64_t> bytes = LeafBytes(instr.shape());
  for (int64_t i = 0; i < n; ++i) {
    const HloComputation& b = *branches[i];
    kb.PlaceLabel(labels[i]);
    BindParameters(kb, plan, b, {plan.leaves.at(instr.operand(i + 1))});
    RETURN_IF_ERROR(EmitComputationInline(b, plan, kb));
    CopyLeaves(kb, plan, plan.leaves.at(b.root_instruction()), out, bytes);
    kb.Emit("jmp " + done);
  }
  kb.PlaceLabel(done);
  return Status::Ok();
}

Status EmitCalledInline(const HloInstruction& instr, const HloComputation& c,
                        const BufferPlan& plan, KernelBuilder& kb) {
  RETURN_IF_ERROR(CheckPlanned(instr, plan));
  if (!plan.leaves.count(c.root_instruction()) ||
      c.num_parameters() != instr.operand_count()) {
    return CannotCompile(instr, "a computation without planned buffers");
  }
  std::vector<std::vector<int>> args;
  for (const HloInstruction* op : instr.operands()) {
    args.push_back(plan.leaves.at(op));
  }
  for (int64_t p = 0; p < c.num_parameters(); ++p) {
    if (!plan.leaves.count(c.parameter_instruction(p)) ||
        plan.leaves.at(c.parameter_instruction(p)).size() != args[p].size()) {
      return CannotCompile(instr, "a computation without planned buffers");
    }
  }
  BindParameters(kb, plan, c, args);
  RETURN_IF_ERROR(EmitComputationInline(c, plan, kb));
  CopyLeaves(kb, plan, plan.leaves.at(c.root_instruction()),
             plan.leaves.at(&instr), LeafBytes(instr.shape()));
  // Taps of c's instructions (fusions emitted inline): their buffers are
  // c's own, never shared, so they still hold the values here.
  std::vector<int> src, dst;
  std::vector<int64_t> bytes;
  for (const HloInstruction* t : c.instructions()) {
    auto it = plan.fused_taps.find(t);
    auto leaves = plan.leaves.find(t);
    if (it == plan.fused_taps.end()) continue;
    if (leaves == plan.leaves.end() ||
        leaves->second.size() != it->second.size()) {
      return CannotCompile(instr,
                           "a tap of %" + t->name() + " without buffers");
    }
    std::vector<int64_t> b = LeafBytes(t->shape());
    src.insert(src.end(), leaves->second.begin(), leaves->second.end());
    dst.insert(dst.end(), it->second.begin(), it->second.end());
    bytes.insert(bytes.end(), b.begin(), b.end());
  }
  CopyLeaves(kb, plan, src, dst, bytes);
  return Status::Ok();
}

Status EmitCall(const HloInstruction& instr, const BufferPlan& plan,
                KernelBuilder& kb) {
  return EmitCalledInline(instr, *instr.to_apply(), plan, kb);
}

}  // namespace trench::codegen
