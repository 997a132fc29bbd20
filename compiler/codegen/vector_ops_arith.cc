// Lane-wise arithmetic, bit and transcendental ops for every element type.
//
// Each op runs on the lane type (f32 for bf16/f16, s32/u32 for the narrow
// integers, register pairs for 64-bit types) and its result is brought back
// to the HLO type (Ctx::Fix). Where the machine's instruction differs from
// XLA's semantics on the HLO type, fix-ups are emitted:
// - maximum/minimum on floats: the machine orders -0 < +0; XLA's evaluator
//   (std::max/std::min) returns the lhs on equal operands.
// - shift-right-logical on s8/s16 shifts the zero-extended value;
//   shift-right-arithmetic on u8/u16 shifts the sign-extended value.
// - popcnt/clz on narrow types count within the type's own width.
// - integer power: binary exponentiation unrolled over the exponent bits,
//   with XLA's cases (x^0 = 1^y = 1; a negative exponent gives 0).
// - pred: add/maximum = or, multiply/minimum = and, power = x | !y.
#include <map>

#include "compiler/codegen/vector_ops_internal.h"

namespace trench::codegen::vops {
namespace {

enum Allowed : unsigned { kFl = 1, kIn = 2 };

struct Rule {
  const char* mnemonic;
  unsigned allowed;
};

const std::map<HloOpcode, Rule>& Rules() {
  static const auto* rules = new std::map<HloOpcode, Rule>{
      {HloOpcode::kAdd, {"vadd", kFl | kIn}},
      {HloOpcode::kSubtract, {"vsub", kFl | kIn}},
      {HloOpcode::kMultiply, {"vmul", kFl | kIn}},
      {HloOpcode::kDivide, {"vdiv", kFl | kIn}},
      {HloOpcode::kRemainder, {"vrem", kFl | kIn}},
      {HloOpcode::kMaximum, {"vmax", kFl | kIn}},
      {HloOpcode::kMinimum, {"vmin", kFl | kIn}},
      {HloOpcode::kPower, {"vpow", kFl | kIn}},
      {HloOpcode::kAtan2, {"vatan2", kFl}},
      {HloOpcode::kAnd, {"vand", kIn}},
      {HloOpcode::kOr, {"vor", kIn}},
      {HloOpcode::kXor, {"vxor", kIn}},
      {HloOpcode::kShiftLeft, {"vshl", kIn}},
      {HloOpcode::kShiftRightArithmetic, {"vshra", kIn}},
      {HloOpcode::kShiftRightLogical, {"vshrl", kIn}},
      {HloOpcode::kNegate, {"vneg", kFl | kIn}},
      {HloOpcode::kAbs, {"vabs", kFl | kIn}},
      {HloOpcode::kSign, {"vsign", kFl | kIn}},
      {HloOpcode::kNot, {"vnot", kIn}},
      {HloOpcode::kPopulationCount, {"vpopcnt", kIn}},
      {HloOpcode::kClz, {"vclz", kIn}},
      {HloOpcode::kExp, {"vexp", kFl}},
      {HloOpcode::kExpm1, {"vexpm1", kFl}},
      {HloOpcode::kLog, {"vlog", kFl}},
      {HloOpcode::kLog1p, {"vlog1p", kFl}},
      {HloOpcode::kTanh, {"vtanh", kFl}},
      {HloOpcode::kLogistic, {"vlogistic", kFl}},
      {HloOpcode::kSqrt, {"vsqrt", kFl}},
      {HloOpcode::kRsqrt, {"vrsqrt", kFl}},
      {HloOpcode::kCbrt, {"vcbrt", kFl}},
      {HloOpcode::kSin, {"vsin", kFl}},
      {HloOpcode::kCos, {"vcos", kFl}},
      {HloOpcode::kTan, {"vtan", kFl}},
      {HloOpcode::kErf, {"verf", kFl}},
      {HloOpcode::kFloor, {"vfloor", kFl}},
      {HloOpcode::kCeil, {"vceil", kFl}},
      {HloOpcode::kRoundNearestAfz, {"vround", kFl}},
      {HloOpcode::kRoundNearestEven, {"vroundeven", kFl}},
  };
  return *rules;
}

// "<mnemonic>.<lane> vD, vA[, vB]".
std::string Op(const std::string& m, const std::string& lane, int d,
               const std::vector<int>& s) {
  std::string line = m + "." + lane + " " + V(d);
  for (int r : s) line += ", " + V(r);
  return line;
}

Status EmitPred(Ctx& c, int dst, const std::vector<int>& s) {
  const std::string a = V(s[0]);
  switch (c.instr().opcode()) {
    case HloOpcode::kAnd:
    case HloOpcode::kMultiply:
    case HloOpcode::kMinimum:
      c.E("vand.s32 " + V(dst) + ", " + a + ", " + V(s[1]));
      return Status::Ok();
    case HloOpcode::kOr:
    case HloOpcode::kAdd:
    case HloOpcode::kMaximum:
      c.E("vor.s32 " + V(dst) + ", " + a + ", " + V(s[1]));
      return Status::Ok();
    case HloOpcode::kXor:
      c.E("vxor.s32 " + V(dst) + ", " + a + ", " + V(s[1]));
      return Status::Ok();
    case HloOpcode::kNot: {
      ASSIGN_OR_RETURN(int one, c.Tmp(false));
      c.Imm(one, "s32", 1);
      c.E("vxor.s32 " + V(dst) + ", " + a + ", " + V(one));
      return Status::Ok();
    }
    default:
      return c.Cannot("pred");
  }
}

// Integer power by binary exponentiation over the type's bit width.
Status EmitIntPower(Ctx& c, const TypeInfo& t, int dst,
                    const std::vector<int>& s) {
  const std::string L = "." + t.lane + " ";
  const bool w = t.wide;
  ASSIGN_OR_RETURN(int r, c.Tmp(w));
  ASSIGN_OR_RETURN(int b, c.Tmp(w));
  ASSIGN_OR_RETURN(int e, c.Tmp(w));
  ASSIGN_OR_RETURN(int one, c.Tmp(w));
  ASSIGN_OR_RETURN(int zero, c.Tmp(w));
  ASSIGN_OR_RETURN(int tmp, c.Tmp(w));
  c.Imm(one, t.lane, 1);
  c.Imm(zero, t.lane, 0);
  c.Imm(r, t.lane, 1);
  c.Mov(b, s[0], w);
  c.Mov(e, s[1], w);
  for (int i = 0; i < t.bits; ++i) {
    c.E("vand" + L + V(tmp) + ", " + V(e) + ", " + V(one));
    c.E("vcmpne" + L + "m1, " + V(tmp) + ", " + V(zero));
    c.E("vmul" + L + V(tmp) + ", " + V(r) + ", " + V(b));
    c.E("vsel" + L + V(r) + ", m1, " + V(tmp) + ", " + V(r));
    if (i + 1 < t.bits) {
      c.E("vmul" + L + V(b) + ", " + V(b) + ", " + V(b));
      c.E("vshrl" + L + V(e) + ", " + V(e) + ", " + V(one));
    }
  }
  if (t.kind == Kind::kSigned) {
    c.E("vcmplt" + L + "m1, " + V(s[1]) + ", " + V(zero));
    c.E("vsel" + L + V(r) + ", m1, " + V(zero) + ", " + V(r));
  }
  c.E("vcmpeq" + L + "m1, " + V(s[0]) + ", " + V(one));
  c.E("vsel" + L + V(r) + ", m1, " + V(one) + ", " + V(r));
  c.Fix(r, t);
  c.Mov(dst, r, w);
  return Status::Ok();
}

// A narrow integer's bits zero-extended into `dst` (32-bit lanes).
Status ZeroExtend(Ctx& c, const TypeInfo& t, int dst, int src) {
  ASSIGN_OR_RETURN(int m, c.Tmp(false));
  c.Imm(m, "u32", t.bits == 8 ? 0xff : 0xffff);
  c.E("vand.u32 " + V(dst) + ", " + V(src) + ", " + V(m));
  return Status::Ok();
}

Status EmitInt(Ctx& c, const TypeInfo& t, const Rule& rule, int dst,
               const std::vector<int>& s) {
  const HloOpcode op = c.instr().opcode();
  const std::string m = rule.mnemonic;
  if (op == HloOpcode::kPower) return EmitIntPower(c, t, dst, s);
  if (t.narrow) {
    const std::string sx = (t.bits == 8 ? "s8" : "s16");
    if (op == HloOpcode::kShiftRightLogical && t.kind == Kind::kSigned) {
      ASSIGN_OR_RETURN(int z, c.Tmp(false));
      RETURN_IF_ERROR(ZeroExtend(c, t, z, s[0]));
      c.E("vshrl.u32 " + V(dst) + ", " + V(z) + ", " + V(s[1]));
      c.Fix(dst, t);
      return Status::Ok();
    }
    if (op == HloOpcode::kShiftRightArithmetic && t.kind == Kind::kUnsigned) {
      ASSIGN_OR_RETURN(int x, c.Tmp(false));
      c.E("vunpack." + sx + " " + V(x) + ", " + V(s[0]));
      c.E("vshra.s32 " + V(dst) + ", " + V(x) + ", " + V(s[1]));
      c.Fix(dst, t);
      return Status::Ok();
    }
    if (op == HloOpcode::kPopulationCount || op == HloOpcode::kClz) {
      ASSIGN_OR_RETURN(int z, c.Tmp(false));
      RETURN_IF_ERROR(ZeroExtend(c, t, z, s[0]));
      if (op == HloOpcode::kPopulationCount) {
        c.E("vpopcnt.u32 " + V(dst) + ", " + V(z));
        return Status::Ok();
      }
      ASSIGN_OR_RETURN(int k, c.Tmp(false));
      c.E("vclz.u32 " + V(z) + ", " + V(z));
      c.Imm(k, "u32", 32 - t.bits);
      c.E("vsub.u32 " + V(dst) + ", " + V(z) + ", " + V(k));
      return Status::Ok();
    }
  }
  c.E(Op(m, t.lane, dst, s));
  c.Fix(dst, t);
  return Status::Ok();
}

Status EmitFloat(Ctx& c, const TypeInfo& t, const Rule& rule, int dst,
                 const std::vector<int>& s) {
  const HloOpcode op = c.instr().opcode();
  if (op == HloOpcode::kMaximum || op == HloOpcode::kMinimum) {
    ASSIGN_OR_RETURN(int r, c.Tmp(t.wide));
    const std::string L = "." + t.lane + " ";
    c.E(Op(rule.mnemonic, t.lane, r, s));
    c.E("vcmpeq" + L + "m1, " + V(s[0]) + ", " + V(s[1]));
    c.E("vsel" + L + V(dst) + ", m1, " + V(s[0]) + ", " + V(r));
    c.Fix(dst, t);
    return Status::Ok();
  }
  c.E(Op(rule.mnemonic, t.lane, dst, s));
  c.Fix(dst, t);
  return Status::Ok();
}

}  // namespace

bool IsArithmeticOp(HloOpcode op) { return Rules().count(op) > 0; }

Status EmitArithmetic(Ctx& c, int dst, const std::vector<int>& srcs) {
  auto it = Rules().find(c.instr().opcode());
  if (it == Rules().end()) return c.Cannot("this opcode");
  const TypeInfo t = Info(c.instr().operand(0)->shape().element_type());
  if (t.lane.empty()) return c.Cannot(t.name);
  if (t.kind == Kind::kPred) return EmitPred(c, dst, srcs);
  if (t.kind == Kind::kFloat) {
    if (!(it->second.allowed & kFl)) return c.Cannot(t.name);
    return EmitFloat(c, t, it->second, dst, srcs);
  }
  if (!(it->second.allowed & kIn)) return c.Cannot(t.name);
  return EmitInt(c, t, it->second, dst, srcs);
}

}  // namespace trench::codegen::vops
