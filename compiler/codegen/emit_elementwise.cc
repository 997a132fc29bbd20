// Elementwise ops: operands loaded tile by tile (contiguous vld, converted
// to lane types), one or a few vector instructions, a converting store.
#include <map>

#include "compiler/codegen/emitters.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

enum Kinds : unsigned {
  kF = 1,  // f32 bf16 f16
  kI = 2,  // s32 u32
  kP = 4,  // pred
  kS = 8,  // s32 only (not u32)
};

struct OpRule {
  const char* mnemonic;  // Vector instruction (binary or unary).
  unsigned kinds;        // Allowed operand kinds.
};

const std::map<HloOpcode, OpRule>& Rules() {
  static const auto* rules = new std::map<HloOpcode, OpRule>{
      {HloOpcode::kAdd, {"vadd", kF | kI}},
      {HloOpcode::kSubtract, {"vsub", kF | kI}},
      {HloOpcode::kMultiply, {"vmul", kF | kI}},
      {HloOpcode::kDivide, {"vdiv", kF | kI}},
      {HloOpcode::kRemainder, {"vrem", kF | kI}},
      {HloOpcode::kMaximum, {"vmax", kF | kI}},
      {HloOpcode::kMinimum, {"vmin", kF | kI}},
      {HloOpcode::kPower, {"vpow", kF}},
      {HloOpcode::kAtan2, {"vatan2", kF}},
      {HloOpcode::kAnd, {"vand", kI | kP}},
      {HloOpcode::kOr, {"vor", kI | kP}},
      {HloOpcode::kXor, {"vxor", kI | kP}},
      {HloOpcode::kShiftLeft, {"vshl", kI}},
      {HloOpcode::kShiftRightArithmetic, {"vshra", kI}},
      {HloOpcode::kShiftRightLogical, {"vshrl", kI}},
      {HloOpcode::kNegate, {"vneg", kF | kS}},
      {HloOpcode::kAbs, {"vabs", kF | kS}},
      {HloOpcode::kSign, {"vsign", kF | kS}},
      {HloOpcode::kNot, {"vnot", kI | kP}},
      {HloOpcode::kPopulationCount, {"vpopcnt", kI}},
      {HloOpcode::kClz, {"vclz", kI}},
      {HloOpcode::kExp, {"vexp", kF}},
      {HloOpcode::kExpm1, {"vexpm1", kF}},
      {HloOpcode::kLog, {"vlog", kF}},
      {HloOpcode::kLog1p, {"vlog1p", kF}},
      {HloOpcode::kTanh, {"vtanh", kF}},
      {HloOpcode::kLogistic, {"vlogistic", kF}},
      {HloOpcode::kSqrt, {"vsqrt", kF}},
      {HloOpcode::kRsqrt, {"vrsqrt", kF}},
      {HloOpcode::kCbrt, {"vcbrt", kF}},
      {HloOpcode::kSin, {"vsin", kF}},
      {HloOpcode::kCos, {"vcos", kF}},
      {HloOpcode::kTan, {"vtan", kF}},
      {HloOpcode::kErf, {"verf", kF}},
      {HloOpcode::kFloor, {"vfloor", kF}},
      {HloOpcode::kCeil, {"vceil", kF}},
      {HloOpcode::kRoundNearestAfz, {"vround", kF}},
      {HloOpcode::kRoundNearestEven, {"vroundeven", kF}},
  };
  return *rules;
}

unsigned KindOfType(const std::string& t) {
  if (t == "f32" || t == "bf16" || t == "f16") return kF;
  if (t == "s32") return kI | kS;
  if (t == "u32") return kI;
  if (t == "pred") return kP;
  return 0;
}

const char* CompareMnemonic(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq:
      return "vcmpeq";
    case ComparisonDirection::kNe:
      return "vcmpne";
    case ComparisonDirection::kLt:
      return "vcmplt";
    case ComparisonDirection::kLe:
      return "vcmple";
    case ComparisonDirection::kGt:
      return "vcmpgt";
    case ComparisonDirection::kGe:
      return "vcmpge";
  }
  return "vcmpeq";
}

