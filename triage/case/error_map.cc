// Error maps of a verdict (error_map.h).
#include "triage/case/error_map.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace trench::hlo_diff {
namespace {

double Ratio(double actual, double nominal, double allowed) {
  if (std::isnan(actual) && std::isnan(nominal)) return 0;
  if (std::isnan(actual) || std::isnan(nominal)) return kErrorMapHuge;
  if (std::isinf(actual) || std::isinf(nominal)) {
    return actual == nominal ? 0 : kErrorMapHuge;
  }
  const double err = std::fabs(actual - nominal);
  if (err == 0) return 0;
  if (allowed <= 0) return kErrorMapHuge;
  return std::min(kErrorMapHuge, err / allowed);
}

std::vector<double> Values(const Literal& l) {
  std::vector<double> v(static_cast<size_t>(l.element_count()));
  for (int64_t i = 0; i < l.element_count(); ++i) v[i] = l.GetAsDouble(i);
  return v;
}

Status Bad(const std::string& member, const std::string& what) {
  return InvalidArgument("error_map." + member + ": " + what);
}

StatusOr<int64_t> Side(const Json& j, const char* key) {
  const Json* v = j.Find(key);
  if (v == nullptr) return Bad(key, "missing");
  StatusOr<int64_t> n = v->GetInt64();
  if (!n.ok() || *n < 0 || *n > kMaxErrorMapSide) {
    return Bad(key, "expected an integer in [0, " +
                        std::to_string(kMaxErrorMapSide) + "]");
  }
  return n;
}

}  // namespace

ErrorMap ErrorGrid(const std::vector<double>& actual,
                   const std::vector<double>& nominal,
                   const std::vector<double>& allowed, int64_t rows,
                   int64_t cols) {
  ErrorMap m;
  m.rows = std::min(rows, kMaxErrorMapSide);
  m.cols = std::min(cols, kMaxErrorMapSide);
  m.cells.assign(static_cast<size_t>(m.rows * m.cols), std::nullopt);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t gr = r * m.rows / rows;
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = static_cast<size_t>(r * cols + c);
      if (i >= actual.size() || i >= nominal.size() || i >= allowed.size() ||
          std::isinf(allowed[i])) {
        continue;
      }
      std::optional<double>& cell = m.cells[gr * m.cols + c * m.cols / cols];
      cell =
          std::max(cell.value_or(0), Ratio(actual[i], nominal[i], allowed[i]));
    }
  }
  return m;
}

std::optional<ErrorMap> ErrorMapOf(int64_t output, const Literal& actual,
                                   const Literal& nominal,
                                   const Literal& allowed) {
  const Shape& shape = nominal.shape();
  if (!shape.IsArray() || !actual.shape().IsArray() ||
      !allowed.shape().IsArray() || actual.shape().dims() != shape.dims() ||
      allowed.shape().dims() != shape.dims() ||
      nominal.element_count() > kMaxErrorMapElements) {
    return std::nullopt;
  }
  const std::vector<int64_t>& dims = shape.dims();
  const int64_t cols = dims.empty() ? 1 : dims.back();
  const int64_t rows = cols == 0 ? 0 : nominal.element_count() / cols;
  ErrorMap m =
      ErrorGrid(Values(actual), Values(nominal), Values(allowed), rows, cols);
  m.output = output;
  m.shape = dims;
  return m;
}

Json ErrorMap::ToJson() const {
  Json j = Json::MakeObject();
  j["output"] = output;
  Json dims = Json::MakeArray();
  for (int64_t d : shape) dims.push_back(d);
  j["shape"] = dims;
  j["rows"] = rows;
  j["cols"] = cols;
  Json grid = Json::MakeArray();
  for (int64_t r = 0; r < rows; ++r) {
    Json line = Json::MakeArray();
    for (int64_t c = 0; c < cols; ++c) {
      const std::optional<double>& v = cells[r * cols + c];
      line.push_back(v ? Json(*v) : Json());
    }
    grid.push_back(line);
  }
  j["cells"] = grid;
  return j;
}

StatusOr<ErrorMap> ErrorMap::FromJson(const Json& j) {
  if (!j.is_object()) return InvalidArgument("error_map: expected an object");
  ErrorMap m;
  const Json* output = j.Find("output");
  if (output == nullptr) return Bad("output", "missing");
  StatusOr<int64_t> index = output->GetInt64();
  if (!index.ok() || *index < 0) {
    return Bad("output", "expected a non-negative integer");
  }
  m.output = *index;
  const Json* shape = j.Find("shape");
  if (shape == nullptr || !shape->is_array()) {
    return Bad("shape", "expected an array");
  }
  for (const Json& d : shape->array()) {
    StatusOr<int64_t> n = d.GetInt64();
    if (!n.ok() || *n < 0)
      return Bad("shape", "expected non-negative integers");
    m.shape.push_back(*n);
  }
  ASSIGN_OR_RETURN(m.rows, Side(j, "rows"));
  ASSIGN_OR_RETURN(m.cols, Side(j, "cols"));
  const Json* cells = j.Find("cells");
  if (cells == nullptr || !cells->is_array() ||
      static_cast<int64_t>(cells->size()) != m.rows) {
    return Bad("cells", "expected " + std::to_string(m.rows) + " rows");
  }
  for (const Json& line : cells->array()) {
    if (!line.is_array() || static_cast<int64_t>(line.size()) != m.cols) {
      return Bad("cells",
                 "expected rows of " + std::to_string(m.cols) + " cells");
    }
    for (const Json& v : line.array()) {
      if (v.is_null()) {
        m.cells.push_back(std::nullopt);
      } else if (v.is_number() && v.number_value() >= 0 &&
                 v.number_value() <= kErrorMapHuge) {
        m.cells.push_back(v.number_value());
      } else {
        return Bad("cells", "expected null or a number in [0, 1e9]");
      }
    }
  }
  return m;
}

}  // namespace trench::hlo_diff
