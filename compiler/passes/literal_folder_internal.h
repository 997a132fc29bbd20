// Internal to the constant folder: the elementwise and convert folders.
#pragma once

#include <optional>
#include <vector>

#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/literal.h"

namespace trench::folder {

// Elementwise arithmetic, compare and convert, as FoldInstruction
// describes. REQUIRES: operands match instr's operand shapes; the result
// is an array no larger than kMaxFoldedElements.
std::optional<Literal> FoldElementwise(
    const HloInstruction& instr, const std::vector<const Literal*>& operands);

}  // namespace trench::folder
