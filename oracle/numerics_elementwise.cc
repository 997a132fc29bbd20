// Bounds of elementwise ops (the rule is in oracle/numerics_contract.h):
// corner evaluation in f64 for float ops, interval overlap for compare,
// branch ambiguity for select, exact-or-undetermined for integer and pred
// ops.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "oracle/numerics_internal.h"

namespace trench::oracle::numerics {
namespace {

bool IsApproximate(HloOpcode op) {
  switch (op) {
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kTanh:
    case HloOpcode::kLogistic:
    case HloOpcode::kSin:
    case HloOpcode::kCos:
    case HloOpcode::kTan:
    case HloOpcode::kSqrt:
    case HloOpcode::kRsqrt:
    case HloOpcode::kCbrt:
    case HloOpcode::kErf:
    case HloOpcode::kAtan2:
    case HloOpcode::kPower:
    case HloOpcode::kDivide:
      return true;
    default:
      return false;
  }
}

// Ops whose result is exactly a function of the operands with no rounding.
bool IsExact(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAbs:
    case HloOpcode::kNegate:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kClamp:
    case HloOpcode::kReducePrecision:
      return true;
    default:
      return false;
  }
}

bool IsDiscontinuous(HloOpcode op) {
  switch (op) {
    case HloOpcode::kFloor:
    case HloOpcode::kCeil:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
    case HloOpcode::kSign:
      return true;
    default:
      return false;
  }
}

// One operand's nominal values and bounds, rank-0 operands broadcast.
struct Operand {
  std::vector<double> x;
  std::span<const double> e;
  bool scalar = false;
  bool any_e = false;
  double X(int64_t i) const { return x[scalar ? 0 : i]; }
  double E(int64_t i) const { return e[scalar ? 0 : i]; }
};

std::vector<Operand> Load(BoundedOps ops, int64_t n) {
  std::vector<Operand> out(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    out[k].x = AsDoubles(ops[k]->v);
    out[k].e = ops[k]->e.data<double>();
    out[k].scalar = ops[k]->v.shape().rank() == 0 && n != 1;
    for (double d : out[k].e) out[k].any_e = out[k].any_e || d != 0;
  }
  return out;
}

// Integer/pred results: exact when every operand is exact at the element.
Literal ExactOrUndetermined(const Shape& shape, const std::vector<Operand>& o) {
  Literal e = FilledBound(shape, 0);
  auto d = e.mutable_data<double>();
  for (int64_t i = 0; i < static_cast<int64_t>(d.size()); ++i) {
    for (const Operand& k : o) {
      if (k.E(i) != 0) d[i] = kInf;
    }
  }
  return e;
}

Literal CompareBound(PrimitiveType operand_type, const std::vector<Operand>& o,
                     const Shape& shape) {
  Literal e = FilledBound(shape, 0);
  auto d = e.mutable_data<double>();
  const bool is_float = IsFloat(operand_type);
  for (int64_t i = 0; i < static_cast<int64_t>(d.size()); ++i) {
    const double ea = o[0].E(i), eb = o[1].E(i);
    if (ea == 0 && eb == 0) continue;
    if (std::isinf(ea) || std::isinf(eb) || !is_float) {
      d[i] = kInf;
      continue;
    }
    const double a = o[0].X(i), b = o[1].X(i);
    // A non-finite operand with a finite bound is fixed (the compiler must
    // produce the same NaN/infinity), so its comparisons are too.
    if (!std::isfinite(a) || !std::isfinite(b)) continue;
    if (std::fabs(a - b) <= ea + eb) d[i] = kInf;
  }
  return e;
}

bool SameValue(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

Literal SelectBound(const std::vector<Operand>& o, const Literal& y) {
  Literal e = FilledBound(y.shape(), 0);
  auto d = e.mutable_data<double>();
  const bool is_float = IsFloat(y.element_type());
  for (int64_t i = 0; i < static_cast<int64_t>(d.size()); ++i) {
    const double ea = o[1].E(i), eb = o[2].E(i);
    if (o[0].E(i) == 0) {
      d[i] = o[0].X(i) != 0 ? ea : eb;
      continue;
    }
    const double a = o[1].X(i), b = o[2].X(i);
    if (SameValue(a, b)) {
      d[i] = std::max(ea, eb);
    } else if (is_float && std::isfinite(a) && std::isfinite(b)) {
      d[i] = std::fabs(a - b) + std::max(ea, eb);
    } else {
      d[i] = kInf;
    }
  }
  return e;
}

// and/or of preds: an undetermined input does not matter when the other
// input decides the result.
Literal PredLogicBound(HloOpcode op, const std::vector<Operand>& o,
                       const Shape& shape) {
  Literal e = ExactOrUndetermined(shape, o);
  if (o.size() != 2) return e;
  auto d = e.mutable_data<double>();
  const bool decider = op == HloOpcode::kOr;  // true decides or, false and.
  for (int64_t i = 0; i < static_cast<int64_t>(d.size()); ++i) {
    if (d[i] == 0) continue;
    for (const Operand& k : o) {
      if (k.E(i) == 0 && (k.X(i) != 0) == decider) d[i] = 0;
    }
  }
  return e;
}

// float -> integer/pred convert: determined when both ends of the interval
// convert to the nominal value (convert is monotone).
StatusOr<Literal> ConvertToIntBound(BoundsEvaluator& ev,
                                    const HloInstruction& instr,
                                    const std::vector<Operand>& o,
                                    const Literal& y) {
  Literal e = ExactOrUndetermined(y.shape(), o);
  if (!o[0].any_e) return e;
  const std::vector<int64_t>& dims = y.shape().dims();
  const int64_t n = y.element_count();
  std::vector<double> lo(n), hi(n);
  for (int64_t i = 0; i < n; ++i) {
    lo[i] = o[0].X(i) - o[0].E(i);
    hi[i] = o[0].X(i) + o[0].E(i);
  }
  const Literal llo = F64Array(dims, lo), lhi = F64Array(dims, hi);
  const Literal* plo = &llo;
  const Literal* phi = &lhi;
  ASSIGN_OR_RETURN(Literal clo, ev.Elementwise(instr, y.shape(), {&plo, 1}));
  ASSIGN_OR_RETURN(Literal chi, ev.Elementwise(instr, y.shape(), {&phi, 1}));
  auto d = e.mutable_data<double>();
  for (int64_t i = 0; i < n; ++i) {
    if (std::isinf(o[0].E(i))) continue;
    d[i] = (clo.GetAsInt64(i) == y.GetAsInt64(i) &&
            chi.GetAsInt64(i) == y.GetAsInt64(i))
               ? 0
               : kInf;
  }
  return e;
}

// Element-specific undetermined cases of float ops whose corners cannot
// see a pole, a branch cut or a jump inside the box.
bool InteriorTrouble(HloOpcode op, const std::vector<Operand>& o, int64_t i) {
  switch (op) {
    case HloOpcode::kDivide: {
      const double eb = o[1].E(i);
      return eb > 0 && std::fabs(o[1].X(i)) <= eb;
    }
    case HloOpcode::kRemainder: {
      const double a = o[0].X(i), b = o[1].X(i), ea = o[0].E(i), eb = o[1].E(i);
      if (ea == 0 && eb == 0) return false;
      if (std::fabs(b) <= eb) return true;
      const double q = std::trunc(a / b);
      for (double sa : {-1.0, 1.0}) {
        for (double sb : {-1.0, 1.0}) {
          if (std::trunc((a + sa * ea) / (b + sb * eb)) != q) return true;
        }
      }
      return false;
    }
    case HloOpcode::kTan: {
      const double x = o[0].X(i), ex = o[0].E(i);
      if (ex == 0) return false;
      const double pi = std::numbers::pi;
      return std::floor((x - ex) / pi + 0.5) != std::floor((x + ex) / pi + 0.5);
    }
    case HloOpcode::kAtan2: {
      const double y = o[0].X(i), x = o[1].X(i), ey = o[0].E(i), ex = o[1].E(i);
      if (ey == 0 && ex == 0) return false;
      if (std::fabs(y) <= ey && std::fabs(x) <= ex) return true;  // Origin.
      return ey > 0 && x - ex < 0 && std::fabs(y) <= ey;          // Branch cut.
    }
    default:
      return false;
  }
}

// Ops whose spread has a closed form (interval arithmetic), evaluated
// without corner literals: the fast path for the most common ops.
bool IsAnalytic(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAdd:
    case HloOpcode::kSubtract:
    case HloOpcode::kMultiply:
    case HloOpcode::kNegate:
    case HloOpcode::kAbs:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kConvert:
    case HloOpcode::kCopy:
    case HloOpcode::kClamp:
    case HloOpcode::kDivide:
      return true;
    default:
      return false;
  }
}

// Element i of an analytic op: the f64 value fn, the exact spread over the
// operand box, and the same NaN/overflow rules as the corner path.
template <typename Finish>
void AnalyticElement(HloOpcode op, const std::vector<Operand>& o, int64_t i,
                     double yn, double thr, std::span<double> d,
                     Finish& finish) {
  double a = o[0].X(i), ea = o[0].E(i);
  double b = o.size() > 1 ? o[1].X(i) : 0, eb = o.size() > 1 ? o[1].E(i) : 0;
  double fn = 0, spread = 0;
  bool trouble = std::isinf(ea) || std::isinf(eb);
  switch (op) {
    case HloOpcode::kAdd:
      fn = a + b, spread = ea + eb;
      break;
    case HloOpcode::kSubtract:
      fn = a - b, spread = ea + eb;
      break;
    case HloOpcode::kMultiply:
      fn = a * b;
      spread = std::fabs(a) * eb + std::fabs(b) * ea + ea * eb;
      // inf times an interval around 0: the sign (or NaN-ness) is open.
      trouble = trouble || (std::isinf(a) && eb > 0 && std::fabs(b) <= eb) ||
                (std::isinf(b) && ea > 0 && std::fabs(a) <= ea);
      break;
    case HloOpcode::kDivide:
      fn = a / b;
      // Monotone in each operand while the divisor keeps its sign: the
      // extremes are at the corners. A divisor interval reaching 0 is a pole.
      trouble = trouble || (eb > 0 && std::fabs(b) <= eb);
      if (!trouble && (ea > 0 || eb > 0)) {
        for (double sa : {-ea, ea}) {
          for (double sb : {-eb, eb}) {
            spread = std::max(spread, std::fabs((a + sa) / (b + sb) - fn));
          }
        }
        trouble = std::isnan(spread) && std::isfinite(fn);
        if (std::isnan(spread)) spread = 0;
      }
      break;
    case HloOpcode::kNegate:
      fn = -a, spread = ea;
      break;
    case HloOpcode::kAbs:
      fn = std::fabs(a), spread = ea;
      break;
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
      fn = std::isnan(a) || std::isnan(b) ? a + b
           : op == HloOpcode::kMaximum    ? std::max(a, b)
                                          : std::min(a, b);
      spread = std::max(ea, eb);
      break;
    case HloOpcode::kClamp: {
      const double c = o[2].X(i), ec = o[2].E(i);
      trouble = trouble || std::isinf(ec);
      fn = std::min(std::max(b, a), c);
      if (std::isnan(a) || std::isnan(b) || std::isnan(c)) fn = a + b + c;
      spread = std::max({ea, eb, ec});
      break;
    }
    default:  // convert, copy
      fn = a, spread = ea;
      break;
  }
  if (trouble) {
    d[i] = kInf;
  } else if (std::isnan(yn)) {
    d[i] = std::isnan(fn) ? 0 : kInf;
  } else if (std::isinf(yn)) {
    // Fixed when every point of the box overflows to the same infinity.
    const bool inputs_inf = !std::isfinite(fn);
    d[i] = inputs_inf || (std::fabs(fn) - spread >= thr &&
                          std::signbit(fn) == std::signbit(yn))
               ? 0
               : kInf;
  } else if (!std::isfinite(fn) || std::fabs(fn) + spread >= thr) {
    d[i] = kInf;
  } else {
    finish(i, spread, fn);
  }
}

// pow(NaN, +-0): 1 for a quiet NaN but a quiet NaN for a signaling one
// (IEEE 754-2019 9.2.1 and 6.2; glibc's pow), and a narrower NaN widened
// to f64 here has lost which it was: either result is right.
bool NanToTheZeroth(HloOpcode op, const std::vector<Operand>& o, int64_t i) {
  return op == HloOpcode::kPower && o.size() == 2 && std::isnan(o[0].X(i)) &&
         o[1].X(i) == 0 && o[1].E(i) == 0;
}

// +1: the largest deviation of this monotone op over [x-E, x+E] is at x+E
// (exp, expm1: convex increasing); -1: at x-E (log, log1p, sqrt: concave
// increasing; rsqrt: convex decreasing); 0: evaluate both corners.
int OneSidedCorner(HloOpcode op) {
  switch (op) {
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
      return 1;
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kSqrt:
    case HloOpcode::kRsqrt:
      return -1;
    default:
      return 0;
  }
}

// The float path: corners in f64, spread, rounding, approximation.
StatusOr<Literal> FloatBound(BoundsEvaluator& ev, const HloInstruction& instr,
                             const std::vector<Operand>& o, const Literal& y) {
  const HloOpcode op = instr.opcode();
  const PrimitiveType t = y.element_type();
  const int64_t n = y.element_count();
  const double u = UnitRoundoff(t), dsub = MinSubnormal(t),
               thr = OverflowThreshold(t);
  const bool rounds = !IsExact(op) && !IsDiscontinuous(op);
  const double ulps = IsApproximate(op) ? ev.numerics().transcendental_ulps : 0;
  const std::vector<double> yd = AsDoubles(y);
  Literal e =
      Literal::CreateUninitialized(F64Shape(y.shape()));  // All set below.
  auto d = e.mutable_data<double>();
  // fn: the f64 value of the op at the nominal operands. Below f64 it is
  // (to f64 precision) the exact result, so the oracle's own rounding error
  // |y - fn| is known; an exact result of exact operands is exact for the
  // compiler too, unless the op is approximate.
  auto finish = [&](int64_t i, double spread, double fn) {
    const double ay = std::fabs(yd[i]);
    const bool known = t != PrimitiveType::F64 && std::isfinite(fn);
    double r = spread;
    if (rounds) {
      const double oracle_err = known ? std::fabs(yd[i] - fn) : u * ay;
      const bool exact = known && oracle_err == 0 && spread == 0 && ulps == 0;
      if (!exact) {
        r += oracle_err + u * ((known ? std::fabs(fn) : ay) + spread) + dsub;
      }
    }
    r += ulps * (2 * u * (ay + spread) + dsub);
    d[i] = r;
  };
  const bool lipschitz = op == HloOpcode::kSin || op == HloOpcode::kCos;
  if (IsAnalytic(op) && !o.empty()) {
    for (int64_t i = 0; i < n; ++i)
      AnalyticElement(op, o, i, yd[i], thr, d, finish);
    return e;
  }
  // Corner literals per operand: the nominal values, and x - E, x + E when
  // the operand has a bound (power's base also tries 0 inside).
  const Shape f64_shape = F64Shape(y.shape());
  const HloInstruction& clone = ev.F64Clone(instr);
  // A non-finite nominal result is fixed only when every corner gives it
  // (exp of an x whose interval reaches below the overflow point may be
  // finite), so then both sides are evaluated.
  const bool nonfinite_y = std::any_of(
      yd.begin(), yd.end(), [](double v) { return !std::isfinite(v); });
  const int side = nonfinite_y ? 0 : OneSidedCorner(op);
  std::vector<std::vector<Literal>> choices(o.size());
  for (size_t k = 0; k < o.size(); ++k) {
    const std::vector<int64_t> dims =
        o[k].scalar ? std::vector<int64_t>{} : y.shape().dims();
    choices[k].push_back(F64Array(dims, o[k].x));
    if (!o[k].any_e || lipschitz) continue;
    std::vector<double> c(o[k].x.size());
    // Monotone convex/concave unary ops deviate most (and, from a finite
    // nominal value, can only overflow or leave the domain) on one side.
    for (double s : {-1.0, 1.0}) {
      if (side != 0 && s != side) continue;
      for (size_t i = 0; i < c.size(); ++i) c[i] = o[k].x[i] + s * o[k].e[i];
      choices[k].push_back(F64Array(dims, c));
    }
    if (op == HloOpcode::kPower && k == 0) {
      for (size_t i = 0; i < c.size(); ++i) {
        const double x = o[k].x[i], ex = o[k].e[i];
        c[i] = (x - ex < 0 && x + ex > 0) ? 0 : x;
      }
      choices[k].push_back(F64Array(dims, c));
    }
  }
  std::vector<Literal> corners;  // corners[0]: the nominal f64 value.
  std::vector<size_t> pick(o.size(), 0);
  std::vector<const Literal*> args(o.size());
  while (true) {
    for (size_t k = 0; k < o.size(); ++k) args[k] = &choices[k][pick[k]];
    ASSIGN_OR_RETURN(Literal c, ev.Elementwise(clone, f64_shape, args));
    corners.push_back(std::move(c));
    size_t k = 0;
    while (k < o.size() && ++pick[k] == choices[k].size()) pick[k++] = 0;
    if (k == o.size()) break;
  }
  std::vector<std::span<const double>> cd;
  const bool interior = op == HloOpcode::kDivide ||
                        op == HloOpcode::kRemainder || op == HloOpcode::kTan ||
                        op == HloOpcode::kAtan2;
  for (const Literal& c : corners) cd.push_back(c.data<double>());
  for (int64_t i = 0; i < n; ++i) {
    bool inf_input = false;
    for (const Operand& k : o) inf_input = inf_input || std::isinf(k.E(i));
    if (inf_input || (interior && InteriorTrouble(op, o, i)) ||
        NanToTheZeroth(op, o, i)) {
      d[i] = kInf;
      continue;
    }
    const double yn = yd[i], fn = cd[0][i];
    bool undetermined = false, zero_flip = false;
    double spread = 0;
    for (size_t c = 0; c < cd.size() && !undetermined; ++c) {
      const double v = cd[c][i];
      // A corner that gives a zero of the other sign: e.g. round(x) of an
      // x within E of 0 may be -0 or +0, which atan2 or a divide tells apart.
      zero_flip = zero_flip ||
                  (v == 0 && fn == 0 && std::signbit(v) != std::signbit(fn));
      if (std::isnan(yn)) {
        undetermined = !std::isnan(v);
      } else if (std::isinf(yn)) {
        undetermined = std::isnan(v) || std::fabs(v) < thr ||
                       std::signbit(v) != std::signbit(yn);
      } else if (!std::isfinite(fn) || std::isnan(v) || std::fabs(v) >= thr) {
        undetermined = true;
      } else {
        spread = std::max(spread, std::fabs(v - fn));
      }
    }
    if (lipschitz) spread = std::min(o[0].E(i), 2.0);
    if (undetermined || (IsDiscontinuous(op) && spread != 0)) {
      d[i] = kInf;
    } else if (!std::isfinite(yn)) {
      d[i] = 0;
    } else {
      finish(i, spread, fn);
      // The sign of a zero result is not determined: a nonzero bound makes
      // sign-sensitive users (atan2, divide) see that.
      if (zero_flip) d[i] = std::max(d[i], dsub);
    }
  }
  return e;
}

// bitcast-convert between types of different widths: the narrower side
// has one more (minor) dimension of width ratio r; an output element is
// exact iff every input element it shares bits with is.
StatusOr<Literal> WidthChangingBitcastBound(const Bounded& in,
                                            const Literal& y) {
  const int64_t n_in = in.v.element_count(), n_out = y.element_count();
  Literal e = FilledBound(y.shape(), 0);
  auto d = e.mutable_data<double>();
  const auto ein = in.e.data<double>();
  if (n_in == 0 || n_out == 0) return e;
  if (n_out > n_in) {
    if (n_out % n_in != 0) return InvalidArgument("bitcast-convert widths");
    const int64_t r = n_out / n_in;
    for (int64_t j = 0; j < n_out; ++j) {
      if (ein[j / r] != 0) d[j] = kInf;
    }
  } else {
    if (n_in % n_out != 0) return InvalidArgument("bitcast-convert widths");
    const int64_t r = n_in / n_out;
    for (int64_t i = 0; i < n_in; ++i) {
      if (ein[i] != 0) d[i / r] = kInf;
    }
  }
  return e;
}

}  // namespace

