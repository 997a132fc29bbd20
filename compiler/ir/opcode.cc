#include "compiler/ir/opcode.h"

#include <cstdint>

namespace trench {
namespace {

enum OpcodeKind {
  kOther,
  kElementwiseUnary,
  kElementwiseBinary,
  kElementwiseOther,
};

struct OpcodeInfo {
  std::string_view name;
  int arity;
  OpcodeKind kind;
};

constexpr OpcodeInfo kOpcodes[] = {
#define X(e, text, arity, kind) {text, arity, kind},
#include "compiler/ir/opcode.def"
#undef X
};

}  // namespace

std::string_view OpcodeName(HloOpcode op) {
  return kOpcodes[static_cast<int>(op)].name;
}

int OpcodeArity(HloOpcode op) { return kOpcodes[static_cast<int>(op)].arity; }

std::optional<HloOpcode> OpcodeFromName(std::string_view name) {
  if (name == "clz") return HloOpcode::kClz;
  // Sorted by name: binary search.
  int lo = 0, hi = kNumOpcodes;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (kOpcodes[mid].name < name) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < kNumOpcodes && kOpcodes[lo].name == name) {
    return static_cast<HloOpcode>(lo);
  }
  return std::nullopt;
}

bool IsElementwiseUnary(HloOpcode op) {
  return kOpcodes[static_cast<int>(op)].kind == kElementwiseUnary;
}

bool IsElementwiseBinary(HloOpcode op) {
  return kOpcodes[static_cast<int>(op)].kind == kElementwiseBinary;
}

bool IsElementwise(HloOpcode op) {
  return kOpcodes[static_cast<int>(op)].kind != kOther;
}

}  // namespace trench
