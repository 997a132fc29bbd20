// The HLO side of hlo-reduce: reduction passes, each a small client of the
// generic delta-debugging engine (ddmin.h), which knows nothing of HLO.
//
// A reduction pass sees a case (module text + input arrays, case_bundle.h)
// as a numbered set of independent simplification opportunities ("remove
// instruction %x", "shrink dim 1 of %p to 1", "replace constant %c by a
// zero", ...). The engine chooses subsets of them; the pass applies a
// subset and returns the simplified case. The engine verifies every
// candidate (parse + verify + inputs match, ValidateCandidate) before the
// interestingness test runs, so a pass may produce invalid candidates (they
// cost no target run) but never crashes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "triage/case/case_bundle.h"

namespace trench::hlo_reduce {

class ReductionPass {
 public:
  virtual ~ReductionPass() = default;
  // Short and stable ("remove-instructions"): --passes= names it.
  virtual std::string_view name() const = 0;
  // One line for --help.
  virtual std::string_view description() const = 0;
  // The opportunities in `c`, numbered 0..Count-1 in a deterministic order.
  // REQUIRES: c.module_text parses and verifies, c.inputs match it.
  virtual int64_t Count(const hlo_diff::Case& c) const = 0;
  // `c` with the opportunities in `chosen` (ascending, unique, each <
  // Count(c)) applied at once. Errors: FailedPrecondition when this
  // combination cannot be applied (the engine counts it as not interesting,
  // without a target run). The result keeps c.options and c.origin.
  virtual StatusOr<hlo_diff::Case> Apply(
      const hlo_diff::Case& c, std::span<const int64_t> chosen) const = 0;
};

// The registry (reduction_passes.def, the one list): every pass in the
// order a run applies them.
std::vector<std::unique_ptr<ReductionPass>> AllReductionPasses();
// The passes named in `names` ("a,b", in the given order; "" or "all" =
// all). InvalidArgument naming an unknown pass.
StatusOr<std::vector<std::unique_ptr<ReductionPass>>> ReductionPassesNamed(
    std::string_view names);

// The size the reducer reports and minimizes.
struct CaseSize {
  int64_t instructions = 0;  // In every computation of the module.
  int64_t elements = 0;      // Sum of the array elements of every
                             // instruction's shape (tuples: their leaves),
                             // times the devices of an SPMD case's mesh.
  int64_t text_bytes = 0;    // Of module_text.
};
// REQUIRES: c.module_text parses.
CaseSize MeasureCase(const hlo_diff::Case& c);

// OK when `c` is a valid candidate: the module parses and verifies and the
// inputs match its parameters (hlo_diff::CheckInputs; for an SPMD case,
// every device's, hlo_diff::DeviceArguments, and the collectives the
// verifier has no shape rule for keep their shapes: a collective-
// permute's result has its operand's dims, an all-gather's or reduce-
// scatter's differ only in its dimension).
Status ValidateCandidate(const hlo_diff::Case& c);

}  // namespace trench::hlo_reduce
