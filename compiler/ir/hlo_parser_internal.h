// Internals shared by the HLO text parser's files (hlo_parser*.cc). Not a
// public API: use hlo_parser.h.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/hlo_lexer.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/shape.h"

namespace trench::hlo_parser_internal {

// True when a shape starts at the lexer's next position: `(` or an element
// type name directly followed by `[`.
bool PeekShape(HloLexer& lex);
// Parses a shape; `depth` counts enclosing nesting levels.
StatusOr<Shape> ParseShape(HloLexer& lex, int depth);
// Parses a literal of `shape` (see ParseLiteral in hlo_parser.h).
StatusOr<Literal> ParseLiteral(HloLexer& lex, const Shape& shape, int depth);

// A reference by name to a computation, resolved once the whole module is
// read (computations may be defined after their callers).
struct ComputationRef {
  std::string name;
  size_t pos = 0;
};

// What the attribute parser needs from, and reports to, the instruction
// parser.
struct AttributeContext {
  // Instructions defined so far in the current computation, for
  // control-predecessors.
  const std::unordered_map<std::string, HloInstruction*>* defined = nullptr;
  // Called computations by role: slot form (condition/body,
  // true/false_computation, select/scatter) or list form (to_apply, calls,
  // branch_computations, called_computations).
  std::optional<ComputationRef> slot0, slot1;
  std::vector<ComputationRef> list;
};

// Applies `key=value` to `instr`; the lexer covers exactly the value text.
// Typed attributes fill HloAttributes fields, control-predecessors add
// edges, computation references go to `ctx`, other keys are kept raw.
// Fails with a line:col message when a typed value is malformed.
Status ParseAttribute(std::string_view key, HloLexer value,
                      HloInstruction* instr, AttributeContext* ctx);

// OK when `key` names an instruction attribute that XLA's HLO parser
// accepts (on some opcode; see hlo_parser_attributes.cc), else
// InvalidArgument "LINE:COL: unknown attribute 'key'" at `key_pos`, with
// "; did you mean 'x'?" when one known name is within two edits of it
// (ignoring case).
Status CheckAttributeName(const HloLexer& lex, std::string_view key,
                          size_t key_pos);

// Increments a nesting depth and fails past kMaxNestingDepth.
Status CheckDepth(const HloLexer& lex, int depth);

}  // namespace trench::hlo_parser_internal
