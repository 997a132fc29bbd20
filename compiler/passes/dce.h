// Dead code elimination.
#pragma once

#include "compiler/passes/pass.h"

namespace trench {

// Removes instructions that nothing uses (not roots, parameters, side-
// effecting instructions or instructions ordered by control edges), and
// computations not reachable from the entry computation. Rewrite sites:
// "remove-dead-instruction" (per instruction) and
// "remove-unreachable-computation" (per computation).
class DeadCodeElimination : public HloPass {
 public:
  std::string_view name() const override { return "dce"; }
  StatusOr<bool> Run(HloModule* module, PassContext* ctx) override;
};

}  // namespace trench
