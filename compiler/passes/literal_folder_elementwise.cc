// Elementwise folding. Values travel as double (floats) or as 64-bit
// integers (integers, pred); see literal_folder.h for why computing floats
// in double and rounding once is exact for the ops folded here.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "compiler/passes/literal_folder_internal.h"

namespace trench::folder {
namespace {

using Op = HloOpcode;

enum class Kind { kPred, kSigned, kUnsigned, kFloat, kOther };

Kind KindFor(PrimitiveType t) {
  switch (KindOf(t)) {
    case TypeKind::kPred:
      return Kind::kPred;
    case TypeKind::kSigned:
      return Kind::kSigned;
    case TypeKind::kUnsigned:
      return Kind::kUnsigned;
    case TypeKind::kFloat:
      return Kind::kFloat;
    default:
      return Kind::kOther;
  }
}

uint64_t Mask(int bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

int64_t SignExtend(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  v &= Mask(bits);
  return static_cast<int64_t>((v ^ sign) - sign);
}

// Element i of an integer or pred literal as its bit pattern, zero-extended.
uint64_t Bits(const Literal& l, int64_t i) {
  return static_cast<uint64_t>(l.GetAsInt64(i)) &
         Mask(BitWidth(l.element_type()));
}

std::optional<double> FloatUnary(Op op, double x) {
  switch (op) {
    case Op::kNegate:
      return -x;
    case Op::kAbs:
      return std::fabs(x);
    case Op::kFloor:
      return std::floor(x);
    case Op::kCeil:
      return std::ceil(x);
    case Op::kRoundNearestAfz:
      return std::round(x);
    case Op::kRoundNearestEven:
      return std::nearbyint(x);
    case Op::kSqrt:
      return std::sqrt(x);
    case Op::kCopy:
      return x;
    case Op::kSign:
      if (std::isnan(x) || x == 0) return x;
      return x < 0 ? -1.0 : 1.0;
    default:
      return std::nullopt;
  }
}

std::optional<double> FloatBinary(Op op, double x, double y) {
  switch (op) {
    case Op::kAdd:
      return x + y;
    case Op::kSubtract:
      return x - y;
    case Op::kMultiply:
      return x * y;
    case Op::kDivide:
      return x / y;
    case Op::kRemainder:
      return std::fmod(x, y);
    case Op::kMaximum:
      if (std::isnan(x)) return x;
      if (std::isnan(y)) return y;
      return x < y ? y : x;
    case Op::kMinimum:
      if (std::isnan(x)) return x;
      if (std::isnan(y)) return y;
      return y < x ? y : x;
    default:
      return std::nullopt;
  }
}

std::optional<uint64_t> IntUnary(Op op, uint64_t x, Kind kind, int bits) {
  const int64_t sx = SignExtend(x, bits);
  switch (op) {
    case Op::kNot:
      return kind == Kind::kPred ? uint64_t{x == 0} : ~x;
    case Op::kCopy:
      return x;
    case Op::kNegate:
      if (kind == Kind::kPred) return std::nullopt;
      return uint64_t{0} - x;
    case Op::kAbs:
      if (kind == Kind::kPred) return std::nullopt;
      if (kind == Kind::kUnsigned) return x;
      return sx < 0 ? uint64_t{0} - x : x;
    case Op::kSign:
      if (kind == Kind::kPred) return std::nullopt;
      if (kind == Kind::kUnsigned) return uint64_t{x != 0};
      return static_cast<uint64_t>(sx < 0 ? -1 : (sx > 0 ? 1 : 0));
    case Op::kPopulationCount:
      if (kind == Kind::kPred) return std::nullopt;
      return static_cast<uint64_t>(std::popcount(x & Mask(bits)));
    case Op::kClz:
      if (kind == Kind::kPred) return std::nullopt;
      return static_cast<uint64_t>(std::countl_zero(x & Mask(bits)) -
                                   (64 - bits));
    default:
      return std::nullopt;
  }
}

std::optional<uint64_t> IntBinary(Op op, uint64_t x, uint64_t y, Kind kind,
                                  int bits) {
  const bool is_signed = kind == Kind::kSigned;
  const int64_t sx = SignExtend(x, bits), sy = SignExtend(y, bits);
  if (kind == Kind::kPred) {
    switch (op) {
      case Op::kAnd:
        return x & y;
      case Op::kOr:
        return x | y;
      case Op::kXor:
        return x ^ y;
      default:
        return std::nullopt;
    }
  }
  switch (op) {
    case Op::kAdd:
      return x + y;
    case Op::kSubtract:
      return x - y;
    case Op::kMultiply:
      return x * y;
    case Op::kAnd:
      return x & y;
    case Op::kOr:
      return x | y;
    case Op::kXor:
      return x ^ y;
    case Op::kDivide:
      if (y == 0) return ~uint64_t{0};
      if (!is_signed) return x / y;
      if (sy == -1) return uint64_t{0} - x;  // INT_MIN / -1 wraps to INT_MIN.
      return static_cast<uint64_t>(sx / sy);
    case Op::kRemainder:
      if (y == 0) return x;
      if (!is_signed) return x % y;
      if (sy == -1) return 0;
      return static_cast<uint64_t>(sx % sy);
    case Op::kMaximum:
      if (is_signed) return static_cast<uint64_t>(sx < sy ? sy : sx);
      return x < y ? y : x;
    case Op::kMinimum:
      if (is_signed) return static_cast<uint64_t>(sy < sx ? sy : sx);
      return y < x ? y : x;
    case Op::kShiftLeft:
      return y >= static_cast<uint64_t>(bits) ? 0 : x << y;
    case Op::kShiftRightLogical:
      return y >= static_cast<uint64_t>(bits) ? 0 : x >> y;
    case Op::kShiftRightArithmetic:
      if (y >= static_cast<uint64_t>(bits)) {
        return static_cast<uint64_t>(sx < 0 ? -1 : 0);
      }
      return static_cast<uint64_t>(is_signed ? sx >> y
                                             : SignExtend(x, bits) >> y);
    default:
      return std::nullopt;
  }
}

template <typename T>
bool CompareValues(ComparisonDirection d, T x, T y) {
  switch (d) {
    case ComparisonDirection::kEq:
      return x == y;
    case ComparisonDirection::kNe:
      return x != y;
    case ComparisonDirection::kLt:
      return x < y;
    case ComparisonDirection::kLe:
      return x <= y;
    case ComparisonDirection::kGt:
      return x > y;
    case ComparisonDirection::kGe:
      return x >= y;
  }
  return false;
}

std::optional<Literal> FoldCompare(const HloInstruction& instr,
                                   const Literal& a, const Literal& b) {
  const Kind kind = KindFor(a.element_type());
  const auto dir = instr.attrs().comparison_direction;
  const auto type = instr.attrs().comparison_type;
  if (kind == Kind::kOther || a.element_type() != b.element_type() ||
      type == ComparisonType::kTotalOrder) {
    return std::nullopt;
  }
  Literal out(instr.shape());
  const int bits = BitWidth(a.element_type());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    bool r;
    if (kind == Kind::kFloat) {
      r = CompareValues(dir, a.GetAsDouble(i), b.GetAsDouble(i));
    } else if (kind == Kind::kSigned) {
      r = CompareValues(dir, SignExtend(Bits(a, i), bits),
                        SignExtend(Bits(b, i), bits));
    } else {
      r = CompareValues(dir, Bits(a, i), Bits(b, i));
    }
    out.SetFromInt64(i, r ? 1 : 0);
  }
  return out;
}

std::optional<Literal> FoldConvert(const HloInstruction& instr,
                                   const Literal& in) {
  const Kind from = KindFor(in.element_type());
  const Kind to = KindFor(instr.shape().element_type());
  if (from == Kind::kOther || to == Kind::kOther) return std::nullopt;
  Literal out(instr.shape());
  const int bits = BitWidth(in.element_type());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    if (from == Kind::kFloat) {
      // Float -> float rounds once; -> integer truncates and saturates
      // (NaN -> 0); -> pred is != 0. SetFromDouble does all three.
      out.SetFromDouble(i, in.GetAsDouble(i));
      continue;
    }
    const uint64_t x = Bits(in, i);
    const int64_t v =
        from == Kind::kSigned ? SignExtend(x, bits) : static_cast<int64_t>(x);
    if (to == Kind::kFloat) {
      // Exact in double below 2^53, so SetFromDouble rounds only once.
      const bool big = from == Kind::kUnsigned ? x >= (uint64_t{1} << 53)
                                               : (v >= (int64_t{1} << 53) ||
                                                  v <= -(int64_t{1} << 53));
      if (big) return std::nullopt;
      out.SetFromDouble(i, static_cast<double>(v));
    } else {
      out.SetFromInt64(i, v);  // Wraps to the target width; pred is != 0.
    }
  }
  return out;
}

}  // namespace

