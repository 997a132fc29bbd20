#include "oracle/comparator.h"

#include <bit>
#include <cmath>
#include <limits>

#include "compiler/ir/literal_json.h"

namespace trench {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

enum class Verdict { kOk, kMismatch, kNonFinite };

// The result of comparing one scalar (or one complex part).
struct Scalar {
  Verdict verdict = Verdict::kOk;
  bool finite = false;  // Both finite: errors are meaningful.
  double abs = 0, rel = 0;
  uint64_t ulp = 0;
};

// Bits of a float format as a signed position on the number line.
int64_t Ordered(uint64_t bits, int total_bits) {
  const uint64_t sign = uint64_t{1} << (total_bits - 1);
  const auto mag = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -mag : mag;
}

uint64_t Distance(int64_t a, int64_t b) {
  return a >= b ? static_cast<uint64_t>(a) - static_cast<uint64_t>(b)
                : static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
}

void SetErrors(double a, double e, Scalar& s) {
  s.abs = std::fabs(a - e);
  s.rel = e == 0 ? (s.abs == 0 ? 0 : kInf) : s.abs / std::fabs(e);
}

Scalar CompareFloat(double a, double e, uint64_t abits, uint64_t ebits,
                    int total_bits, const ComparisonOptions& opts,
                    const Tolerance& tol) {
  Scalar s;
  s.finite = std::isfinite(a) && std::isfinite(e);
  if (s.finite) {
    SetErrors(a, e, s);
    s.ulp = Distance(Ordered(abits, total_bits), Ordered(ebits, total_bits));
  }
  const bool nan_a = std::isnan(a), nan_e = std::isnan(e);
  if (opts.mode == CompareMode::kExact) {
    if (abits == ebits || (nan_a && nan_e)) return s;
    s.verdict = s.finite ? Verdict::kMismatch : Verdict::kNonFinite;
    return s;
  }
  if (nan_a || nan_e) {
    if (!(nan_a && nan_e)) s.verdict = Verdict::kNonFinite;
    return s;
  }
  if (!s.finite) {
    if (a != e) s.verdict = Verdict::kNonFinite;
    return s;
  }
  const bool abs_ok = s.abs <= tol.abs, rel_ok = s.rel <= tol.rel;
  const bool ok = opts.rule == ToleranceRule::kAbsOrRel ? (abs_ok || rel_ok)
                                                        : (abs_ok && rel_ok);
  if (!ok) s.verdict = Verdict::kMismatch;
  return s;
}

template <typename T>
uint64_t Bits(T v) {
  if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<uint32_t>(v);
  } else if constexpr (std::is_same_v<T, double>) {
    return std::bit_cast<uint64_t>(v);
  } else {
    return v.bits;  // bf16, f16
  }
}

template <PrimitiveType T>
Scalar CompareElement(const NativeT<T>& a, const NativeT<T>& e,
                      const ComparisonOptions& opts, const Tolerance& tol) {
  using N = NativeT<T>;
  if constexpr (std::is_integral_v<N>) {
    Scalar s;
    s.finite = true;
    const __int128 d = static_cast<__int128>(a) - static_cast<__int128>(e);
    const __int128 ad = d < 0 ? -d : d;
    s.abs = static_cast<double>(ad);
    const double ae = std::fabs(static_cast<double>(e));
    s.rel = ae == 0 ? (s.abs == 0 ? 0 : kInf) : s.abs / ae;
    s.ulp = static_cast<uint64_t>(ad);
    if (a != e) s.verdict = Verdict::kMismatch;
    return s;
  } else if constexpr (T == PrimitiveType::C64 || T == PrimitiveType::C128) {
    constexpr int bits = sizeof(typename N::value_type) * 8;
    Scalar re = CompareFloat(a.real(), e.real(), Bits(a.real()), Bits(e.real()),
                             bits, opts, tol);
    const Scalar im = CompareFloat(a.imag(), e.imag(), Bits(a.imag()),
                                   Bits(e.imag()), bits, opts, tol);
    re.verdict = std::max(re.verdict, im.verdict);
    re.finite = re.finite && im.finite;
    re.abs = std::max(re.abs, im.abs);
    re.rel = std::max(re.rel, im.rel);
    re.ulp = std::max(re.ulp, im.ulp);
    return re;
  } else if constexpr (std::is_same_v<N, double>) {
    return CompareFloat(a, e, Bits(a), Bits(e), 64, opts, tol);
  } else {  // f32, bf16, f16: exact in float.
    return CompareFloat(static_cast<float>(a), static_cast<float>(e), Bits(a),
                        Bits(e), sizeof(N) * 8, opts, tol);
  }
}

