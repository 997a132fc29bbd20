// Common subexpression elimination.
#pragma once

#include "compiler/passes/pass.h"

namespace trench {

// Within each computation, replaces an instruction by an earlier identical
// one: same opcode, operands (the same instructions, in order), shape
// including layout, typed attributes (comparison direction and type,
// dimensions, ...), literal, called computations (the same ones) and raw
// attributes other than metadata. Never merges parameters, side-effecting
// instructions or instructions with control edges. Rewrite site:
// "merge-identical" (per merged instruction).
class CommonSubexpressionElimination : public HloPass {
 public:
  std::string_view name() const override { return "cse"; }
  StatusOr<bool> Run(HloModule* module, PassContext* ctx) override;
};

}  // namespace trench