// The lines computing v0 = convert(v1) from element type `from` to `to`;
// false if this path cannot convert with one correct rounding.
bool ConvertBody(const std::string& from, const std::string& to,
                 std::vector<std::string>* body) {
  std::string lf = LaneType(from), lt = LaneType(to);
  if (to == "pred") {
    if (lf == "f32") {
      *body = {"vimm.f32 v4, 0", "vcmpne.f32 m1, v1, v4", "vmtov v0, m1"};
    } else {
      *body = {"vmov v0, v1"};  // vst.pred stores nonzero as 1.
    }
    return true;
  }
  // s32/u32 -> bf16 would round twice (to f32, then to bf16). (s32 -> f16
  // is safe: above 2^24 both paths overflow to inf.)
  if (to == "bf16" && lf != "f32" && from != "pred") return false;
  if (lf == lt) {
    *body = {"vmov v0, v1"};  // bf16/f16 <-> f32 happen in vld/vst.
  } else {
    *body = {"vcvt." + lt + "." + lf + " v0, v1 @m0"};
  }
  return true;
}

}  // namespace

Status CannotCompile(const HloInstruction& instr, const std::string& type) {
  return Unimplemented("hloc: cannot compile " +
                       std::string(OpcodeName(instr.opcode())) + " for " +
                       type);
}

Status EmitElementwise(const HloInstruction& instr, const BufferPlan& plan,
                       KernelBuilder& kb) {
  ArrayBuffer out = plan.Array(&instr);
  std::vector<ArrayBuffer> ins;
  for (const HloInstruction* op : instr.operands()) {
    ins.push_back(plan.Array(op));
    if (ins.back().dims != out.dims) {
      return CannotCompile(instr, "implicitly broadcast operands " +
                                      op->shape().ToString(false));
    }
  }
  const HloOpcode opc = instr.opcode();
  // The type that decides legality: the data operand's.
  const std::string& t =
      opc == HloOpcode::kSelect ? ins[1].dtype : ins[0].dtype;
  const std::string lane = LaneType(t);
  std::vector<std::string> body;
  if (auto it = Rules().find(opc); it != Rules().end()) {
    if (!(it->second.kinds & KindOfType(t))) return CannotCompile(instr, t);
    std::string m = it->second.mnemonic;
    std::string suffix = "." + (t == "pred" ? std::string("s32") : lane);
    if (opc == HloOpcode::kNot && t == "pred") {
      body = {"vimm.s32 v4, 1", "vxor.s32 v0, v1, v4 @m0"};
    } else if (ins.size() == 2) {
      body = {m + suffix + " v0, v1, v2 @m0"};
    } else {
      body = {m + suffix + " v0, v1 @m0"};
    }
  } else if (opc == HloOpcode::kCompare) {
    if (instr.attrs().comparison_type == ComparisonType::kTotalOrder) {
      return CannotCompile(instr, t + " (TOTALORDER compare)");
    }
    body = {std::string(CompareMnemonic(instr.attrs().comparison_direction)) +
                "." + lane + " m1, v1, v2",
            "vmtov v0, m1"};
  } else if (opc == HloOpcode::kSelect) {
    body = {"vvtom m1, v1", "vsel." + lane + " v0, m1, v2, v3"};
  } else if (opc == HloOpcode::kClamp) {
    if (!(KindOfType(t) & (kF | kI))) return CannotCompile(instr, t);
    // clamp(lo, x, hi) = min(max(x, lo), hi).
    body = {"vmax." + lane + " v4, v2, v1 @m0",
            "vmin." + lane + " v0, v4, v3 @m0"};
  }
  if (opc == HloOpcode::kConvert) {
    if (KindOfType(out.dtype) == 0 || KindOfType(t) == 0) {
      return CannotCompile(instr, t + " -> " + out.dtype);
    }
    if (!ConvertBody(t, out.dtype, &body)) {
      return CannotCompile(instr, t + " -> " + out.dtype);
    }
  }
  if (body.empty()) return CannotCompile(instr, t);
  if (out.elements == 0) return Status::Ok();
  std::vector<int64_t> regions;
  for (const ArrayBuffer& in : ins) {
    regions.push_back(kb.AllocVmem(in.bytes));
    kb.DmaIn(regions.back(), in.name, in.bytes);
  }
  const int64_t out_region = kb.AllocVmem(out.bytes);
  kb.BeginLinearTiles(out.elements);
  for (size_t i = 0; i < ins.size(); ++i) {
    kb.LoadTile(static_cast<int>(i) + 1, ins[i].dtype, regions[i]);
  }
  for (const std::string& line : body) kb.Emit(line);
  kb.StoreTile(out.dtype, out_region, 0);
  kb.EndLinearTiles();
  kb.DmaOut(out.name, out_region, out.bytes);
  return Status::Ok();
}

}  // namespace trench::codegen
