// Constant folding.
#pragma once

#include "compiler/passes/pass.h"

namespace trench {

// Replaces each instruction whose operands are all constants (and iota) by
// a constant holding its value, when FoldInstruction (literal_folder.h)
// computes it exactly. Never folds side-effecting instructions,
// instructions with control edges, or results larger than
// kMaxFoldedElements. Rewrite site: "fold" (per folded instruction).
class ConstantFolding : public HloPass {
 public:
  std::string_view name() const override { return "constant-folding"; }
  StatusOr<bool> Run(HloModule* module, PassContext* ctx) override;
};

}  // namespace trench
