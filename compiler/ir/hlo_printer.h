// Printer for XLA's HLO module text format. ParseHloModule(PrintHloModule(m))
// yields a module equal to m (ModulesEqual in hlo_equal.h), for any module
// the parser produced.
//
// Layout of the output, as XLA prints it:
//   HloModule name, key=value, ...
//
//   %callee (p0: f32[2]) -> f32[2] {
//     %p0 = f32[2]{0} parameter(0)
//     ROOT %neg = f32[2]{0} negate(f32[2]{0} %p0), metadata={...}
//   }
//
//   ENTRY %main ...
// Computations come callees first (entry last); instructions in post order
// (operands and control predecessors before users). Operands are typed.
// Floats print in the shortest form that reads back to the same bits:
// inf, -inf, nan, -nan, and nan(0x...) for a NaN with a non-default payload.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "compiler/ir/hlo_module.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/shape.h"

namespace trench {

// What the text spells out beyond what parsing needs (as XLA's
// HloPrintOptions). The default is the full form above; Short() is XLA's
// "short parsable" form, which parses back to the same module unless a
// name without its "%" reads as something else (a number, a keyword such
// as inf or ENTRY):
//   c0 {
//     a = f32[2]{0} parameter(0)
//     ROOT n = f32[2]{0} negate(a), metadata={...}
//   }
struct HloPrintOptions {
  bool operand_shapes = true;  // "f32[2]{0} %a" rather than "%a".
  bool percent = true;         // "%a" rather than "a" (also in attributes).
  bool program_shape = true;   // "%c0 (p: f32[2]) -> f32[2] {".
  static HloPrintOptions Short() { return {false, false, false}; }
};

// The whole module as text.
std::string PrintHloModule(const HloModule& module,
                           const HloPrintOptions& options = {});

// Receives printed text piece by piece, in order.
using HloTextSink = std::function<void(std::string_view)>;
// Hands the text of PrintHloModule(module, options) to `sink` in
// consecutive pieces (about 16 KiB each), without building it whole: for
// hashing or writing a large module. A piece is valid only during its call.
void PrintHloModuleTo(const HloModule& module, const HloTextSink& sink,
                      const HloPrintOptions& options = {});

// One computation as text: header line, instructions, closing brace.
// `is_entry` adds the ENTRY marker.
std::string PrintHloComputation(const HloComputation& computation,
                                bool is_entry = false,
                                const HloPrintOptions& options = {});

// One instruction line without indentation or newline:
// `[ROOT ]%name = shape opcode(operands), attrs`.
std::string PrintHloInstruction(const HloInstruction& instr,
                                const HloPrintOptions& options = {});

// A literal as it appears inside constant(...): `1.5`, `{ {1, 2}, {3, 4} }`,
// `(1, {2, 3})` for tuples, `(1, 0)` for complex elements.
std::string PrintLiteral(const Literal& literal);

// A shape in HLO syntax with its layout; unbounded dynamic dims print `?`.
std::string PrintShape(const Shape& shape);

}  // namespace trench
