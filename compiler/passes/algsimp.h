// The algebraic simplifier.
#pragma once

#include "compiler/passes/pass.h"

namespace trench {

// Rewrites instructions into cheaper equivalent forms. Every rewrite is
// exact for every input under IEEE semantics (x + 0 is folded only for a
// -0 addend, x * 0 only for integers, ...). Rewrite sites (stable names
// passed to ShouldRewrite), by file:
//   algsimp_arith.cc: add-zero, sub-zero, mul-one, div-one, mul-zero-int,
//     double-negate, double-not, select-const-pred, select-same-operands,
//     compare-same-int, idempotent-binary (and/or/max/min of x with x),
//     sub-self-int, convert-identity, convert-convert;
//   algsimp_shape.cc: reshape-identity, reshape-reshape, transpose-identity,
//     transpose-transpose, broadcast-identity, broadcast-broadcast,
//     broadcast-scalar-fold (reshape/transpose/broadcast/reverse/slice/copy
//     of a broadcast scalar), copy-identity, slice-identity, slice-slice,
//     slice-concat, concat-single, pad-zero;
//   algsimp_reduce_dot.cc: reduce-size1 (reducing only size-1 dimensions
//     becomes reshape + one application of the reducer), dot-to-multiply
//     (dot whose contracting dimensions all have size 1, or none, becomes
//     broadcasts and a multiply).
// The pass repeats its sweep until nothing changes, at most kMaxIterations
// times; hitting the cap is logged to the PassContext.
class AlgebraicSimplifier : public HloPass {
 public:
  static constexpr int kMaxIterations = 16;
  std::string_view name() const override { return "algsimp"; }
  StatusOr<bool> Run(HloModule* module, PassContext* ctx) override;
};

}  // namespace trench
