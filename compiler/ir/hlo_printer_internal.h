// Internals shared by the HLO text printer's files. Not a public API: use
// hlo_printer.h.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/hlo_instruction.h"

namespace trench::hlo_printer_internal {

// The instruction's attributes as (key, value text) in print order: typed
// attributes, called computations, control-predecessors, then raw ones.
// Names of computations and instructions get a "%" when `percent`.
std::vector<std::pair<std::string, std::string>> InstructionAttributes(
    const HloInstruction& instr, bool percent = true);

// Appends PrintShape(s) to *out.
void AppendShape(const Shape& s, std::string* out);

}  // namespace trench::hlo_printer_internal
