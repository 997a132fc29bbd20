// Structural equality of HLO modules, as the text round trip defines it.
#pragma once

#include <string>

#include "compiler/ir/hlo_module.h"

namespace trench {

// True when `a` and `b` have the same name, header attributes (in order),
// entry computation name and computations matched by name; and every
// computation has the same root name and instructions matched by name with
// equal opcode, shape (layouts included), attributes (raw ones included, in
// order), literal (bitwise), operands (by name, in order), called
// computations (by name, in order) and control predecessors (by name, in
// order). Instruction order and unique ids are ignored.
//
// When false and `diff` is not null, *diff names the first difference
// found, e.g. "computation 'main': instruction 'add.1': shape f32[2]{0} vs
// f32[2]".
bool ModulesEqual(const HloModule& a, const HloModule& b,
                  std::string* diff = nullptr);

}  // namespace trench
