// Bounds of dot and convolution (rule in oracle/numerics_contract.h):
//   E(y) = (|A| + E(A)) . (|B| + E(B)) - |A|.|B|      (input uncertainty)
//        + (k' u_acc + p) |A|.|B|                       (accumulation, MXU)
//        + 2 u_T |y| + d_T                              (output rounding)
//        + P h (|A|.1 + 1.|B|) + K (P h)^2   (f32 subnormals on the MXU)
// with both contractions computed by the oracle's own kernels on f64
// copies. The matrix unit (tpu/ISA.md "Matrix unit") multiplies bf16
// values exactly and sums each pass of up to 128 products in f32 before
// adding it to the f32 accumulator; so with K = contracted size and P
// passes, k' = K + P * (ceil(K / 128) + 1) bounds the number of f32
// additions any order of that structure makes per output element.
#include <cmath>

#include "oracle/numerics_internal.h"

namespace trench::oracle::numerics {
namespace {

// Values exactly representable in bf16 multiply exactly in one MXU pass.
bool FitsBf16(PrimitiveType t) {
  return t == PrimitiveType::BF16 || t == PrimitiveType::S8 ||
         t == PrimitiveType::U8 || t == PrimitiveType::PRED;
}

int Passes(Precision p) {
  return p == Precision::kHighest ? 6 : p == Precision::kHigh ? 3 : 1;
}

// True when `v` holds a nonzero value below the smallest normal f32 (=
// bf16) number: rounding it to bf16 loses up to half a bf16 subnormal step,
// an absolute error that no relative bound covers.
bool HasSubnormal(const Literal& v) {
  for (double x : AsDoubles(v)) {
    if (x != 0 && std::fabs(x) < 0x1p-126) return true;
  }
  return false;
}

bool HasNonFinite(const Literal& v) {
  for (double x : AsDoubles(v)) {
    if (!std::isfinite(x)) return true;
  }
  return false;
}

// A convolution that meets padding or dilation holes: the matrix unit
// multiplies the holes' zeros too, and 0 * inf is NaN where the oracle
// skips the hole.
bool HasHoles(const HloInstruction& conv) {
  if (!conv.attrs().window) return false;
  for (const WindowDim& w : *conv.attrs().window) {
    if (w.pad_lo > 0 || w.pad_hi > 0 || w.base_dilation > 1 ||
        w.window_dilation > 1) {
      return true;
    }
  }
  return false;
}

// The precision the dot runs at. XLA's precision_config has a
// backend-specific meaning: each operand's entry asks for at least that
// much accuracy, so a dot runs at the highest of its operands' precisions
// (XLA's TPU and GPU back ends take the max; so does compiler/codegen/
// emit_dot.cc). A compiler may be more accurate than asked (full f32),
// which the bound of the governing precision covers; a one-pass request
// never splits inf into bf16 parts. DEFAULT when absent.
Precision GoverningPrecision(const HloInstruction& instr) {
  Precision precision = Precision::kDefault;
  for (Precision p : instr.attrs().operand_precision) {
    if (Passes(p) > Passes(precision)) precision = p;
  }
  return precision;
}

Literal Ones(const Literal& like) {
  return F64Array(like.shape().dims(),
                  std::vector<double>(like.shape().element_count(), 1.0));
}

}  // namespace

double MatrixUnitError(PrimitiveType t, Precision precision) {
  if (FitsBf16(t) || t == PrimitiveType::F64) return 0;
  const double u = UnitRoundoff(PrimitiveType::BF16);
  switch (precision) {
    case Precision::kHighest:
      // a = hi + mid + lo + r, |lo| <= u^2|a|, |r| <= u^3|a|; the dropped
      // products (mid*lo, lo*mid, lo*lo and those with r) are O(u^3).
      return 6 * u * u * u;
    case Precision::kHigh:
      // a = hi + mid + r, |mid| <= u|a|, |r| <= u^2|a|; dropped mid*mid,
      // hi*r, r*hi: 3 u^2 + O(u^3).
      return 4 * u * u;
    default:
      // One pass: both operands rounded to bf16 once.
      return 2 * u + u * u;
  }
}

StatusOr<Literal> ContractionBound(BoundsEvaluator& ev,
                                   const HloInstruction& instr, BoundedOps ops,
                                   const Literal& y) {
  if (ops.size() != 2 || !y.shape().IsArray()) {
    return InvalidArgument("contraction needs 2 array operands");
  }
  const PrimitiveType t = y.element_type();
  const bool exact_in = AllZero(ops[0]->e) && AllZero(ops[1]->e);
  if (!IsFloat(t)) {
    Literal e = FilledBound(y.shape(), exact_in ? 0 : kInf);
    if (!exact_in) ev.Note("integer contraction with uncertain inputs");
    return e;
  }
  const bool is_dot = instr.opcode() == HloOpcode::kDot;
  const HloInstruction& clone = ev.F64Clone(instr);
  auto contract = [&](const Literal& a, const Literal& b) {
    const Literal* args[] = {&a, &b};
    return is_dot ? EvalDot(clone, args, ev.options())
                  : EvalConvolution(clone, args, ev.options());
  };
  // Contracted size K.
  int64_t k = 1;
  if (is_dot) {
    if (instr.attrs().dot_dnums) {
      for (int64_t d : instr.attrs().dot_dnums->lhs_contracting) {
        if (d >= 0 && d < ops[0]->v.shape().rank()) {
          k *= ops[0]->v.shape().dim(d);
        }
      }
    }
  } else if (instr.attrs().conv_dnums) {
    const int64_t of = instr.attrs().conv_dnums->kernel_output_feature;
    const Shape& rs = ops[1]->v.shape();
    const int64_t outs = of >= 0 && of < rs.rank() ? rs.dim(of) : 1;
    k = outs > 0 ? rs.element_count() / outs : 0;
  }
  const Precision precision = GoverningPrecision(instr);
  // The oracle converts operands to the result type first; the MXU rounds
  // each pass's parts to bf16 (nothing to round when the result is bf16).
  double p = 0;
  int passes = 1;
  if (t == PrimitiveType::F32 || t == PrimitiveType::F16) {
    for (int i = 0; i < 2; ++i) {
      p = std::max(p, MatrixUnitError(ops[i]->v.element_type(), precision));
    }
    passes = Passes(precision);
  }
  const double ua = AccumulatorRoundoff(t);
  const double terms =
      static_cast<double>(k) + passes * (std::ceil(k / 128.0) + 1);
  const Literal abs_a = AbsPlus(ops[0]->v, nullptr);
  const Literal abs_b = AbsPlus(ops[1]->v, nullptr);
  ASSIGN_OR_RETURN(Literal mag, contract(abs_a, abs_b));
  Literal full = mag;
  if (!exact_in) {
    ASSIGN_OR_RETURN(full, contract(AbsPlus(ops[0]->v, &ops[0]->e),
                                    AbsPlus(ops[1]->v, &ops[1]->e)));
  }
  const double u = UnitRoundoff(t), dsub = MinSubnormal(t),
               u64 = UnitRoundoff(PrimitiveType::F64);
  const std::vector<double> yd = AsDoubles(y);
  Literal e = FilledBound(y.shape(), 0);
  auto d = e.mutable_data<double>();
  // Subnormal operands on the matrix unit: each of the `passes` bf16 parts
  // of an operand element may lose h = 2^-134 absolutely, so a product
  // a*b may move by passes*h*(|a| + |b|) + (passes*h)^2 beyond p.
  if (p > 0 && (HasSubnormal(ops[0]->v) || HasSubnormal(ops[1]->v))) {
    const double h = passes * 0x1p-134;
    ASSIGN_OR_RETURN(Literal row, contract(abs_a, Ones(abs_b)));
    ASSIGN_OR_RETURN(Literal col, contract(Ones(abs_a), abs_b));
    const auto r = row.data<double>(), c = col.data<double>();
    for (size_t i = 0; i < d.size(); ++i) {
      d[i] = h * (r[i] + c[i]) + static_cast<double>(k) * h * h;
    }
  }
  // Non-finite operands on the matrix unit: a multi-pass product splits
  // inf into bf16 parts (inf - inf = NaN), and a convolution multiplies
  // the zeros of its padding and dilation holes (0 * inf = NaN), where the
  // oracle gives inf or skips the hole. Real TPUs do the same, so which
  // NaN/inf pattern comes out is the back end's to decide.
  const bool nonfinite_in = HasNonFinite(ops[0]->v) || HasNonFinite(ops[1]->v);
  if (nonfinite_in && !is_dot && HasHoles(instr)) {
    ev.Note("non-finite convolution operand meets padding or dilation");
    return FilledBound(y.shape(), kInf);
  }
  const bool multi_pass_nonfinite = nonfinite_in && passes > 1;
  const bool fixed_nonfinite = exact_in && !multi_pass_nonfinite;
  if (exact_in && multi_pass_nonfinite) {
    ev.Note("non-finite operand in a multi-pass matrix-unit product");
  }
  const auto m = mag.data<double>(), f = full.data<double>();
  for (size_t i = 0; i < d.size(); ++i) {
    if (!std::isfinite(yd[i])) {
      // NaN/inf results are fixed only when the inputs are exact (and the
      // matrix unit takes them in one pass).
      d[i] = fixed_nonfinite ? 0 : kInf;
      continue;
    }
    const double spread = std::max(0.0, f[i] - m[i]) + 4 * u64 * f[i];
    d[i] += spread + (terms * ua + p) * m[i] + 2 * u * std::fabs(yd[i]) + dsub;
    if (!std::isfinite(d[i]) ||
        f[i] >= OverflowThreshold(
                    t == PrimitiveType::F64 ? t : PrimitiveType::F32)) {
      d[i] = kInf;
    }
  }
  return e;
}

}  // namespace trench::oracle::numerics