StatusOr<Literal> ElementwiseBound(BoundsEvaluator& ev,
                                   const HloInstruction& instr, BoundedOps ops,
                                   const Literal& y) {
  const HloOpcode op = instr.opcode();
  const int64_t n = y.element_count();
  if (op == HloOpcode::kBitcastConvert && ops.size() == 1 &&
      ops[0]->v.shape().IsArray() && ops[0]->v.element_count() != n) {
    return WidthChangingBitcastBound(*ops[0], y);
  }
  for (const Bounded* b : ops) {
    if (!b->v.shape().IsArray() ||
        (b->v.element_count() != n && b->v.shape().rank() != 0)) {
      return InvalidArgument("elementwise operand shape mismatch");
    }
  }
  const std::vector<Operand> o = Load(ops, n);
  const PrimitiveType t = y.element_type();
  bool complex_operand = IsComplex(t);
  for (const Bounded* b : ops) {
    complex_operand = complex_operand || IsComplex(b->v.element_type());
  }
  if (complex_operand) {
    Literal e = ExactOrUndetermined(y.shape(), o);
    const bool exact_op = op == HloOpcode::kReal || op == HloOpcode::kImag ||
                          op == HloOpcode::kNegate || op == HloOpcode::kComplex;
    if (!exact_op) {
      ev.Note("complex arithmetic");
      MakeUndetermined(e);
    }
    return e;
  }
  switch (op) {
    case HloOpcode::kCompare:
      if (o.size() != 2) return InvalidArgument("compare needs 2 operands");
      return CompareBound(ops[0]->v.element_type(), o, y.shape());
    case HloOpcode::kSelect:
      if (o.size() != 3) return InvalidArgument("select needs 3 operands");
      return SelectBound(o, y);
    case HloOpcode::kIsFinite:
    case HloOpcode::kBitcastConvert:
      return ExactOrUndetermined(y.shape(), o);
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
      if (t == PrimitiveType::PRED) return PredLogicBound(op, o, y.shape());
      return ExactOrUndetermined(y.shape(), o);
    case HloOpcode::kConvert:
    case HloOpcode::kCopy: {
      if (o.size() != 1) return InvalidArgument("convert needs 1 operand");
      const PrimitiveType from = ops[0]->v.element_type();
      if (!IsFloat(from)) {
        Literal e = ExactOrUndetermined(y.shape(), o);
        if (IsFloat(t)) {
          // Integer -> float: one rounding of an exact value.
          const std::vector<double> yd = AsDoubles(y);
          auto d = e.mutable_data<double>();
          for (int64_t i = 0; i < n; ++i) {
            if (d[i] == 0) d[i] = UnitRoundoff(t) * std::fabs(yd[i]);
          }
        }
        return e;
      }
      if (!IsFloat(t)) return ConvertToIntBound(ev, instr, o, y);
      return FloatBound(ev, instr, o, y);
    }
    default:
      break;
  }
  if (!IsFloat(t)) {
    if (op == HloOpcode::kClamp || op == HloOpcode::kMaximum ||
        op == HloOpcode::kMinimum) {
      // Exact selections of exact inputs.
      return ExactOrUndetermined(y.shape(), o);
    }
    if (std::any_of(o.begin(), o.end(),
                    [](const Operand& k) { return k.any_e; })) {
      ev.Note("integer/pred op with an undetermined operand");
    }
    return ExactOrUndetermined(y.shape(), o);
  }
  return FloatBound(ev, instr, o, y);
}

}  // namespace trench::oracle::numerics
