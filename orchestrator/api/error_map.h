// Per-element error maps of a reproduction run (the bug page's heatmaps):
// for each output the run's verdict reports as mismatching, the target's
// output kept by the reproduce step (<runs_dir>/<run>/out/<i>.npy) against
// the oracle's nominal value and numerics-contract bound, recomputed here
// from the case directory (oracle/numerics_contract.h).
//
// An output of dims [d0, ..., dn] is seen as rows (d0 * ... * d(n-1)) by
// cols (dn; 1 for a scalar) and downsampled to at most 64 x 64 cells. Each
// cell holds the largest |actual - nominal| / allowed over the elements it
// covers (>1: outside the contract); an element whose allowance is
// unbounded counts as nothing, one NaN against a number (or a zero
// allowance exceeded) as 1e9; a cell with no element counted is null.
// JSON: {"run", "output", "shape": [dims], "rows", "cols", "cells":
// [[ratio|null...]...]}.
//
// The oracle runs in the caller's process, so only cases whose evaluation
// is bounded and small get maps: no while loop, and at most 16M values over
// all instructions (a stranger's report can hold any module).
//
// Never fails: a run without kept outputs, a case that does not read, a
// case too big to evaluate here, or an oracle error give no maps. Results are
// cached per run (bounded).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/json_nlohmann.h"

namespace trench::orchestrator {

std::vector<JsonDoc> ErrorMapsOfRun(int64_t run, const JsonDoc& verdict,
                                    const std::string& case_dir,
                                    const std::string& runs_dir);

// The cell grid of one output (exposed for tests): `actual`, `nominal` and
// `allowed` hold `rows * cols` elements, row-major.
JsonDoc ErrorGrid(const std::vector<double>& actual,
                  const std::vector<double>& nominal,
                  const std::vector<double>& allowed, int64_t rows,
                  int64_t cols);

}  // namespace trench::orchestrator
