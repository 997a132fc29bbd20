// A small self-contained JSON value, parser and printer.
//
// Used by both sides (the target's report.json and JSON-lines protocol, the
// trench side's case files), so it depends on nothing but the standard
// library and base/status.h.
//
// Numbers are kept exactly: an integer literal (no '.', no exponent) that
// fits int64 is an kInt64, one above INT64_MAX that fits uint64 is a
// kUint64, anything else is a kDouble. A parsed double remembers its source
// text (number_text()), so a caller can round the decimal itself (e.g. to
// f32 with one correct rounding instead of two). Objects keep insertion
// order; duplicate keys are rejected by the parser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"

namespace trench {

class Json {
 public:
  enum class Type {
    kNull,
    kBool,
    kInt64,
    kUint64,  // Only for values above INT64_MAX (canonical form).
    kDouble,
    kString,
    kArray,
    kObject
  };
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() = default;        // null
  Json(std::nullptr_t) {}  // NOLINT: implicit by design.
  Json(bool b) : v_(b) {}  // NOLINT
  // Any integer type; unsigned values above INT64_MAX become kUint64.
  template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
      Json(T i) {  // NOLINT
    if constexpr (std::is_signed_v<T>) {
      v_ = static_cast<int64_t>(i);
    } else if (static_cast<uint64_t>(i) > uint64_t{INT64_MAX}) {
      v_ = static_cast<uint64_t>(i);
    } else {
      v_ = static_cast<int64_t>(i);
    }
  }
  Json(double d) : v_(Double{d, {}}) {}        // NOLINT: any double, see Print.
  Json(const char* s) : v_(std::string(s)) {}  // NOLINT
  Json(std::string s) : v_(std::move(s)) {}    // NOLINT
  Json(std::string_view s) : v_(std::string(s)) {}  // NOLINT
  Json(Array a) : v_(std::move(a)) {}               // NOLINT
  Json(Object o) : v_(std::move(o)) {}              // NOLINT

  static Json MakeArray() { return Json(Array{}); }
  static Json MakeObject() { return Json(Object{}); }
  // An array of these strings, in order.
  static Json MakeStringArray(const std::vector<std::string>& items);
  // A double printed as `text` instead of its shortest round-trip form.
  // REQUIRES: text is a JSON number literal denoting (a decimal that rounds
  // to) `value`; e.g. the shortest f32 form of an f32 value.
  static Json RawNumber(double value, std::string text);

  Type type() const { return static_cast<Type>(v_.index()); }
  bool is_null() const { return type() == Type::kNull; }
  bool is_bool() const { return type() == Type::kBool; }
  bool is_number() const {
    return type() == Type::kInt64 || type() == Type::kUint64 ||
           type() == Type::kDouble;
  }
  bool is_integer() const {
    return type() == Type::kInt64 || type() == Type::kUint64;
  }
  bool is_string() const { return type() == Type::kString; }
  bool is_array() const { return type() == Type::kArray; }
  bool is_object() const { return type() == Type::kObject; }

  // Unchecked accessors. REQUIRES: the matching type().
  bool bool_value() const { return std::get<bool>(v_); }
  int64_t int64_value() const { return std::get<int64_t>(v_); }
  uint64_t uint64_value() const { return std::get<uint64_t>(v_); }
  const std::string& string_value() const { return std::get<std::string>(v_); }
  const Array& array() const { return std::get<Array>(v_); }
  Array& mutable_array() { return std::get<Array>(v_); }
  const Object& object() const { return std::get<Object>(v_); }
  Object& mutable_object() { return std::get<Object>(v_); }
  // Any number as a double (integers above 2^53 round to nearest).
  // REQUIRES: is_number().
  double number_value() const;
  // The decimal text of a number: the source text for parsed doubles,
  // the RawNumber text, else the printed form (shortest round-trip, ".0"
  // added to integral doubles; "inf"/"nan" for non-finite ones, which are
  // not JSON). REQUIRES: is_number().
  std::string number_text() const;

  // Checked accessors: InvalidArgument("expected <what>") on a type
  // mismatch or when the number does not fit.
  StatusOr<bool> GetBool() const;
  StatusOr<int64_t> GetInt64() const;    // Integers only (no 1.0).
  StatusOr<uint64_t> GetUint64() const;  // Non-negative integers only.
  StatusOr<double> GetDouble() const;    // Any number.
  StatusOr<std::string> GetString() const;

  // Object member `key`, or nullptr when absent or not an object.
  const Json* Find(std::string_view key) const;
  // Object member `key`, appended (as null) when absent. A null value
  // becomes an empty object first. REQUIRES: is_object() or is_null().
  Json& operator[](std::string_view key);
  // Appends to an array; a null value becomes an empty array first.
  // REQUIRES: is_array() or is_null().
  void push_back(Json v);
  // Elements of an array or members of an object; 0 otherwise.
  size_t size() const;

  // Structural equality; numbers compare by type and value (a double's
  // source text is ignored), objects in order.
  bool operator==(const Json& o) const;

  // Compact text with non-finite doubles printed as null. Use PrintJson to
  // have them rejected instead.
  std::string Dump() const;
  // Like Dump, indented by two spaces per level.
  std::string DumpPretty() const;

 private:
  struct Double {
    double value;
    std::string text;  // Source or raw text; empty: print shortest form.
  };
  std::variant<std::nullptr_t, bool, int64_t, uint64_t, Double, std::string,
               Array, Object>
      v_;
};

struct JsonParseOptions {
  size_t max_depth = 512;                // Nesting of arrays/objects.
  size_t max_bytes = size_t{256} << 20;  // Input size.
};

// Parses exactly one JSON value (RFC 8259) surrounded by optional
// whitespace. Errors are InvalidArgument("LINE:COL: expected X") with
// 1-based line and byte column; they cover bad syntax, invalid UTF-8,
// bad escapes and lone surrogates, numbers out of double range, duplicate
// object keys, nesting deeper than max_depth, input over max_bytes and
// trailing garbage. Never crashes.
StatusOr<Json> ParseJson(std::string_view text,
                         const JsonParseOptions& options = {});

struct JsonPrintOptions {
  int indent = -1;  // < 0: compact; otherwise spaces per nesting level.
  // Non-finite doubles are not JSON: fail (InvalidArgument naming the
  // path, e.g. "$.outputs[2].max_rel") or print them as null.
  bool non_finite_as_null = false;
};

// Prints `value`. Doubles print in the shortest form that reads back to
// the same double, with ".0" added to integral values so they stay
// doubles on re-parse. Strings are escaped ("\"", "\\", control
// characters); invalid UTF-8 bytes in strings are printed as U+FFFD so the
// output is always valid UTF-8.
StatusOr<std::string> PrintJson(const Json& value,
                                const JsonPrintOptions& options = {});

}  // namespace trench
