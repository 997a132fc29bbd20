// HloOpcode, generated from opcode.def (the single registry).
#pragma once

#include <optional>
#include <string_view>

namespace trench {

inline constexpr int kVariadic = -1;

enum class HloOpcode : uint16_t {
#define X(e, text, arity, kind) e,
#include "compiler/ir/opcode.def"
#undef X
};

inline constexpr int kNumOpcodes = 0
#define X(e, text, arity, kind) +1
#include "compiler/ir/opcode.def"
#undef X
    ;

// "add", "dynamic-slice", ...
std::string_view OpcodeName(HloOpcode op);
// Operand count, or kVariadic.
int OpcodeArity(HloOpcode op);
// Parses an opcode's text name; nullopt when unknown. Accepts XLA's alias
// "clz" for count-leading-zeros.
std::optional<HloOpcode> OpcodeFromName(std::string_view name);

// Elementwise ops: the output element i depends only on element i of each
// operand, and all array operands have the output's dimensions.
bool IsElementwise(HloOpcode op);
bool IsElementwiseUnary(HloOpcode op);
bool IsElementwiseBinary(HloOpcode op);

}  // namespace trench
