// Lane-wise complex ops (c64, c128); forms and semantics in vector_ops.h.
//
// A complex value is two parts of its part type P (f32 for c64, f64 for
// c128) at registers x (re) and x + off (im), off = 1 for c64 and 2 for
// c128 (whose parts are f64 pairs). Results are formed in scratch
// registers and moved to `dst` last, so `dst` may alias a source.
#include <bit>
#include <cmath>
#include <cstring>

#include "compiler/codegen/vector_ops_internal.h"
#include "compiler/ir/dtype.h"

namespace trench::codegen::vops {
namespace {

// How a complex type lives in registers.
struct Cx {
  std::string part;   // "f32" or "f64".
  bool wide = false;  // Parts are pairs (c128).
  int off = 1;        // Register offset of the imaginary part.
  int regs = 2;       // Registers of one value.
};

Cx CxOf(PrimitiveType t) {
  Cx x;
  if (t == PrimitiveType::C128) {
    x.part = "f64";
    x.wide = true;
    x.off = 2;
    x.regs = 4;
  } else {
    x.part = "f32";
  }
  return x;
}

PrimitiveType TypeOf(const HloInstruction* i) {
  return i->shape().IsArray() ? i->shape().element_type()
                              : PrimitiveType::TUPLE;
}

// "<m>.<lane> vD, vA[, vB]".
std::string Op(const std::string& m, const std::string& lane, int d, int a,
               int b = -1) {
  std::string s = m + "." + lane + " " + V(d) + ", " + V(a);
  if (b >= 0) s += ", " + V(b);
  return s;
}

uint64_t PartBits(const std::string& part, double v) {
  if (part == "f64") return std::bit_cast<uint64_t>(v);
  return std::bit_cast<uint32_t>(static_cast<float>(v));
}

// r = (a + bi) * (c + di) = (ac - bd) + (ad + bc)i, each product and sum
// rounded in the part type (std::complex's finite-value formula).
Status Multiply(Ctx& c, const Cx& x, int r, int p, int q) {
  ASSIGN_OR_RETURN(int t, c.Tmp(x.wide));
  const std::string P = x.part;
  const int o = x.off;
  c.E(Op("vmul", P, r, p, q));
  c.E(Op("vmul", P, t, p + o, q + o));
  c.E(Op("vsub", P, r, r, t));
  c.E(Op("vmul", P, r + o, p, q + o));
  c.E(Op("vmul", P, t, p + o, q));
  c.E(Op("vadd", P, r + o, r + o, t));
  return Status::Ok();
}

// c64 divide in f64, rounded once to f32: re = (ac + bd) / (c^2 + d^2),
// im = (bc - ad) / (c^2 + d^2) (products of f32 values are exact in f64
// and cannot overflow; libgcc's __divsc3 does the same).
Status DivideC64(Ctx& c, int r, int p, int q) {
  int w[4];
  for (int k = 0; k < 4; ++k) {
    ASSIGN_OR_RETURN(w[k], c.Tmp(true));
    c.E("vcvt.f64.f32 " + V(w[k]) + ", " + V((k < 2 ? p : q) + k % 2));
  }
  const int a = w[0], b = w[1], cc = w[2], d = w[3];
  ASSIGN_OR_RETURN(int den, c.Tmp(true));
  ASSIGN_OR_RETURN(int t, c.Tmp(true));
  ASSIGN_OR_RETURN(int u, c.Tmp(true));
  c.E(Op("vmul", "f64", den, cc, cc));
  c.E(Op("vmul", "f64", t, d, d));
  c.E(Op("vadd", "f64", den, den, t));
  c.E(Op("vmul", "f64", t, a, cc));
  c.E(Op("vmul", "f64", u, b, d));
  c.E(Op("vadd", "f64", t, t, u));
  c.E(Op("vdiv", "f64", t, t, den));
  c.E("vcvt.f32.f64 " + V(r) + ", " + V(t));
  c.E(Op("vmul", "f64", t, b, cc));
  c.E(Op("vmul", "f64", u, a, d));
  c.E(Op("vsub", "f64", t, t, u));
  c.E(Op("vdiv", "f64", t, t, den));
  c.E("vcvt.f32.f64 " + V(r + 1) + ", " + V(t));
  return Status::Ok();
}

// c128 divide by Smith's algorithm: with |c| >= |d|, s = d/c,
// den = c + d*s, re = (a + b*s)/den, im = (b - a*s)/den; otherwise s = c/d,
// den = c*s + d, re = (a*s + b)/den, im = (b*s - a)/den.
Status DivideC128(Ctx& c, int r, int p, int q) {
  const int a = p, b = p + 2, cc = q, d = q + 2;
  ASSIGN_OR_RETURN(int s, c.Tmp(true));
  ASSIGN_OR_RETURN(int den, c.Tmp(true));
  ASSIGN_OR_RETURN(int t, c.Tmp(true));
  ASSIGN_OR_RETURN(int y, c.Tmp(true));
  c.E(Op("vabs", "f64", s, cc));
  c.E(Op("vabs", "f64", den, d));
  c.E("vcmpge.f64 m3, " + V(s) + ", " + V(den));
  // |c| >= |d|.
  c.E(Op("vdiv", "f64", s, d, cc));
  c.E(Op("vmul", "f64", den, d, s));
  c.E(Op("vadd", "f64", den, cc, den));
  c.E(Op("vmul", "f64", t, b, s));
  c.E(Op("vadd", "f64", t, a, t));
  c.E(Op("vdiv", "f64", r, t, den));
  c.E(Op("vmul", "f64", t, a, s));
  c.E(Op("vsub", "f64", t, b, t));
  c.E(Op("vdiv", "f64", r + 2, t, den));
  // |c| < |d|.
  c.E(Op("vdiv", "f64", s, cc, d));
  c.E(Op("vmul", "f64", den, cc, s));
  c.E(Op("vadd", "f64", den, den, d));
  c.E(Op("vmul", "f64", t, a, s));
  c.E(Op("vadd", "f64", t, t, b));
  c.E(Op("vdiv", "f64", y, t, den));
  c.E("vsel.f64 " + V(r) + ", m3, " + V(r) + ", " + V(y));
  c.E(Op("vmul", "f64", t, b, s));
  c.E(Op("vsub", "f64", t, t, a));
  c.E(Op("vdiv", "f64", y, t, den));
  c.E("vsel.f64 " + V(r + 2) + ", m3, " + V(r + 2) + ", " + V(y));
  return Status::Ok();
}

// dst (part type) = |x| without overflow; abs(inf, NaN) = inf (hypot).
Status Abs(Ctx& c, const Cx& x, int dst, int p) {
  ASSIGN_OR_RETURN(int re, c.Tmp(true));
  ASSIGN_OR_RETURN(int im, c.Tmp(true));
  ASSIGN_OR_RETURN(int t, c.Tmp(true));
  ASSIGN_OR_RETURN(int res, c.Tmp(x.wide));
  if (!x.wide) {
    // In f64: the squares of f32 values neither overflow nor underflow.
    c.E("vcvt.f64.f32 " + V(re) + ", " + V(p));
    c.E("vcvt.f64.f32 " + V(im) + ", " + V(p + 1));
    c.E(Op("vmul", "f64", re, re, re));
    c.E(Op("vmul", "f64", im, im, im));
    c.E(Op("vadd", "f64", t, re, im));
    c.E(Op("vsqrt", "f64", t, t));
    c.E("vcvt.f32.f64 " + V(res) + ", " + V(t));
  } else {
    ASSIGN_OR_RETURN(int n, c.Tmp(true));
    c.E(Op("vabs", "f64", re, p));
    c.E(Op("vabs", "f64", im, p + 2));
    c.E(Op("vmax", "f64", t, re, im));
    c.E(Op("vmin", "f64", n, re, im));
    c.E(Op("vdiv", "f64", n, n, t));
    c.E(Op("vmul", "f64", n, n, n));
    c.Imm(res, "f64", PartBits("f64", 1.0));
    c.E(Op("vadd", "f64", n, n, res));
    c.E(Op("vsqrt", "f64", n, n));
    c.E(Op("vmul", "f64", res, t, n));
    c.Imm(n, "f64", 0);
    c.E("vcmpeq.f64 m1, " + V(t) + ", " + V(n));
    c.E("vsel.f64 " + V(res) + ", m1, " + V(n) + ", " + V(res));
  }
  // Either part infinite gives inf even when the other is NaN.
  const std::string P = x.part;
  ASSIGN_OR_RETURN(int inf, c.Tmp(x.wide));
  c.Imm(inf, P, PartBits(P, INFINITY));
  c.E(Op("vabs", P, t, p));
  c.E("vcmpeq." + P + " m1, " + V(t) + ", " + V(inf));
  c.E(Op("vabs", P, t, p + x.off));
  c.E("vcmpeq." + P + " m2, " + V(t) + ", " + V(inf));
  c.E("mor m1, m1, m2");
  c.E("vsel." + P + " " + V(res) + ", m1, " + V(inf) + ", " + V(res));
  c.Mov(dst, res, x.wide);
  return Status::Ok();
}

Status Compare(Ctx& c, const Cx& x, int dst, int p, int q) {
  const ComparisonDirection dir = c.instr().attrs().comparison_direction;
  if (dir != ComparisonDirection::kEq && dir != ComparisonDirection::kNe) {
    return c.Cannot("compare " + std::string(ComparisonDirectionName(dir)) +
                    " of complex values");
  }
  const std::string P = x.part;
  c.E("vcmpeq." + P + " m1, " + V(p) + ", " + V(q));
  c.E("vcmpeq." + P + " m2, " + V(p + x.off) + ", " + V(q + x.off));
  c.E("mand m1, m1, m2");
  if (dir == ComparisonDirection::kNe) c.E("mnot m1, m1");
  c.E("vmtov " + V(dst) + ", m1");
  return Status::Ok();
}

// convert to a complex type: complex -> complex part by part (f64 -> f32
// rounds once), real -> complex converts the value to the part type (as
// convert to f32/f64) and sets im = +0.
Status Convert(Ctx& c, const Cx& x, int r, int src) {
  const PrimitiveType from = TypeOf(c.instr().operand(0));
  if (IsComplex(from)) {
    const Cx f = CxOf(from);
    for (int k = 0; k < 2; ++k) {
      const int s = src + k * f.off, d = r + k * x.off;
      if (f.part == x.part) {
        c.Mov(d, s, x.wide);
      } else {
        c.E("vcvt." + x.part + "." + f.part + " " + V(d) + ", " + V(s));
      }
    }
    return Status::Ok();
  }
  const TypeInfo in = Info(from);
  if (in.lane.empty()) return c.Cannot(in.name + " -> complex");
  RETURN_IF_ERROR(EmitConvertTypes(
      c, in, Info(x.wide ? PrimitiveType::F64 : PrimitiveType::F32), r, src));
  c.Imm(r + x.off, x.part, 0);
  return Status::Ok();
}

}  // namespace

bool IsComplexOp(const HloInstruction& instr) {
  switch (instr.opcode()) {
    case HloOpcode::kReal:
    case HloOpcode::kImag:
    case HloOpcode::kComplex:
      return true;
    case HloOpcode::kMap:
      return false;  // Its computation's instructions decide.
    default:
      break;
  }
  if (IsComplex(TypeOf(&instr))) return true;
  for (const HloInstruction* o : instr.operands()) {
    if (IsComplex(TypeOf(o))) return true;
  }
  return false;
}

Status EmitComplexOp(Ctx& c, int dst, const std::vector<int>& s) {
  const HloInstruction& instr = c.instr();
  const HloOpcode op = instr.opcode();
  const PrimitiveType out_t = TypeOf(&instr);
  const PrimitiveType in_t =
      instr.operand_count() > 0 ? TypeOf(instr.operand(0)) : out_t;
  const std::string in_name(PrimitiveTypeName(in_t));
  // real/imag of a real float: the value and +0.
  if ((op == HloOpcode::kReal || op == HloOpcode::kImag) && !IsComplex(in_t)) {
    const TypeInfo t = Info(in_t);
    if (t.kind != Kind::kFloat || out_t != in_t) return c.Cannot(t.name);
    if (op == HloOpcode::kReal) {
      c.Mov(dst, s[0], t.wide);
    } else {
      c.Imm(dst, t.lane, 0);
    }
    return Status::Ok();
  }
  if (op == HloOpcode::kComplex) {
    if (!IsComplex(out_t) ||
        TypeOf(instr.operand(0)) != (out_t == PrimitiveType::C64
                                         ? PrimitiveType::F32
                                         : PrimitiveType::F64) ||
        TypeOf(instr.operand(1)) != TypeOf(instr.operand(0))) {
      return c.Cannot(in_name + " parts");
    }
    const Cx x = CxOf(out_t);
    ASSIGN_OR_RETURN(int r, c.TmpN(x.regs));
    c.Mov(r, s[0], x.wide);
    c.Mov(r + x.off, s[1], x.wide);
    c.MovN(dst, r, x.regs);
    return Status::Ok();
  }
  const PrimitiveType ct = IsComplex(in_t) ? in_t : out_t;
  if (!IsComplex(ct)) return c.Cannot(in_name);
  const Cx x = CxOf(ct);
  const std::string P = x.part;
  const int o = x.off;
  switch (op) {
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      if (out_t != (x.wide ? PrimitiveType::F64 : PrimitiveType::F32)) {
        return c.Cannot(in_name + " -> " +
                        std::string(PrimitiveTypeName(out_t)));
      }
      c.Mov(dst, s[0] + (op == HloOpcode::kImag ? o : 0), x.wide);
      return Status::Ok();
    case HloOpcode::kAbs:
      if (out_t == ct) return c.Cannot(in_name + " abs to " + in_name);
      return Abs(c, x, dst, s[0]);
    case HloOpcode::kCompare:
      return Compare(c, x, dst, s[0], s[1]);
    case HloOpcode::kCopy:
      c.MovN(dst, s[0], x.regs);
      return Status::Ok();
    case HloOpcode::kBitcastConvert:
      // Same width only (8 bytes: c64 <-> 64-bit types; c128 <-> c128):
      // the register pair holds the element's bytes either way.
      if (ByteWidth(in_t) != ByteWidth(out_t) || (x.wide && in_t != out_t)) {
        return c.Cannot(in_name + " -> " +
                        std::string(PrimitiveTypeName(out_t)));
      }
      c.MovN(dst, s[0], x.wide ? 4 : 2);
      return Status::Ok();
    case HloOpcode::kConvert: {
      if (!IsComplex(out_t)) {
        return c.Cannot(in_name + " -> " +
                        std::string(PrimitiveTypeName(out_t)));
      }
      const Cx to = CxOf(out_t);
      ASSIGN_OR_RETURN(int r, c.TmpN(to.regs));
      RETURN_IF_ERROR(Convert(c, to, r, s[0]));
      c.MovN(dst, r, to.regs);
      return Status::Ok();
    }
    default:
      break;
  }
  // The result goes to a scratch set when dst overlaps a source (the
  // sequences below read sources after writing the result); else straight
  // to dst, sparing x.regs registers (a c128 divide needs 8 more).
  bool overlaps = false;
  for (int v : s) overlaps |= v < dst + x.regs && dst < v + x.regs;
  int r = dst;
  if (overlaps) {
    ASSIGN_OR_RETURN(r, c.TmpN(x.regs));
  }
  switch (op) {
    case HloOpcode::kSelect:
      if (out_t != ct) return c.Cannot(in_name);
      c.E("vvtom m1, " + V(s[0]));
      c.E("vsel." + P + " " + V(r) + ", m1, " + V(s[1]) + ", " + V(s[2]));
      c.E("vsel." + P + " " + V(r + o) + ", m1, " + V(s[1] + o) + ", " +
          V(s[2] + o));
      break;
    case HloOpcode::kNegate:
      c.E(Op("vneg", P, r, s[0]));
      c.E(Op("vneg", P, r + o, s[0] + o));
      break;
    case HloOpcode::kAdd:
    case HloOpcode::kSubtract: {
      const std::string m = op == HloOpcode::kAdd ? "vadd" : "vsub";
      c.E(Op(m, P, r, s[0], s[1]));
      c.E(Op(m, P, r + o, s[0] + o, s[1] + o));
      break;
    }
    case HloOpcode::kMultiply:
      RETURN_IF_ERROR(Multiply(c, x, r, s[0], s[1]));
      break;
    case HloOpcode::kDivide:
      RETURN_IF_ERROR(x.wide ? DivideC128(c, r, s[0], s[1])
                             : DivideC64(c, r, s[0], s[1]));
      break;
    default:
      return c.Cannot(in_name);
  }
  c.MovN(dst, r, x.regs);
  return Status::Ok();
}

StatusOr<std::pair<uint64_t, uint64_t>> ComplexLaneBits(const Literal& l) {
  const PrimitiveType t = l.element_type();
  if (!IsComplex(t) || l.bytes().size() < static_cast<size_t>(ByteWidth(t))) {
    return InvalidArgument("not a complex scalar literal");
  }
  const uint8_t* p = l.bytes().data();
  if (t == PrimitiveType::C64) {
    uint32_t re, im;
    std::memcpy(&re, p, 4);
    std::memcpy(&im, p + 4, 4);
    return std::pair<uint64_t, uint64_t>{re, im};
  }
  uint64_t re, im;
  std::memcpy(&re, p, 8);
  std::memcpy(&im, p + 8, 8);
  return std::pair<uint64_t, uint64_t>{re, im};
}

}  // namespace trench::codegen::vops

namespace trench::codegen {

bool UsesComplex(const HloComputation& comp) {
  for (const HloInstruction* i : comp.instructions()) {
    bool cx = false;
    ForEachLeafShape(
        i->shape(), [&](const Shape& s) { cx |= IsComplex(s.element_type()); });
    if (cx) return true;
  }
  return false;
}

}  // namespace trench::codegen
