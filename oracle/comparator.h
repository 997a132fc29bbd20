// Compares an actual literal (from the target, or the evaluator) with an
// expected one and says, per output, how far apart they are.
//
// Outputs are the leaves in flattened tuple order; leaf k of actual is
// compared with leaf k of expected. Two leaves are comparable when their
// element types and dimensions are equal (layouts and dynamic-dimension
// flags are ignored); otherwise the output carries a shape_error and no
// element statistics.
//
// Per element (floats; complex numbers per real and imaginary part, an
// element failing if either part fails):
//   * NaN/Inf pattern: in near mode, expected NaN needs actual NaN (any
//     payload, any sign) and vice versa; an infinity on either side needs
//     the same infinity on the other. Violations are counted apart from
//     value mismatches (nonfinite_mismatch_count) and never enter the
//     max-error statistics.
//   * Finite pairs: abs_err = |actual - expected| and rel_err =
//     abs_err / |expected| (computed in double; rel_err is 0 when both are
//     0 and +inf when only expected is 0).
//     ToleranceRule::kAbsOrRel (the default) is XLA's ErrorSpec rule: an
//     element is fine if abs_err <= abs OR rel_err <= rel. Said the other
//     way, it is a mismatch only when it exceeds BOTH bounds, which is
//     exactly how XLA's LiteralTestUtil::Near and run_hlo_module count
//     mismatches: the two descriptions are one rule. kAbsAndRel is the
//     stricter alternative: fine only within both bounds.
//     ULP error is the distance in representable values of the output's
//     own type (bf16/f16 ulps for bf16/f16, +0 and -0 at distance 0).
//   * Exact mode (CompareMode::kExact, for cases marked "compare: exact"):
//     an element matches iff the bit patterns are equal or both are NaN
//     (any payloads). So -0 != +0 there. Error statistics are still given.
// Integer and pred outputs always compare exactly (abs/rel/ulp statistics
// are the integer differences).
//
// Default tolerances (near mode), chosen as a few units of each type's
// rounding error, since the oracle rounds each low-precision result once
// from f32 and a correct target differs mainly in rounding/association:
//   f64:  abs 1e-12, rel 1e-12  (eps 2.2e-16; leaves room for long sums)
//   f32:  abs 1e-5,  rel 1e-5   (eps 1.2e-7: ~80 ulps, room for a
//                                reassociated reduction of ~10^3 terms)
//   f16:  abs 1e-3,  rel 1e-3   (eps 9.8e-4: about one ulp)
//   bf16: abs 1e-2,  rel 1e-2   (eps 7.8e-3: about one ulp)
// The abs bound covers results near zero from cancellation of inputs of
// magnitude ~1 (random inputs are in [-4, 4)). c64/c128 use f32/f64's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/literal.h"

namespace trench {

struct Tolerance {
  double abs = 0;
  double rel = 0;
};

enum class CompareMode { kNear, kExact };
enum class ToleranceRule { kAbsOrRel, kAbsAndRel };

struct ComparisonOptions {
  CompareMode mode = CompareMode::kNear;
  ToleranceRule rule = ToleranceRule::kAbsOrRel;
  Tolerance f16{1e-3, 1e-3};
  Tolerance bf16{1e-2, 1e-2};
  Tolerance f32{1e-5, 1e-5};
  Tolerance f64{1e-12, 1e-12};

  // The tolerance for elements of type t: complex types use their
  // component type's; integers and pred {0, 0}.
  Tolerance ForType(PrimitiveType t) const;
  // Exact mode.
  static ComparisonOptions Exact();
  // Near mode with one tolerance for every float type (a case's
  // ErrorSpec).
  static ComparisonOptions Near(double abs, double rel);
};

// One element, for reporting.
struct ElementMismatch {
  int64_t linear_index = 0;    // Logical row-major.
  std::vector<int64_t> index;  // Multi-index.
  Json expected, actual;       // As in literal_json (numbers, "nan", ...).
  double abs_error = 0, rel_error = 0;
  // Set by CompareWithBounds (oracle/numerics_contract.h): the allowed
  // absolute deviation at this element.
  std::optional<double> allowed;
};

struct OutputComparison {
  int64_t index = 0;                         // Leaf number in flattened order.
  std::string expected_shape, actual_shape;  // "f32[2,3]"
  std::string shape_error;                   // Non-empty when not comparable.
  Tolerance tolerance;                       // The one applied (near mode).
  int64_t element_count = 0;
  double max_abs_error = 0, max_rel_error = 0;
  uint64_t max_ulp_error = 0;
  int64_t mismatch_count = 0;
  std::optional<ElementMismatch> first_mismatch;
  int64_t nonfinite_mismatch_count = 0;
  std::optional<ElementMismatch> first_nonfinite_mismatch;
  // Per-element bounds (CompareWithBounds): `tolerance` is unused then;
  // max_allowed is the largest finite allowance and undetermined_count the
  // elements whose allowance is +inf (any value accepted).
  bool bounded = false;
  double max_allowed = 0;
  int64_t undetermined_count = 0;

  bool ok() const {
    return shape_error.empty() && mismatch_count == 0 &&
           nonfinite_mismatch_count == 0;
  }
};

struct ComparisonResult {
  ComparisonOptions options;
  // Non-empty when the leaf counts differ (the common prefix is still
  // compared).
  std::string structure_error;
  std::vector<OutputComparison> outputs;

  bool ok() const;
  // {"ok": .., "mode": "near"|"exact", "rule": "abs_or_rel"|"abs_and_rel",
  //  "structure_error"?: .., "outputs": [{"index", "expected_shape",
  //  "actual_shape", "shape_error"?, "tolerance", "elements",
  //  "max_abs_error", "max_rel_error", "max_ulp_error", "mismatches",
  //  "first_mismatch"?, "nonfinite_mismatches", "first_nonfinite_mismatch"?,
  //  and for bounded comparisons "bounded": true, "max_allowed",
  //  "undetermined" }]}; a mismatch of a bounded comparison has "allowed".
  //  Non-finite statistics are the strings "inf"/"nan", so the
  // result is always printable JSON.
  Json ToJson() const;
  // A readable summary, one line per output plus one per first mismatch.
  std::string ToText() const;
};

// Compares as described above. Never fails: incompatible shapes are
// reported in the result.
ComparisonResult CompareLiterals(const Literal& actual, const Literal& expected,
                                 const ComparisonOptions& options = {});

}  // namespace trench
