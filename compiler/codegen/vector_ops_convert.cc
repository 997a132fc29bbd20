// convert, bitcast-convert and reduce-precision on lane forms.
//
// convert follows oracle/convert_element.h (XLA): float -> integer
// truncates and saturates with NaN -> 0 (narrow targets clamp in the float
// type first, so the truncation lands in range); integer -> integer wraps;
// x -> pred is x != 0; every conversion to a float type rounds once to
// nearest even from the exact value:
// - integers -> f32/f64 and f64 -> f32 are one vcvt rounding;
// - integers -> f16 go through f32: integers up to 2^24 are exact in f32
//   and larger ones overflow f16 either way;
// - integers -> bf16 first jam the magnitude to 24 significant bits with a
//   sticky lowest bit (round to odd), which f32 holds exactly and whose
//   rounding to bf16 equals rounding the integer;
// - f64 -> bf16/f16 go through f32 rounded to odd (truncate toward zero,
//   set the last bit when inexact), then round to nearest even once.
#include <bit>
#include <cstring>

#include "compiler/codegen/vector_ops_internal.h"

namespace trench::codegen::vops {
namespace {

uint64_t FloatBits(const std::string& lane, double v) {
  if (lane == "f64") return std::bit_cast<uint64_t>(v);
  return std::bit_cast<uint32_t>(static_cast<float>(v));
}

// dst (f32 lane) = the f64 pair `src` rounded to f32 by round-to-odd.
Status RoundToOddF32(Ctx& c, int dst, int src) {
  ASSIGN_OR_RETURN(int r, c.Tmp(false));
  ASSIGN_OR_RETURN(int one, c.Tmp(false));
  ASSIGN_OR_RETURN(int back, c.Tmp(true));
  ASSIGN_OR_RETURN(int a1, c.Tmp(true));
  ASSIGN_OR_RETURN(int a2, c.Tmp(true));
  c.E("vcvt.f32.f64 " + V(r) + ", " + V(src));
  c.E("vcvt.f64.f32 " + V(back) + ", " + V(r));
  c.E("vabs.f64 " + V(a1) + ", " + V(back));
  c.E("vabs.f64 " + V(a2) + ", " + V(src));
  c.E("vcmpgt.f64 m1, " + V(a1) + ", " + V(a2));     // Rounded away from 0.
  c.E("vcmpne.f64 m2, " + V(back) + ", " + V(src));  // Inexact (or NaN).
  c.Imm(one, "u32", 1);
  c.E("vsub.u32 " + V(r) + ", " + V(r) + ", " + V(one) + " @m1");
  c.E("vor.u32 " + V(r) + ", " + V(r) + ", " + V(one) + " @m2");
  c.Mov(dst, r, false);
  return Status::Ok();
}

// dst (f32 lane) = the integer `src` (lane type `t.lane`, 32 or 64 bits)
// as f32 rounded to odd at 24 bits: the magnitude's bits below its 24
// leading significant bits are cleared and OR-ed into the lowest kept bit.
Status IntToOddF32(Ctx& c, const TypeInfo& t, int dst, int src) {
  const bool w = t.wide;
  const std::string U = w ? ".u64 " : ".u32 ";
  const std::string S = w ? ".s64 " : ".s32 ";
  const bool is_signed = t.kind == Kind::kSigned;
  ASSIGN_OR_RETURN(int m, c.Tmp(w));
  ASSIGN_OR_RETURN(int sh, c.Tmp(w));
  ASSIGN_OR_RETURN(int k, c.Tmp(w));
  ASSIGN_OR_RETURN(int bit, c.Tmp(w));
  ASSIGN_OR_RETURN(int mask, c.Tmp(w));
  ASSIGN_OR_RETURN(int f, c.Tmp(false));
  if (is_signed) {
    c.E("vabs" + S + V(m) + ", " + V(src));  // INT_MIN stays 2^(w-1).
  } else {
    c.Mov(m, src, w);
  }
  // sh = max(0, (w - 24) - clz(m)): the bits to drop.
  c.E("vclz" + U + V(sh) + ", " + V(m));
  c.Imm(k, w ? "s64" : "s32", w ? 40 : 8);
  c.E("vsub" + S + V(sh) + ", " + V(k) + ", " + V(sh));
  c.Imm(k, w ? "s64" : "s32", 0);
  c.E("vmax" + S + V(sh) + ", " + V(sh) + ", " + V(k));
  c.Imm(k, w ? "u64" : "u32", 1);
  c.E("vshl" + U + V(bit) + ", " + V(k) + ", " + V(sh));
  c.E("vsub" + U + V(mask) + ", " + V(bit) + ", " + V(k));
  c.E("vand" + U + V(k) + ", " + V(m) + ", " + V(mask));
  c.Imm(sh, w ? "u64" : "u32", 0);
  c.E("vcmpne" + U + "m1, " + V(k) + ", " + V(sh));  // Sticky.
  c.E("vnot" + U + V(mask) + ", " + V(mask));
  c.E("vand" + U + V(m) + ", " + V(m) + ", " + V(mask));
  c.E("vor" + U + V(m) + ", " + V(m) + ", " + V(bit) + " @m1");
  c.E("vcvt.f32" + U + V(f) + ", " + V(m));  // Exact.
  if (is_signed) {
    c.E("vcmplt" + S + "m2, " + V(src) + ", " + V(sh));
    c.E("vneg.f32 " + V(f) + ", " + V(f) + " @m2");
  }
  c.Mov(dst, f, false);
  return Status::Ok();
}

Status FloatToInt(Ctx& c, const TypeInfo& from, const TypeInfo& to, int dst,
                  int src) {
  const std::string FL = from.lane;
  if (!to.narrow) {
    c.E("vcvt." + to.lane + "." + FL + " " + V(dst) + ", " + V(src));
    return Status::Ok();
  }
  // Clamp to the narrow range in the float type (NaN stays NaN -> 0).
  double lo = 0, hi = 0;
  if (to.kind == Kind::kSigned) {
    lo = -std::ldexp(1.0, to.bits - 1);
    hi = std::ldexp(1.0, to.bits - 1) - 1;
  } else {
    hi = std::ldexp(1.0, to.bits) - 1;
  }
  ASSIGN_OR_RETURN(int k, c.Tmp(from.wide));
  ASSIGN_OR_RETURN(int x, c.Tmp(from.wide));
  c.Imm(k, FL, FloatBits(FL, lo));
  c.E("vmax." + FL + " " + V(x) + ", " + V(src) + ", " + V(k));
  c.Imm(k, FL, FloatBits(FL, hi));
  c.E("vmin." + FL + " " + V(x) + ", " + V(x) + ", " + V(k));
  c.E("vcvt." + to.lane + "." + FL + " " + V(dst) + ", " + V(x));
  return Status::Ok();
}

}  // namespace

Status EmitConvert(Ctx& c, int dst, int src) {
  return EmitConvertTypes(c, Info(c.instr().operand(0)->shape().element_type()),
                          Info(c.instr().shape().element_type()), dst, src);
}

Status EmitConvertTypes(Ctx& c, TypeInfo from, const TypeInfo& to, int dst,
                        int src) {
  if (from.lane.empty() || to.lane.empty()) {
    return c.Cannot(from.name + " -> " + to.name);
  }
  if (from.name == to.name) {
    c.Mov(dst, src, to.wide);
    return Status::Ok();
  }
  if (to.kind == Kind::kPred) {
    ASSIGN_OR_RETURN(int zero, c.Tmp(from.wide));
    c.Imm(zero, from.lane, 0);
    c.E("vcmpne." + from.lane + " m1, " + V(src) + ", " + V(zero));
    c.E("vmtov " + V(dst) + ", m1");
    return Status::Ok();
  }
  if (from.kind == Kind::kPred) from = Info(PrimitiveType::S32);  // 0 or 1.
  const bool from_float = from.kind == Kind::kFloat;
  const bool to_float = to.kind == Kind::kFloat;
  if (from_float && !to_float) return FloatToInt(c, from, to, dst, src);
  if (!from_float && !to_float) {  // Integer -> integer wraps.
    if (from.lane == to.lane) {
      c.Mov(dst, src, to.wide);
    } else {
      c.E("vcvt." + to.lane + "." + from.lane + " " + V(dst) + ", " + V(src));
    }
    c.Fix(dst, to);
    return Status::Ok();
  }
  if (from_float) {  // Float -> float.
    if (from.lane == to.lane) {
      c.Mov(dst, src, to.wide);
    } else if (from.wide && to.narrow) {
      RETURN_IF_ERROR(RoundToOddF32(c, dst, src));
    } else {
      c.E("vcvt." + to.lane + "." + from.lane + " " + V(dst) + ", " + V(src));
    }
    c.Fix(dst, to);
    return Status::Ok();
  }
  // Integer -> float.
  if (to.name == "bf16" && from.bits > 16) {
    RETURN_IF_ERROR(IntToOddF32(c, from, dst, src));
  } else {
    c.E("vcvt." + to.lane + "." + from.lane + " " + V(dst) + ", " + V(src));
  }
  c.Fix(dst, to);
  return Status::Ok();
}

// Same-width bitcast-convert: 32- and 64-bit lanes are the raw bits;
// 16-bit floats are packed to their bits and unpacked as the new type.
Status EmitBitcastConvert(Ctx& c, int dst, int src) {
  const TypeInfo from = Info(c.instr().operand(0)->shape().element_type());
  const TypeInfo to = Info(c.instr().shape().element_type());
  if (!from.lane.empty() && from.name == to.name) {
    c.Mov(dst, src, to.wide);
    return Status::Ok();
  }
  if (from.lane.empty() || to.lane.empty() || from.kind == Kind::kPred ||
      to.kind == Kind::kPred || from.bits != to.bits) {
    return c.Cannot(from.name + " -> " + to.name);
  }
  if (from.bits >= 32) {
    c.Mov(dst, src, to.wide);
    return Status::Ok();
  }
  int bits = src;
  if (from.name == "bf16") {
    // The f32 lane is the bf16 bits << 16 (vpack would quiet a NaN).
    ASSIGN_OR_RETURN(bits, c.Tmp(false));
    ASSIGN_OR_RETURN(int k, c.Tmp(false));
    c.Imm(k, "u32", 16);
    c.E("vshrl.u32 " + V(bits) + ", " + V(src) + ", " + V(k));
  } else if (from.name == "f16") {
    // vpack.f16 is exact on f16 values but quiets NaNs: rebuild NaN bits
    // as sign | 0x7c00 | payload (vld.f16 kept the payload at bit 13).
    ASSIGN_OR_RETURN(bits, c.Tmp(false));
    ASSIGN_OR_RETURN(int k, c.Tmp(false));
    ASSIGN_OR_RETURN(int n, c.Tmp(false));
    ASSIGN_OR_RETURN(int s, c.Tmp(false));
    c.E("vpack.f16 " + V(bits) + ", " + V(src));
    c.Imm(k, "u32", 13);
    c.E("vshrl.u32 " + V(n) + ", " + V(src) + ", " + V(k));
    c.Imm(k, "u32", 0x3ff);
    c.E("vand.u32 " + V(n) + ", " + V(n) + ", " + V(k));
    c.Imm(k, "u32", 16);
    c.E("vshrl.u32 " + V(s) + ", " + V(src) + ", " + V(k));
    c.Imm(k, "u32", 0x8000);
    c.E("vand.u32 " + V(s) + ", " + V(s) + ", " + V(k));
    c.E("vor.u32 " + V(n) + ", " + V(n) + ", " + V(s));
    c.Imm(k, "u32", 0x7c00);
    c.E("vor.u32 " + V(n) + ", " + V(n) + ", " + V(k));
    c.E("vcmpne.f32 m1, " + V(src) + ", " + V(src));
    c.E("vsel.u32 " + V(bits) + ", m1, " + V(n) + ", " + V(bits));
  }
  c.E("vunpack." + to.name + " " + V(dst) + ", " + V(bits));
  return Status::Ok();
}

// reduce-precision, bit for bit as oracle/elementwise_convert.cc
// ReducePrecisionValue (XLA's HandleReducePrecision): round the mantissa
// to nearest even by adding a bias and masking, then flush values outside
// the new exponent range to signed infinity / signed zero; NaN stays NaN
// (becomes +inf when mantissa_bits == 0). bf16/f16 reduce their f32 value
// and are rounded back to their type.
Status EmitReducePrecision(Ctx& c, int dst, int src) {
  const TypeInfo t = Info(c.instr().operand(0)->shape().element_type());
  const int64_t ebits = c.instr().attrs().exponent_bits;
  const int64_t mbits = c.instr().attrs().mantissa_bits;
  if (t.kind != Kind::kFloat) return c.Cannot(t.name);
  if (ebits < 1 || mbits < 0 || ebits > 64 || mbits > 64) {
    return c.Cannot(t.name + " with exponent_bits=" + std::to_string(ebits) +
                    " mantissa_bits=" + std::to_string(mbits));
  }
  const bool w = t.wide;
  const int kM = w ? 52 : 23, kE = w ? 11 : 8, width = w ? 64 : 32;
  const std::string U = w ? ".u64 " : ".u32 ";
  const std::string ut = w ? "u64" : "u32";
  ASSIGN_OR_RETURN(int r, c.Tmp(w));
  ASSIGN_OR_RETURN(int k, c.Tmp(w));
  ASSIGN_OR_RETURN(int a, c.Tmp(w));
  ASSIGN_OR_RETURN(int b, c.Tmp(w));
  c.Mov(r, src, w);
  if (mbits < kM) {
    const int sh = kM - static_cast<int>(mbits);
    const uint64_t last_bit = uint64_t{1} << sh;
    c.Imm(k, ut, sh);
    c.E("vshrl" + U + V(a) + ", " + V(r) + ", " + V(k));
    c.Imm(k, ut, 1);
    c.E("vand" + U + V(a) + ", " + V(a) + ", " + V(k));
    c.Imm(k, ut, (last_bit >> 1) - 1);
    c.E("vadd" + U + V(a) + ", " + V(a) + ", " + V(k));
    c.E("vadd" + U + V(r) + ", " + V(r) + ", " + V(a));
    uint64_t keep = ~(last_bit - 1);
    if (!w) keep &= 0xffffffffu;
    c.Imm(k, ut, keep);
    c.E("vand" + U + V(r) + ", " + V(r) + ", " + V(k));
  }
  if (ebits < kE) {
    const uint64_t exp_mask = ((uint64_t{1} << kE) - 1) << kM;
    const uint64_t src_bias = (uint64_t{1} << (kE - 1)) - 1;
    const uint64_t dst_bias = (uint64_t{1} << (ebits - 1)) - 1;
    const uint64_t sign = uint64_t{1} << (width - 1);
    c.Imm(k, ut, exp_mask);
    c.E("vand" + U + V(a) + ", " + V(r) + ", " + V(k));  // exp
    c.Imm(k, ut, sign);
    c.E("vand" + U + V(b) + ", " + V(r) + ", " + V(k));  // signed zero
    c.Imm(k, ut, (src_bias + dst_bias) << kM);
    c.E("vcmpgt" + U + "m1, " + V(a) + ", " + V(k));
    c.Imm(k, ut, (src_bias - dst_bias) << kM);
    c.E("vcmple" + U + "m2, " + V(a) + ", " + V(k));
    c.Imm(k, ut, exp_mask);
    c.E("vor" + U + V(a) + ", " + V(b) + ", " + V(k));  // signed inf
    c.E("vsel" + U + V(r) + ", m1, " + V(a) + ", " + V(r));
    c.E("vsel" + U + V(r) + ", m2, " + V(b) + ", " + V(r));
  }
  const std::string F = "." + t.lane + " ";
  c.E("vcmpne" + F + "m1, " + V(src) + ", " + V(src));  // NaN
  if (mbits > 0) {
    c.E("vsel" + F + V(r) + ", m1, " + V(src) + ", " + V(r));
  } else {
    c.Imm(k, t.lane, FloatBits(t.lane, INFINITY));
    c.E("vsel" + F + V(r) + ", m1, " + V(k) + ", " + V(r));
  }
  c.Fix(r, t);
  c.Mov(dst, r, w);
  return Status::Ok();
}

}  // namespace trench::codegen::vops
