#include "compiler/ir/hlo_attributes.h"

namespace trench {

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kDefault:
      return "DEFAULT";
    case Precision::kHigh:
      return "HIGH";
    case Precision::kHighest:
      return "HIGHEST";
  }
  return "DEFAULT";
}

const char* ComparisonDirectionName(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq:
      return "EQ";
    case ComparisonDirection::kNe:
      return "NE";
    case ComparisonDirection::kLt:
      return "LT";
    case ComparisonDirection::kLe:
      return "LE";
    case ComparisonDirection::kGt:
      return "GT";
    case ComparisonDirection::kGe:
      return "GE";
  }
  return "EQ";
}

const char* ComparisonTypeName(ComparisonType t) {
  switch (t) {
    case ComparisonType::kUnset:
      return "";
    case ComparisonType::kFloat:
      return "FLOAT";
    case ComparisonType::kTotalOrder:
      return "TOTALORDER";
    case ComparisonType::kSigned:
      return "SIGNED";
    case ComparisonType::kUnsigned:
      return "UNSIGNED";
  }
  return "";
}

const char* FusionKindName(FusionKind k) {
  switch (k) {
    case FusionKind::kLoop:
      return "kLoop";
    case FusionKind::kInput:
      return "kInput";
    case FusionKind::kOutput:
      return "kOutput";
    case FusionKind::kCustom:
      return "kCustom";
  }
  return "kLoop";
}

const std::string* HloAttributes::FindRaw(const std::string& key) const {
  for (const auto& [k, v] : raw) {
    if (k == key) return &v;
  }
  return nullptr;
}

}  // namespace trench
