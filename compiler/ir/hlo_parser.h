// Parser for XLA's HLO module text format (what HloModule::ToString prints).
//
// Accepted input, briefly: an optional `HloModule name, k=v, ...` header
// (header attributes are kept verbatim in HloModule::header_attrs()), then
// computations `[ENTRY] %name [(p: shape, ...) -> shape] { instructions }`.
// Instructions are `[ROOT] %name = shape opcode(operands), attr=value, ...`
// with typed (`f32[2]{0} %a`) or untyped (`%a`) operands; `%` is optional
// on names; `//` and `/* */` comments may appear anywhere. A computation
// without ROOT uses its last instruction; a module without ENTRY uses its
// last computation. Operands and control predecessors must be defined
// before use in their computation; called computations may be defined
// anywhere in the module. Instruction names must be unique within their
// computation; a name already used in an earlier computation of the module
// gets a suffix `.N` (as XLA's parser does), so names are module-unique.
// Operands may also be written as unnamed instructions
// (`add(s32[] parameter(0), s32[] constant(1))`); those get generated names
// `<opcode>.nested[.N]`.
//
// Attributes that HloAttributes models are parsed into typed fields;
// control-predecessors become edges; the other attributes XLA's parser
// knows (metadata, backend_config, sharding, custom_call_target, ...) are
// kept verbatim in HloAttributes::raw. A name XLA's parser does not know
// is refused, as XLA refuses it: "LINE:COL: unknown attribute 'x'", with
// "; did you mean 'y'?" when one known name is close. Unlike XLA, a known
// name is accepted on any opcode.
//
// Every instruction records where it was written
// (HloInstruction::source_location, in the numbering of `first_line`), so
// that the verifier's messages can name it.
//
// Async forms `X-start`/`X-update`/`X-done`, where `X-start` is not itself
// an opcode, become kAsyncStart/kAsyncUpdate/kAsyncDone with the raw
// attribute (kAsyncWrappedOpcodeKey, "X"), which the printer turns back
// into the opcode text.
//
// Errors: InvalidArgument with "line:col: expected X, got Y" or another
// message naming the problem (unknown opcode or attribute, undefined or
// duplicate name, undefined computation, nesting deeper than
// kMaxNestingDepth, ...). The parser never crashes on any input.
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/shape.h"

namespace trench {

// Raw attribute key holding X of an async `X-start`/`X-update`/`X-done`.
inline constexpr char kAsyncWrappedOpcodeKey[] = "async_wrapped_opcode";

// Deepest nesting of tuple shapes, literals and computation text accepted.
inline constexpr int kMaxNestingDepth = 256;

// Parses a whole module. `first_line` is the line number of the text's
// first line in its file, so that messages point into that file. On
// success the module has an entry computation, every computation a root,
// and every fused computation its fusion_instruction() set.
StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    int first_line = 1);

// Parses one shape such as `f32[2,3]{1,0}`, `(s32[<=8], token[])`. The
// whole text must be the shape (surrounding whitespace allowed).
StatusOr<Shape> ParseShape(std::string_view text);

// Parses literal text (`1.5`, `{ {1, 2}, {3, 4} }`, `(1, {2})`, ...) as a
// value of `shape`, as it appears inside constant(...). The literal gets
// `shape` (with its layout). Fails when the text does not match the shape's
// element type, dimensions or tuple structure.
StatusOr<Literal> ParseLiteral(std::string_view text, const Shape& shape);

}  // namespace trench