std::optional<Literal> FoldElementwise(
    const HloInstruction& instr, const std::vector<const Literal*>& operands) {
  const Op op = instr.opcode();
  if (!IsElementwise(op)) return std::nullopt;
  if (op == Op::kConvert && operands.size() == 1) {
    return FoldConvert(instr, *operands[0]);
  }
  if (op == Op::kCompare && operands.size() == 2) {
    return FoldCompare(instr, *operands[0], *operands[1]);
  }
  if (operands.empty() || operands.size() > 2) return std::nullopt;
  const PrimitiveType in_type = operands[0]->element_type();
  for (const Literal* l : operands) {
    if (l->element_type() != in_type ||
        l->element_count() != instr.shape().element_count()) {
      return std::nullopt;
    }
  }
  const Kind kind = KindFor(in_type);
  if (kind == Kind::kOther) return std::nullopt;
  Literal out(instr.shape());
  const int64_t n = out.element_count();
  if (op == Op::kIsFinite) {
    if (kind != Kind::kFloat || operands.size() != 1) return std::nullopt;
    for (int64_t i = 0; i < n; ++i) {
      out.SetFromInt64(i, std::isfinite(operands[0]->GetAsDouble(i)) ? 1 : 0);
    }
    return out;
  }
  if (instr.shape().element_type() != in_type) return std::nullopt;
  const int bits = BitWidth(in_type);
  for (int64_t i = 0; i < n; ++i) {
    if (kind == Kind::kFloat) {
      const double x = operands[0]->GetAsDouble(i);
      std::optional<double> r =
          operands.size() == 1
              ? FloatUnary(op, x)
              : FloatBinary(op, x, operands[1]->GetAsDouble(i));
      if (!r) return std::nullopt;
      out.SetFromDouble(i, *r);
    } else {
      const uint64_t x = Bits(*operands[0], i);
      std::optional<uint64_t> r =
          operands.size() == 1
              ? IntUnary(op, x, kind, bits)
              : IntBinary(op, x, Bits(*operands[1], i), kind, bits);
      if (!r) return std::nullopt;
      out.SetFromInt64(i, static_cast<int64_t>(*r));
    }
  }
  return out;
}

}  // namespace trench::folder
