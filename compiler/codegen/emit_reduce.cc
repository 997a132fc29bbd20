// reduce: each output element (one lane) starts from the init value and
// folds in its reduced elements one gather at a time, in row-major order of
// the reduced dimensions, accumulating in the lane type (f32 for floats).
#include <algorithm>

#include "compiler/codegen/emitters.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

// The vector instruction of a reducer `root = op(p0, p1)`, or "".
std::string ReducerMnemonic(const HloComputation& c, const std::string& t) {
  const HloInstruction* root = c.root_instruction();
  if (c.num_parameters() != 2 || root->operand_count() != 2) return "";
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter ||
      b->opcode() != HloOpcode::kParameter || a == b) {
    return "";
  }
  const bool is_float = LaneType(t) == "f32";
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      return t == "pred" ? "" : "vadd";
    case HloOpcode::kMultiply:
      return t == "pred" ? "" : "vmul";
    case HloOpcode::kMaximum:
      return t == "pred" ? "" : "vmax";
    case HloOpcode::kMinimum:
      return t == "pred" ? "" : "vmin";
    case HloOpcode::kAnd:
      return is_float ? "" : "vand";
    case HloOpcode::kOr:
      return is_float ? "" : "vor";
    default:
      return "";
  }
}

}  // namespace

Status EmitReduce(const HloInstruction& instr, const BufferPlan& plan,
                  KernelBuilder& kb) {
  if (instr.operand_count() != 2 || instr.shape().IsTuple()) {
    return CannotCompile(instr, "variadic reduce");
  }
  ArrayBuffer in = plan.Array(instr.operand(0));
  ArrayBuffer init = plan.Array(instr.operand(1));
  ArrayBuffer out = plan.Array(&instr);
  const std::string op = ReducerMnemonic(*instr.to_apply(), in.dtype);
  if (op.empty()) {
    return CannotCompile(
        instr, in.dtype + " with reducer " + instr.to_apply()->name());
  }
  if (in.dims.size() > 8) return CannotCompile(instr, "rank > 8");
  if (out.elements == 0) return Status::Ok();
  const std::string lane = LaneType(in.dtype);
  const std::string suffix = "." + lane;
  std::vector<int64_t> red = instr.dimensions();
  std::sort(red.begin(), red.end());
  std::vector<int64_t> st(in.dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(in.dims.size()) - 2; d >= 0; --d) {
    st[d] = st[d + 1] * in.dims[d + 1];
  }
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < static_cast<int64_t>(in.dims.size()); ++d) {
    if (!std::binary_search(red.begin(), red.end(), d)) kept.push_back(d);
  }
  bool empty = in.elements == 0;
  const int64_t in_vmem = kb.AllocVmem(in.bytes);
  const int64_t init_vmem = kb.AllocVmem(init.bytes);
  const int64_t out_vmem = kb.AllocVmem(out.bytes);
  kb.DmaIn(in_vmem, in.name, in.bytes);
  kb.DmaIn(init_vmem, init.name, init.bytes);
  kb.BeginLinearTiles(out.elements);
  kb.LinearIndex();
  EmitCoordinates(kb, out.dims);
  // v12 = linear input index of each output's first reduced element.
  kb.Splat(12, "s32", "0");
  for (size_t j = 0; j < kept.size(); ++j) {
    kb.Splat(14, "s32", std::to_string(st[kept[j]]));
    kb.Emit("vmul.s32 v13, v" + std::to_string(2 + j) + ", v14");
    kb.Emit("vadd.s32 v12, v12, v13");
  }
  kb.Splat(13, "s32", "0");
  kb.Emit("vgather." + init.dtype + " v10, vmem[" + std::to_string(init_vmem) +
          "], v13 @m0");
  if (!empty) {
    // Nested scalar loops: s(1+j) counts dimension red[j], s(10+j) is the
    // element offset of the current position at that depth.
    std::vector<std::string> labels;
    for (size_t j = 0; j < red.size(); ++j) {
      const std::string cnt = "s" + std::to_string(1 + j);
      const std::string off = "s" + std::to_string(10 + j);
      if (j == 0) {
        kb.Emit("simm " + off + ", 0");
      } else {
        kb.Emit("smov " + off + ", s" + std::to_string(9 + j));
      }
      kb.Emit("simm " + cnt + ", " + std::to_string(in.dims[red[j]]));
      labels.push_back(kb.NewLabel("red"));
      kb.PlaceLabel(labels.back());
    }
    if (red.empty()) kb.Emit("simm s10, 0");  // One element per output.
    const std::string inner =
        "s" + std::to_string(9 + std::max<size_t>(red.size(), 1));
    kb.Emit("vbcast.s32 v14, " + inner);
    kb.Emit("vadd.s32 v15, v12, v14");
    kb.Emit("vgather." + in.dtype + " v16, vmem[" + std::to_string(in_vmem) +
            "], v15 @m0");
    kb.Emit(op + suffix + " v10, v10, v16 @m0");
    for (size_t j = red.size(); j-- > 0;) {
      kb.Emit("sadd s" + std::to_string(10 + j) + ", s" +
              std::to_string(10 + j) + ", " + std::to_string(st[red[j]]));
      kb.Emit("sloop s" + std::to_string(1 + j) + ", " + labels[j]);
    }
  }
  kb.StoreTile(out.dtype, out_vmem, 10);
  kb.EndLinearTiles();
  kb.DmaOut(out.name, out_vmem, out.bytes);
  return Status::Ok();
}

}  // namespace trench::codegen
