// Dot canonicalization.
#pragma once

#include "compiler/passes/pass.h"

namespace trench {

// Rewrites every dot into the canonical form codegen expects:
//   lhs [B, M, K] x rhs [B, K, N] -> [B, M, N]   (B only with batch dims)
// with one (merged) batch dimension first, one merged non-contracting
// dimension per side and one merged contracting dimension (size 1 when
// the dot contracts nothing), followed by a reshape to the original
// result shape. Operands are transposed into batch/free/contracting order
// (lhs) and batch/contracting/free order (rhs) and reshaped; the relative
// order of the contracting dimensions is kept, so the products are summed
// in the same order. Dots already canonical, with dynamic shapes or
// without dimension numbers are left alone. Rewrite site:
// "canonicalize-dot".
class DotDecomposer : public HloPass {
 public:
  std::string_view name() const override { return "dot-decomposer"; }
  StatusOr<bool> Run(HloModule* module, PassContext* ctx) override;
};

}  // namespace trench
