// ComparisonResult as JSON and as text.
#include <cmath>
#include <cstdio>

#include "oracle/comparator.h"

namespace trench {
namespace {

// A statistic as JSON: non-finite values become "inf"/"nan" strings.
Json Stat(double v) {
  if (std::isnan(v)) return Json("nan");
  if (std::isinf(v)) return Json(v < 0 ? "-inf" : "inf");
  return Json(v);
}

std::string StatText(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

std::string IndexText(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(index[i]);
  }
  return s + "]";
}

Json MismatchJson(const ElementMismatch& m) {
  Json j = Json::MakeObject();
  j["linear_index"] = Json(m.linear_index);
  Json::Array index;
  for (int64_t i : m.index) index.emplace_back(i);
  j["index"] = Json(std::move(index));
  j["expected"] = m.expected;
  j["actual"] = m.actual;
  j["abs_error"] = Stat(m.abs_error);
  j["rel_error"] = Stat(m.rel_error);
  if (m.allowed) j["allowed"] = Stat(*m.allowed);
  return j;
}

std::string MismatchText(const char* what, const ElementMismatch& m) {
  return std::string("    first ") + what + " at " + IndexText(m.index) +
         " (linear " + std::to_string(m.linear_index) + "): expected " +
         m.expected.Dump() + ", actual " + m.actual.Dump() +
         (m.allowed ? ", allowed " + StatText(*m.allowed) : "") + "\n";
}

Json OutputJson(const OutputComparison& o) {
  Json j = Json::MakeObject();
  j["index"] = Json(o.index);
  j["ok"] = Json(o.ok());
  j["expected_shape"] = Json(o.expected_shape);
  j["actual_shape"] = Json(o.actual_shape);
  if (!o.shape_error.empty()) {
    j["shape_error"] = Json(o.shape_error);
    return j;
  }
  Json tol = Json::MakeObject();
  tol["abs"] = Stat(o.tolerance.abs);
  tol["rel"] = Stat(o.tolerance.rel);
  j["tolerance"] = std::move(tol);
  j["elements"] = Json(o.element_count);
  j["max_abs_error"] = Stat(o.max_abs_error);
  j["max_rel_error"] = Stat(o.max_rel_error);
  j["max_ulp_error"] = Json(o.max_ulp_error);
  j["mismatches"] = Json(o.mismatch_count);
  if (o.first_mismatch) j["first_mismatch"] = MismatchJson(*o.first_mismatch);
  j["nonfinite_mismatches"] = Json(o.nonfinite_mismatch_count);
  if (o.first_nonfinite_mismatch) {
    j["first_nonfinite_mismatch"] = MismatchJson(*o.first_nonfinite_mismatch);
  }
  if (o.bounded) {
    j["bounded"] = Json(true);
    j["max_allowed"] = Stat(o.max_allowed);
    j["undetermined"] = Json(o.undetermined_count);
  }
  return j;
}

std::string OutputText(const OutputComparison& o) {
  std::string s =
      "output " + std::to_string(o.index) + " " + o.expected_shape + ": ";
  if (!o.shape_error.empty())
    return s + "SHAPE MISMATCH: " + o.shape_error + "\n";
  s += o.ok() ? "OK" : "MISMATCH";
  if (!o.ok()) {
    s += " (" + std::to_string(o.mismatch_count) + " value, " +
         std::to_string(o.nonfinite_mismatch_count) + " NaN/Inf of " +
         std::to_string(o.element_count) + " elements)";
  }
  s += "; max abs " + StatText(o.max_abs_error) + ", max rel " +
       StatText(o.max_rel_error) + ", max ulp " +
       std::to_string(o.max_ulp_error) + "\n";
  if (o.first_mismatch) s += MismatchText("mismatch", *o.first_mismatch);
  if (o.first_nonfinite_mismatch) {
    s += MismatchText("NaN/Inf mismatch", *o.first_nonfinite_mismatch);
  }
  return s;
}

}  // namespace

Json ComparisonResult::ToJson() const {
  Json j = Json::MakeObject();
  j["ok"] = Json(ok());
  j["mode"] = Json(options.mode == CompareMode::kExact ? "exact" : "near");
  j["rule"] = Json(options.rule == ToleranceRule::kAbsOrRel ? "abs_or_rel"
                                                            : "abs_and_rel");
  if (!structure_error.empty()) j["structure_error"] = Json(structure_error);
  Json::Array outs;
  for (const OutputComparison& o : outputs) outs.push_back(OutputJson(o));
  j["outputs"] = Json(std::move(outs));
  return j;
}

std::string ComparisonResult::ToText() const {
  std::string s;
  if (!structure_error.empty())
    s += "STRUCTURE MISMATCH: " + structure_error + "\n";
  for (const OutputComparison& o : outputs) s += OutputText(o);
  return s;
}

}  // namespace trench
