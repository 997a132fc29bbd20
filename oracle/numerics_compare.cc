// CompareWithBounds: the target's value against the per-element bounds of
// EvaluateWithBounds (rule in oracle/numerics_contract.h).
#include <cmath>

#include "compiler/ir/literal_json.h"
#include "oracle/numerics_contract.h"

namespace trench {
namespace {

std::vector<int64_t> MultiIndex(const Shape& shape, int64_t linear) {
  std::vector<int64_t> index(shape.rank());
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    index[d] = shape.dim(d) == 0 ? 0 : linear % shape.dim(d);
    linear = shape.dim(d) == 0 ? 0 : linear / shape.dim(d);
  }
  return index;
}

// Real and imaginary parts of element i as doubles (imag 0 for reals).
std::pair<double, double> Parts(const Literal& l, int64_t i) {
  if (l.element_type() == PrimitiveType::C64) {
    const c64 v = l.data<c64>()[i];
    return {v.real(), v.imag()};
  }
  if (l.element_type() == PrimitiveType::C128) {
    const c128 v = l.data<c128>()[i];
    return {v.real(), v.imag()};
  }
  return {l.GetAsDouble(i), 0};
}

enum class Verdict { kOk, kMismatch, kNonFinite };

Verdict ComparePart(double a, double e, double allowed, double* err) {
  *err = 0;
  const bool nan_a = std::isnan(a), nan_e = std::isnan(e);
  if (nan_a || nan_e)
    return nan_a && nan_e ? Verdict::kOk : Verdict::kNonFinite;
  if (std::isinf(a) || std::isinf(e)) {
    return a == e ? Verdict::kOk : Verdict::kNonFinite;
  }
  *err = std::fabs(a - e);
  return *err <= allowed ? Verdict::kOk : Verdict::kMismatch;
}

OutputComparison CompareLeaf(const Literal& a, const BoundedOutput& out) {
  const Literal& e = out.nominal;
  OutputComparison r;
  r.bounded = true;
  r.expected_shape = e.shape().ToString(false);
  r.actual_shape = a.shape().ToString(false);
  if (!a.shape().IsArray() || !e.shape().IsArray()) {
    if (a.shape().element_type() != e.shape().element_type()) {
      r.shape_error =
          "expected " + r.expected_shape + ", got " + r.actual_shape;
    }
    return r;
  }
  if (a.element_type() != e.element_type() ||
      a.shape().dims() != e.shape().dims() ||
      out.allowed.element_type() != PrimitiveType::F64 ||
      out.allowed.element_count() != e.element_count()) {
    r.shape_error = "expected " + r.expected_shape + ", got " + r.actual_shape;
    return r;
  }
  r.element_count = e.element_count();
  const auto allowed = out.allowed.data<double>();
  const PrimitiveType t = e.element_type();
  const bool is_int = !IsFloat(t) && !IsComplex(t);
  for (int64_t i = 0; i < r.element_count; ++i) {
    const double lim = allowed[i];
    if (std::isinf(lim) || std::isnan(lim)) {
      ++r.undetermined_count;
      continue;
    }
    r.max_allowed = std::max(r.max_allowed, lim);
    Verdict v = Verdict::kOk;
    double err = 0;
    if (is_int) {
      const int64_t ai = a.GetAsInt64(i), ei = e.GetAsInt64(i);
      err = std::fabs(static_cast<double>(ai) - static_cast<double>(ei));
      v = ai == ei ? Verdict::kOk : Verdict::kMismatch;
    } else {
      const auto [ar, ai] = Parts(a, i);
      const auto [er, ei] = Parts(e, i);
      double err_im = 0;
      const Verdict vr = ComparePart(ar, er, lim, &err);
      const Verdict vi = ComparePart(ai, ei, lim, &err_im);
      v = std::max(vr, vi);
      err = std::max(err, err_im);
    }
    if (v != Verdict::kNonFinite) {
      r.max_abs_error = std::max(r.max_abs_error, err);
      const double mag = std::fabs(Parts(e, i).first);
      const double rel = mag == 0 ? (err == 0 ? 0 : INFINITY) : err / mag;
      r.max_rel_error = std::max(r.max_rel_error, rel);
    }
    if (v == Verdict::kOk) continue;
    ElementMismatch m;
    m.linear_index = i;
    m.index = MultiIndex(e.shape(), i);
    m.expected = ElementToJson(e, i);
    m.actual = ElementToJson(a, i);
    m.abs_error = err;
    const double mag = std::fabs(Parts(e, i).first);
    m.rel_error = mag == 0 ? (err == 0 ? 0 : INFINITY) : err / mag;
    m.allowed = lim;
    if (v == Verdict::kMismatch) {
      if (r.mismatch_count++ == 0) r.first_mismatch = std::move(m);
    } else if (r.nonfinite_mismatch_count++ == 0) {
      r.first_nonfinite_mismatch = std::move(m);
    }
  }
  return r;
}

}  // namespace

ComparisonResult CompareWithBounds(const Literal& actual,
                                   const BoundedResult& expected) {
  ComparisonResult result;
  result.options.mode = CompareMode::kNear;
  const std::vector<const Literal*> a = actual.Leaves();
  const size_t n = expected.outputs.size();
  if (a.size() != n) {
    result.structure_error = "expected " + std::to_string(n) + " outputs (" +
                             expected.nominal.shape().ToString(false) +
                             "), got " + std::to_string(a.size()) + " (" +
                             actual.shape().ToString(false) + ")";
  }
  for (size_t i = 0; i < std::min(a.size(), n); ++i) {
    result.outputs.push_back(CompareLeaf(*a[i], expected.outputs[i]));
    result.outputs.back().index = static_cast<int64_t>(i);
    result.outputs.back().tolerance = Tolerance{0, 0};
  }
  return result;
}

}  // namespace trench
