// Error maps of reproduction runs (error_map.h).
#include "orchestrator/api/error_map.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/npy.h"
#include "oracle/numerics_contract.h"
#include "triage/case/case_bundle.h"

namespace trench::orchestrator {
namespace {

constexpr int64_t kMaxCells = 64;  // Per side.
constexpr double kHuge = 1e9;      // A NaN against a number, 0 allowed.
constexpr size_t kCacheRuns = 256;
constexpr int64_t kMaxElements = 64 << 20;  // Larger outputs: no map.
// All of a module's values together, at most: the oracle runs in the
// daemon's process here, on a case a stranger may have written.
constexpr int64_t kMaxModuleElements = 16 << 20;

int64_t Elements(const Shape& shape) {
  if (!shape.IsTuple()) return shape.element_count();
  int64_t n = 0;
  for (const Shape& s : shape.tuple_shapes()) n += Elements(s);
  return n;
}

// True when evaluating `module` is bounded and small: no loop (whose trip
// count the case's author chooses), and every instruction's values within
// kMaxModuleElements in all.
bool SmallEnoughToEvaluate(const HloModule& module) {
  int64_t total = 0;
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (i->opcode() == HloOpcode::kWhile) return false;
      total += Elements(i->shape());
      if (total > kMaxModuleElements) return false;
    }
  }
  return true;
}

double Ratio(double actual, double nominal, double allowed) {
  if (std::isnan(actual) && std::isnan(nominal)) return 0;
  if (std::isnan(actual) || std::isnan(nominal)) return kHuge;
  if (std::isinf(actual) || std::isinf(nominal)) {
    return actual == nominal ? 0 : kHuge;
  }
  const double err = std::fabs(actual - nominal);
  if (err == 0) return 0;
  if (allowed <= 0) return kHuge;
  return std::min(kHuge, err / allowed);
}

bool IsMismatching(const JsonDoc& output) {
  for (const char* key : {"mismatches", "nonfinite_mismatches"}) {
    auto it = output.find(key);
    if (it != output.end() && it->is_number_integer() &&
        it->get<int64_t>() > 0) {
      return true;
    }
  }
  return false;
}

std::vector<double> Values(const Literal& l) {
  std::vector<double> v(static_cast<size_t>(l.element_count()));
  for (int64_t i = 0; i < l.element_count(); ++i) v[i] = l.GetAsDouble(i);
  return v;
}

std::vector<JsonDoc> Compute(int64_t run, const JsonDoc& verdict,
                             const std::string& case_dir,
                             const std::string& runs_dir) {
  std::vector<int64_t> bad;
  if (auto outputs = verdict.find("outputs");
      outputs != verdict.end() && outputs->is_array()) {
    for (size_t i = 0; i < outputs->size(); ++i) {
      if ((*outputs)[i].is_object() && IsMismatching((*outputs)[i])) {
        bad.push_back(static_cast<int64_t>(i));
      }
    }
  }
  const std::filesystem::path out =
      std::filesystem::path(runs_dir) / std::to_string(run) / "out";
  std::error_code ec;
  if (bad.empty() || !std::filesystem::is_directory(out, ec)) return {};
  std::unique_ptr<HloModule> module;
  StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase(case_dir, &module);
  if (!c.ok() || !SmallEnoughToEvaluate(*module)) return {};
  const std::vector<Literal> args =
      hlo_diff::ParameterArguments(*module, c->inputs);
  StatusOr<BoundedResult> bounds = EvaluateWithBounds(*module, args);
  if (!bounds.ok()) return {};
  std::vector<JsonDoc> maps;
  for (int64_t index : bad) {
    if (index >= static_cast<int64_t>(bounds->outputs.size())) continue;
    const BoundedOutput& b = bounds->outputs[index];
    StatusOr<Literal> actual =
        ReadNpyFile((out / (std::to_string(index) + ".npy")).string());
    if (!actual.ok() || !actual->shape().IsArray() ||
        actual->shape().dims() != b.nominal.shape().dims() ||
        b.nominal.element_count() > kMaxElements) {
      continue;
    }
    const std::vector<int64_t>& dims = b.nominal.shape().dims();
    const int64_t cols = dims.empty() ? 1 : dims.back();
    const int64_t rows = cols == 0 ? 0 : b.nominal.element_count() / cols;
    JsonDoc m = JsonDoc::object();
    m["run"] = run;
    m["output"] = index;
    m["shape"] = dims;
    JsonDoc grid = ErrorGrid(Values(*actual), Values(b.nominal),
                             Values(b.allowed), rows, cols);
    m["rows"] = grid["rows"];
    m["cols"] = grid["cols"];
    m["cells"] = std::move(grid["cells"]);
    maps.push_back(std::move(m));
  }
  return maps;
}

}  // namespace

JsonDoc ErrorGrid(const std::vector<double>& actual,
                  const std::vector<double>& nominal,
                  const std::vector<double>& allowed, int64_t rows,
                  int64_t cols) {
  const int64_t grid_rows = std::min(rows, kMaxCells);
  const int64_t grid_cols = std::min(cols, kMaxCells);
  std::vector<std::vector<double>> cell(
      grid_rows, std::vector<double>(grid_cols, -1));  // -1: none counted.
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t gr = r * grid_rows / rows;
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = static_cast<size_t>(r * cols + c);
      if (i >= actual.size() || i >= nominal.size() || i >= allowed.size() ||
          std::isinf(allowed[i])) {
        continue;
      }
      double& v = cell[gr][c * grid_cols / cols];
      v = std::max(v, Ratio(actual[i], nominal[i], allowed[i]));
    }
  }
  JsonDoc cells = JsonDoc::array();
  for (const auto& row : cell) {
    JsonDoc line = JsonDoc::array();
    for (double v : row) line.push_back(v < 0 ? JsonDoc() : JsonDoc(v));
    cells.push_back(std::move(line));
  }
  JsonDoc g = JsonDoc::object();
  g["rows"] = grid_rows;
  g["cols"] = grid_cols;
  g["cells"] = std::move(cells);
  return g;
}

std::vector<JsonDoc> ErrorMapsOfRun(int64_t run, const JsonDoc& verdict,
                                    const std::string& case_dir,
                                    const std::string& runs_dir) {
  static std::mutex mu;
  static std::map<std::string, std::vector<JsonDoc>> cache;
  const std::string key = runs_dir + '\0' + std::to_string(run);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto status = verdict.find("status");
  if (status == verdict.end() || !status->is_string() ||
      (*status != "mismatch" && *status != "nan_mismatch")) {
    return {};
  }
  std::vector<JsonDoc> maps = Compute(run, verdict, case_dir, runs_dir);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= kCacheRuns) cache.clear();
  cache[key] = maps;
  return maps;
}

}  // namespace trench::orchestrator
