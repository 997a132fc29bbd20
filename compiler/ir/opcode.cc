#include "compiler/ir/opcode.h"

#include <cstdint>

namespace trench {
namespace {

struct OpcodeInfo {
  std::string_view name;
  int arity;
};

constexpr OpcodeInfo kOpcodes[] = {
#define X(e, text, arity) {text, arity},
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
  switch (op) {
    case HloOpcode::kAbs:
    case HloOpcode::kCbrt:
    case HloOpcode::kCeil:
    case HloOpcode::kClz:
    case HloOpcode::kConvert:
    case HloOpcode::kCos:
    case HloOpcode::kErf:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kFloor:
    case HloOpcode::kImag:
    case HloOpcode::kIsFinite:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kNegate:
    case HloOpcode::kNot:
    case HloOpcode::kPopulationCount:
    case HloOpcode::kReal:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSign:
    case HloOpcode::kSin:
    case HloOpcode::kSqrt:
    case HloOpcode::kTan:
    case HloOpcode::kTanh:
    case HloOpcode::kCopy:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kAcos:
    case HloOpcode::kAcosh:
    case HloOpcode::kAsin:
    case HloOpcode::kAsinh:
    case HloOpcode::kAtanh:
    case HloOpcode::kCosh:
    case HloOpcode::kSinh:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAdd:
    case HloOpcode::kAnd:
    case HloOpcode::kAtan2:
    case HloOpcode::kCompare:
    case HloOpcode::kComplex:
    case HloOpcode::kDivide:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kMultiply:
    case HloOpcode::kOr:
    case HloOpcode::kPower:
    case HloOpcode::kRemainder:
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kSubtract:
    case HloOpcode::kXor:
      return true;
    default:
      return false;
  }
}

bool IsElementwise(HloOpcode op) {
  return IsElementwiseUnary(op) || IsElementwiseBinary(op) ||
         op == HloOpcode::kSelect || op == HloOpcode::kClamp;
}

}  // namespace trench