std::vector<int64_t> MultiIndex(const Shape& shape, int64_t linear) {
  std::vector<int64_t> index(shape.rank());
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    index[d] = shape.dim(d) == 0 ? 0 : linear % shape.dim(d);
    linear = shape.dim(d) == 0 ? 0 : linear / shape.dim(d);
  }
  return index;
}

ElementMismatch MakeMismatch(const Literal& a, const Literal& e, int64_t i,
                             const Scalar& s) {
  ElementMismatch m;
  m.linear_index = i;
  m.index = MultiIndex(e.shape(), i);
  m.expected = ElementToJson(e, i);
  m.actual = ElementToJson(a, i);
  m.abs_error = s.abs;
  m.rel_error = s.rel;
  return m;
}

void Accumulate(const Literal& a, const Literal& e, int64_t i, const Scalar& s,
                OutputComparison& out) {
  if (s.finite) {
    out.max_abs_error = std::max(out.max_abs_error, s.abs);
    out.max_rel_error = std::max(out.max_rel_error, s.rel);
    out.max_ulp_error = std::max(out.max_ulp_error, s.ulp);
  }
  if (s.verdict == Verdict::kMismatch) {
    if (out.mismatch_count++ == 0) {
      out.first_mismatch = MakeMismatch(a, e, i, s);
    }
  } else if (s.verdict == Verdict::kNonFinite) {
    if (out.nonfinite_mismatch_count++ == 0) {
      out.first_nonfinite_mismatch = MakeMismatch(a, e, i, s);
    }
  }
}

OutputComparison CompareLeaf(const Literal& a, const Literal& e,
                             const ComparisonOptions& opts) {
  OutputComparison out;
  out.expected_shape = e.shape().ToString(false);
  out.actual_shape = a.shape().ToString(false);
  if (!a.shape().IsArray() || !e.shape().IsArray()) {
    if (a.shape().element_type() != e.shape().element_type()) {
      out.shape_error =
          "expected " + out.expected_shape + ", got " + out.actual_shape;
    }
    return out;  // Tokens compare equal to tokens.
  }
  if (a.element_type() != e.element_type() ||
      a.shape().dims() != e.shape().dims()) {
    out.shape_error =
        "expected " + out.expected_shape + ", got " + out.actual_shape;
    return out;
  }
  out.tolerance = opts.ForType(e.element_type());
  out.element_count = e.element_count();
  DispatchArrayType(e.element_type(), [&]<PrimitiveType T>() {
    using N = NativeT<T>;
    const auto ad = a.data<N>();
    const auto ed = e.data<N>();
    for (int64_t i = 0; i < out.element_count; ++i) {
      Accumulate(a, e, i, CompareElement<T>(ad[i], ed[i], opts, out.tolerance),
                 out);
    }
  });
  return out;
}

}  // namespace

Tolerance ComparisonOptions::ForType(PrimitiveType t) const {
  switch (t) {
    case PrimitiveType::F16:
      return f16;
    case PrimitiveType::BF16:
      return bf16;
    case PrimitiveType::F32:
    case PrimitiveType::C64:
      return f32;
    case PrimitiveType::F64:
    case PrimitiveType::C128:
      return f64;
    default:
      return Tolerance{0, 0};
  }
}

ComparisonOptions ComparisonOptions::Exact() {
  ComparisonOptions o;
  o.mode = CompareMode::kExact;
  return o;
}

ComparisonOptions ComparisonOptions::Near(double abs, double rel) {
  ComparisonOptions o;
  o.f16 = o.bf16 = o.f32 = o.f64 = Tolerance{abs, rel};
  return o;
}

bool ComparisonResult::ok() const {
  if (!structure_error.empty()) return false;
  for (const OutputComparison& o : outputs) {
    if (!o.ok()) return false;
  }
  return true;
}

ComparisonResult CompareLiterals(const Literal& actual, const Literal& expected,
                                 const ComparisonOptions& options) {
  ComparisonResult result;
  result.options = options;
  const std::vector<const Literal*> a = actual.Leaves();
  const std::vector<const Literal*> e = expected.Leaves();
  if (a.size() != e.size()) {
    result.structure_error = "expected " + std::to_string(e.size()) +
                             " outputs (" + expected.shape().ToString(false) +
                             "), got " + std::to_string(a.size()) + " (" +
                             actual.shape().ToString(false) + ")";
  }
  for (size_t i = 0; i < std::min(a.size(), e.size()); ++i) {
    result.outputs.push_back(CompareLeaf(*a[i], *e[i], options));
    result.outputs.back().index = static_cast<int64_t>(i);
  }
  return result;
}

}  // namespace trench
