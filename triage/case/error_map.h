// Per-element error maps of a verdict (the bug page's heatmaps): for each
// output that the numerics-contract comparison found mismatching, where in
// the output the target's values fall outside their allowance.
//
// hlo-diff computes them beside the comparison, inside the sandbox, from
// the values it already holds: the target's output, the oracle's nominal
// value and the contract's per-element allowance. Whoever shows them only
// reads the verdict; nobody evaluates a case again for a picture.
//
// An output of dims [d0, ..., dn] is seen as rows (d0 * ... * d(n-1)) by
// cols (dn; 1 for a scalar) and downsampled to at most kMaxErrorMapSide
// cells per side. Each cell holds the largest |actual - nominal| / allowed
// over the elements it covers (>1: outside the contract); an element whose
// allowance is unbounded counts as nothing, one NaN or infinity against
// another value (or any error where nothing is allowed) as kErrorMapHuge; a
// cell with no element counted is empty (null in JSON).
//
// JSON (in the verdict's "error_maps"): {"output": leaf index, "shape":
// [dims], "rows", "cols", "cells": [[ratio|null, ...], ...]}.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "compiler/ir/literal.h"

namespace trench::hlo_diff {

inline constexpr int64_t kMaxErrorMapSide = 64;
inline constexpr double kErrorMapHuge = 1e9;
// Outputs with more elements get no map (the comparison itself is bounded
// by the target's output size; the map adds one pass over it).
inline constexpr int64_t kMaxErrorMapElements = int64_t{64} << 20;
// At most this many maps per verdict (the first mismatching outputs).
inline constexpr int kMaxErrorMaps = 8;

struct ErrorMap {
  int64_t output = 0;  // The output leaf's index.
  std::vector<int64_t> shape;
  int64_t rows = 0, cols = 0;  // Of the grid, each <= kMaxErrorMapSide.
  // rows * cols cells, row-major; nullopt: no element counted.
  std::vector<std::optional<double>> cells;

  Json ToJson() const;
  // Reads ToJson()'s form. InvalidArgument("<member>: ...") for a missing
  // or ill-typed member, a side outside [0, kMaxErrorMapSide], a cell row
  // of the wrong length, or a cell that is not null or a number in
  // [0, kErrorMapHuge].
  static StatusOr<ErrorMap> FromJson(const Json& j);
};

// The grid of `actual`, `nominal` and `allowed` (each rows * cols
// elements, row-major; missing elements count as nothing).
ErrorMap ErrorGrid(const std::vector<double>& actual,
                   const std::vector<double>& nominal,
                   const std::vector<double>& allowed, int64_t rows,
                   int64_t cols);

// The map of output leaf `output`: nullopt unless the three literals are
// arrays of the same dims with at most kMaxErrorMapElements elements.
std::optional<ErrorMap> ErrorMapOf(int64_t output, const Literal& actual,
                                   const Literal& nominal,
                                   const Literal& allowed);

}  // namespace trench::hlo_diff
