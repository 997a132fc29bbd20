// Elementwise ops with their domain guards (generator.h, "Values").
#include <cmath>
#include <cstdlib>
#include <limits>

#include "triage/fuzz/generator_internal.h"

namespace trench::fuzz::internal {
namespace {

using O = HloOpcode;
using P = PrimitiveType;

bool Float(P t) { return IsFloat(t); }
bool Numeric(P t) { return t != P::PRED; }
bool IntOrPred(P t) { return IsInteger(t) || t == P::PRED; }

// Types op takes in generated programs.
bool TypeOk(O op, P t) {
  switch (op) {
    case O::kAbs:
    case O::kSign:
      return IsSigned(t) || IsFloat(t) || (op == O::kAbs && IsComplex(t));
    case O::kNegate:
    case O::kAdd:
    case O::kSubtract:
    case O::kMultiply:
    case O::kDivide:
      return Numeric(t);
    case O::kNot:
    case O::kAnd:
    case O::kOr:
    case O::kXor:
      return IntOrPred(t);
    case O::kPopulationCount:
    case O::kClz:
    case O::kShiftLeft:
    case O::kShiftRightArithmetic:
    case O::kShiftRightLogical:
      return IsInteger(t);
    case O::kReal:
    case O::kImag:
      return IsComplex(t);
    case O::kComplex:
      return t == P::F32 || t == P::F64;
    case O::kCopy:
    case O::kCompare:
    case O::kSelect:
    case O::kConvert:
      return true;
    case O::kMaximum:
    case O::kMinimum:
    case O::kClamp:
      return !IsComplex(t);
    case O::kRemainder:
    case O::kPower:
      return Numeric(t) && !IsComplex(t);
    case O::kBitcastConvert:
      return Numeric(t) && !IsComplex(t);
    default:  // Float-only ops (rounding, transcendentals, is-finite...).
      return Float(t);
  }
}

double Log2Max(int exponent_bits) {
  return std::ldexp(1.0, (1 << (exponent_bits - 1)) - 1);
}

// A same-dims, same-type second operand for `a`.
Value Second(Gen& g, const Value& a) {
  return g.Operand(a.shape.element_type(), a.shape.dims());
}

// 1 + |v| (v float), a value >= 1.
Value AbsPlusOne(Gen& g, const Value& v) {
  Value a = g.Unary("abs", v, v.bound);
  Value one = g.Splat(v.shape.element_type(), v.shape.dims(), 1);
  return g.Binary("add", a, one, v.bound + 1);
}

// v | 1 for integers: never zero.
Value NonZeroInt(Gen& g, const Value& v) {
  Value one = g.Splat(v.shape.element_type(), v.shape.dims(), 1);
  return g.Binary("or", v, one, v.bound + 1);
}

Value Mask(Gen& g, const Value& v, uint64_t mask) {
  const P t = v.shape.element_type();
  Value c = g.ctx->builder->Add(Shape(t, {}), "constant",
                                {std::to_string(mask)}, "", 0);
  Value m = g.Emit(g.Like(v), "broadcast", {c}, "dimensions={}", 0, false);
  return g.Binary("and", v, m, static_cast<double>(mask));
}

bool EmitUnary(Gen& g, O op, Value x) {
  const P t = x.shape.element_type();
  const bool guard = !g.opt.allow_nonfinite;
  const std::string name(OpcodeName(op));
  const double b = x.bound;
  const double lim = Limit(t);
  switch (op) {
    case O::kAbs:
      g.Unary(name, x, b * (IsComplex(t) ? 1.5 : 1),
              t == P::C64    ? P::F32
              : t == P::C128 ? P::F64
                             : t);
      return true;
    case O::kReal:
    case O::kImag:
      g.Unary(name, x, b, t == P::C64 ? P::F32 : P::F64);
      return true;
    case O::kIsFinite:
      g.Unary(name, x, 1, P::PRED);
      return true;
    case O::kNot:
    case O::kPopulationCount:
    case O::kClz:
      g.Unary(name, x, op == O::kNot ? 1e300 : BitWidth(t));
      return true;
    case O::kFloor:
    case O::kCeil:
    case O::kRoundNearestAfz:
    case O::kRoundNearestEven:
      g.Unary(name, x, b + 1);
      return true;
    case O::kReducePrecision: {
      std::vector<int> ebits = {4, 5, 8, 11};
      int e = g.rng.Pick(ebits);
      e = std::min(e, ExponentBits(t));
      std::vector<int> mbits = {0, 1, 3, 7, 10, 23, 52};
      int m = std::min(g.rng.Pick(mbits), MantissaBits(t));
      if (guard && e < 11) x = g.Tame(x, Log2Max(e) / 4);
      g.Unary(name, x, x.bound * 2, std::nullopt,
              "exponent_bits=" + std::to_string(e) +
                  ", mantissa_bits=" + std::to_string(m));
      return true;
    }
    case O::kExp:
    case O::kExpm1: {
      const double c = std::min(20.0, std::log(lim) / 2);
      if (guard) x = g.Tame(x, c);
      g.Unary(name, x, std::exp(std::min(x.bound, 700.0)) + 1);
      return true;
    }
    case O::kLog:
      if (guard) x = AbsPlusOne(g, x);
      g.Unary(name, x, std::log(x.bound + 1) + 1);
      return true;
    case O::kLog1p:
      if (guard) x = g.Unary("abs", x, b);
      g.Unary(name, x, std::log1p(x.bound) + 1);
      return true;
    case O::kSqrt:
      if (guard) x = g.Unary("abs", x, b);
      g.Unary(name, x, std::sqrt(x.bound) + 1);
      return true;
    case O::kRsqrt:
      if (guard) x = AbsPlusOne(g, x);
      g.Unary(name, x, 1);
      return true;
    case O::kCbrt:
      g.Unary(name, x, std::cbrt(b) + 1);
      return true;
    case O::kTan:
      if (guard) x = g.Tame(x, 1.25);
      g.Unary(name, x, 4);
      return true;
    default:  // negate, sign, copy, sine, cosine, tanh, logistic, erf.
      g.Unary(name, x,
              op == O::kNegate && IsUnsigned(t)    ? 1e300  // wraps
              : op == O::kNegate || op == O::kCopy ? b + 1
              : op == O::kSign                     ? 1
                                                   : 1.5);
      return true;
  }
}

// Whether op(x, x) is drawn for type t: total ops, and in special-value
// programs float division and remainder (x / x is NaN for 0 and inf).
bool SameOk(const Gen& g, O op, P t) {
  switch (op) {
    case O::kAdd:
    case O::kSubtract:
    case O::kMultiply:
    case O::kMaximum:
    case O::kMinimum:
    case O::kAnd:
    case O::kOr:
    case O::kXor:
    case O::kAtan2:
    case O::kComplex:
      return true;
    case O::kDivide:
    case O::kRemainder:
      return g.special && IsFloat(t);
    default:
      return false;
  }
}

// Which operands of an op with edge semantics are edge operands
// (GeneratorOptions::edge_operands): none, the first, the second or both.
struct Edge {
  bool a = false, b = false;
  bool any() const { return a || b; }
};

Edge DrawEdge(Gen& g) {
  Edge e;
  if (!g.EdgeChance()) return e;
  const int64_t k = g.rng.Uniform(0, 3);
  e.a = k >= 2;
  e.b = k != 2;
  return e;
}

bool EmitBinary(Gen& g, O op, Value a, Edge edge = {}) {
  const P t = a.shape.element_type();
  const bool guard = !g.opt.allow_nonfinite;
  const std::string name(OpcodeName(op));
  const double lim = Limit(t);
  if (edge.a) a = g.EdgeOperand(t, a.shape.dims());
  // Float divisors without NaN/inf allowed: nonzero edge values only
  // (fmod(x, 0) is NaN; the division keeps its |y| + 1 guard).
  const bool nonzero_b = op == O::kRemainder && IsFloat(t) && !g.NonfiniteOk();
  const bool same = !edge.b && SameOk(g, op, t) && g.SameOperand();
  Value b = same     ? a
            : edge.b ? g.EdgeOperand(t, a.shape.dims(), nonzero_b)
                     : Second(g, a);
  if (same && (op == O::kDivide || op == O::kRemainder)) {
    g.Binary(name, a, a, 1);
    return true;
  }
  switch (op) {
    case O::kAdd:
    case O::kSubtract:
      if (guard) a = g.Tame(a, lim / 2), b = same ? a : g.Tame(b, lim / 2);
      // Unsigned subtraction wraps below zero.
      g.Binary(name, a, b,
               op == O::kSubtract && IsUnsigned(t) ? 1e300 : a.bound + b.bound);
      return true;
    case O::kMultiply:
      if (guard) {
        a = g.Tame(a, std::sqrt(lim) / 2);
        b = same ? a : g.Tame(b, std::sqrt(lim) / 2);
      }
      g.Binary(name, a, b, a.bound * b.bound);
      return true;
    case O::kDivide:
    case O::kRemainder:
      if (edge.b && (IsInteger(t) || (IsFloat(t) && (g.NonfiniteOk() ||
                                                     op == O::kRemainder)))) {
        // XLA defines x / 0 (-1 or all ones), x % 0 = x, INT_MIN / -1 and
        // INT_MIN % -1; float division by edge values is left unguarded
        // where NaN and inf may appear, fmod by nonzero ones everywhere.
        const bool unbounded = IsFloat(t) ? op == O::kDivide : IsUnsigned(t);
        g.Binary(name, a, b,
                 unbounded ? std::numeric_limits<double>::infinity()
                           : std::max(a.bound, 1.0));
        return true;
      }
      if (guard) {
        if (IsInteger(t)) {
          b = NonZeroInt(g, b);
        } else if (IsComplex(t)) {
          // Real part >= 1: |b| >= 1. Tamed first, so that the offset
          // and the sum stay finite in the type.
          b = g.Tame(b, lim / 4);
          b = g.Binary("add", b, g.Splat(t, b.shape.dims(), b.bound + 1),
                       2 * b.bound + 1);
        } else {
          b = AbsPlusOne(g, b);
        }
      }
      g.Binary(name, a, b, a.bound * (IsComplex(t) ? 1.5 : 1));
      return true;
    case O::kPower:
      if (edge.any() && (IsInteger(t) || g.NonfiniteOk())) {
        // Integer powers wrap (negative exponents: XLA's 0 or 1); float
        // powers of edge values only where NaN and inf may appear.
        g.Binary(name, a, b, std::numeric_limits<double>::infinity());
        return true;
      }
      if (guard) {
        if (IsInteger(t)) {
          b = Mask(g, b, 3);
        } else {
          a = AbsPlusOne(g, g.Tame(a, 7));
          b = g.Tame(b, 3);
        }
      }
      g.Binary(name, a, b, IsInteger(t) ? 1e300 : std::pow(a.bound, 3) + 1);
      return true;
    case O::kAtan2:
      g.Binary(name, a, b, 3.15);
      return true;
    case O::kMaximum:
    case O::kMinimum:
    case O::kAnd:
      g.Binary(name, a, b, std::max(a.bound, b.bound));
      return true;
    case O::kShiftLeft:
    case O::kShiftRightArithmetic:
    case O::kShiftRightLogical:
      // Edge shift amounts stay: XLA defines shifts past the bit width.
      if (guard && !edge.b) b = Mask(g, b, BitWidth(t) - 1);
      g.Binary(name, a, b, 1e300);
      return true;
    case O::kComplex:
      g.Binary(name, a, b, std::max(a.bound, b.bound));
      return true;
    default:  // or, xor
      g.Binary(name, a, b, t == P::PRED ? 1 : 1e300);
      return true;
  }
}

const char* kDirections[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};

bool EmitCompareSelectClamp(Gen& g, O op, Value a) {
  const P t = a.shape.element_type();
  const Edge edge = op == O::kSelect ? Edge{} : DrawEdge(g);
  if (edge.a) a = g.EdgeOperand(t, a.shape.dims());
  if (op == O::kCompare) {
    const bool same = !edge.b && g.SameOperand();
    Value b = same     ? a
              : edge.b ? g.EdgeOperand(t, a.shape.dims())
                       : Second(g, a);
    std::string dir = kDirections[g.rng.Uniform(0, IsComplex(t) ? 1 : 5)];
    std::string attrs = "direction=" + dir;
    if (IsFloat(t) && g.rng.Chance(0.2)) {
      // The total order tells NaNs apart by sign and payload, which IEEE
      // leaves to the implementation.
      attrs += ", type=TOTALORDER";
      a = g.NoNaN(a);
      b = same ? a : g.NoNaN(b);
    }
    g.Binary("compare", a, b, 1, attrs);
    return true;
  }
  if (op == O::kSelect) {
    Value b = Second(g, a);
    Value p = g.Operand(P::PRED, a.shape.dims());
    g.Emit(g.Like(a), "select", {p, a, b}, "", std::max(a.bound, b.bound));
    return true;
  }
  // clamp(lo, x, hi): bounds scalars or arrays.
  const bool scalar = g.rng.Chance(0.4);
  const std::vector<int64_t> dims =
      scalar ? std::vector<int64_t>{} : a.shape.dims();
  Value lo =
      edge.b && g.rng.Chance(0.7) ? g.EdgeOperand(t, dims) : g.Operand(t, dims);
  Value hi =
      edge.b && g.rng.Chance(0.7) ? g.EdgeOperand(t, dims) : g.Operand(t, dims);
  g.Emit(g.Like(a), "clamp", {lo, a, hi}, "",
         std::max({a.bound, lo.bound, hi.bound}));
  return true;
}

bool EmitBitcastConvert(Gen& g, Value x) {
  const P from = x.shape.element_type();
  std::vector<P> targets;
  for (P t : g.dtypes) {
    if (t != from && TypeOk(O::kBitcastConvert, t) &&
        BitWidth(t) == BitWidth(from)) {
      targets.push_back(t);
    }
  }
  if (targets.empty()) return false;
  const P to = g.rng.Pick(targets);
  x = g.NoNaN(x);  // A NaN's bits are the implementation's.
  double bound = 1e300;
  if (IsFloat(to) && !g.opt.allow_nonfinite) {
    if (IsInteger(from)) {
      // Sign and top exponent bit cleared: finite, below 2.
      x = Mask(g, x, (uint64_t{1} << (BitWidth(from) - 2)) - 1);
      bound = 2;
    } else if (from == P::BF16) {
      // bf16 bits read as f16 overflow only from bf16 values >= 2^121.
      x = g.Tame(x, 1e30);
      bound = 65504;
    } else {
      bound = 3e38;  // f16 bits read as bf16: below 2^121.
    }
  }
  g.Emit(g.Like(x, to), "bitcast-convert", {x}, "", bound);
  return true;
}

}  // namespace

const std::vector<HloOpcode>& BodyOps() {
  static const auto* ops = new std::vector<HloOpcode>{
      O::kAdd,     O::kSubtract, O::kMultiply, O::kMaximum, O::kMinimum,
      O::kNegate,  O::kAbs,      O::kTanh,     O::kExp,     O::kLog,
      O::kSelect,  O::kCompare,  O::kConvert,  O::kDivide,  O::kClamp,
      O::kAnd,     O::kXor,      O::kSin,      O::kFloor,   O::kSqrt,
      O::kLogistic};
  return *ops;
}

std::optional<Value> ElementwiseOn(Gen& g, const Value& x) {
  static const std::vector<O> kOps = {
      O::kAdd,   O::kSubtract, O::kMultiply, O::kMaximum, O::kMinimum,
      O::kAbs,   O::kNegate,   O::kExp,      O::kTanh,    O::kLog,
      O::kSqrt,  O::kSin,      O::kAnd,      O::kXor,     O::kNot,
      O::kFloor, O::kLogistic, O::kDivide};
  std::vector<O> ok;
  for (O op : kOps) {
    if (TypeOk(op, x.shape.element_type())) ok.push_back(op);
  }
  if (ok.empty()) return std::nullopt;
  const O op = g.rng.Pick(ok);
  if (IsElementwiseUnary(op)) {
    EmitUnary(g, op, x);
  } else {
    EmitBinary(g, op, x);
  }
  return g.ctx->pool.back();
}

// A type next to `from` where a convert's exactness changes: the other
// signedness at the same width (half of the time for integers), the same kind
// one width up or down, or a float whose mantissa is about as wide as `from`'s
// bits. nullopt if the options allow none.
std::optional<P> NeighbourType(Gen& g, P from) {
  if (IsComplex(from)) return std::nullopt;
  const int fb = BitWidth(from);
  if (IsInteger(from) && g.rng.Chance(0.5)) {
    // Half of the time the other signedness: where wrap-around starts.
    auto flip = g.PickType([&](P t) {
      return IsInteger(t) && BitWidth(t) == fb && IsSigned(t) != IsSigned(from);
    });
    if (flip) return flip;
  }
  return g.PickType([&](P t) {
    if (t == from || IsComplex(t) || t == P::PRED) return false;
    const int tb = BitWidth(t);
    if (IsInteger(from) && IsInteger(t)) {
      return tb == fb ||
             (IsSigned(t) == IsSigned(from) && (tb == 2 * fb || 2 * tb == fb));
    }
    if (IsInteger(from) != IsInteger(t)) {
      const P f = IsInteger(from) ? t : from;
      const int ib = IsInteger(from) ? fb : tb;
      return std::abs(MantissaBits(f) + 1 - ib) <= 8;
    }
    return tb == fb || tb == 2 * fb || 2 * tb == fb;
  });
}

bool EmitElementwise(Gen& g, HloOpcode op) {
  auto ok = [op](P t) { return TypeOk(op, t); };
  std::optional<Value> x = g.AnyOperand(ok);
  if (!x) return false;
  if (op == O::kConvert) {
    if (g.EdgeChance()) {
      // Any pair of types, the operand made of the source type's edge
      // values; float -> integer saturates (XLA; NaN -> 0).
      const P from = g.rng.Pick(g.dtypes);
      auto to = g.PickType([&](P t) {
        return t != from && !(IsComplex(from) && !IsComplex(t));
      });
      if (!to) return false;
      Value v = g.EdgeOperand(from, x->shape.dims());
      if (g.rng.Chance(0.5)) {
        // A chain through a neighbour of the source type: the lossless
        // checks that merge convert chains decide at these edges.
        if (auto mid = NeighbourType(g, from); mid && *mid != *to) {
          v = g.Convert(v, *mid, true);
        }
      }
      g.Convert(v, *to, true);
      return true;
    }
    auto to = g.PickType([&](P t) {
      return t != x->shape.element_type() &&
             !(IsComplex(x->shape.element_type()) && !IsComplex(t));
    });
    if (!to) return false;
    g.Convert(*x, *to);
    return true;
  }
  if (op == O::kBitcastConvert) return EmitBitcastConvert(g, *x);
  if (op == O::kCompare || op == O::kSelect || op == O::kClamp) {
    return EmitCompareSelectClamp(g, op, *x);
  }
  if (IsElementwiseUnary(op)) return EmitUnary(g, op, *x);
  // compare, clamp and convert draw their edges in their own emitters.
  return EmitBinary(g, op, *x, HasEdgeSemantics(op) ? DrawEdge(g) : Edge{});
}

}  // namespace trench::fuzz::internal
