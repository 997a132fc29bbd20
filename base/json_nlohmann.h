// The service side's JSON (DESIGN.md: "the service side maps its records
// to JSON with nlohmann/json; the target side keeps base/json"): the
// document type, text in and out, the bridge to base/json for the records
// that still hold a base Json (a bug's details, an event's evidence), and
// a reader of an object's fields whose errors name the field.
//
// Header-only on purpose: trench_base is built by the target side, which
// has no third-party dependency. Only the service side includes this file,
// and it links nlohmann_json::nlohmann_json.
//
// Nothing here throws: nlohmann's exceptions are caught inside and become
// Status values.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace trench {

// Objects keep their members in insertion order (as base/json does), so a
// record's JSON reads in the order its fields are declared.
using JsonDoc = nlohmann::ordered_json;

// Compact text, as Json::Dump prints it: invalid UTF-8 becomes U+FFFD,
// non-finite numbers null.
inline std::string DumpJsonDoc(const JsonDoc& doc) {
  return doc.dump(-1, ' ', false, JsonDoc::error_handler_t::replace);
}

// Like DumpJsonDoc, indented by two spaces per level (Json::DumpPretty).
inline std::string DumpJsonDocPretty(const JsonDoc& doc) {
  return doc.dump(2, ' ', false, JsonDoc::error_handler_t::replace);
}

namespace json_nlohmann_internal {

// "LINE:COL" (1-based line, byte column) of text[at].
inline std::string Where(std::string_view text, size_t at) {
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, line_start = i + 1;
  }
  return std::to_string(line) + ":" + std::to_string(at - line_start + 1);
}

// The offset of the first bracket nested deeper than `max_depth`, or npos.
// Strings are skipped; the text need not be valid JSON.
inline size_t TooDeep(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

// The offset of the first key that repeats an earlier key of the same
// object, or npos; *key receives it (decoded). REQUIRES: `text` is valid
// JSON (the keys are compared decoded, so "a" and "\u0061" are one key).
inline size_t DuplicateKey(std::string_view text, std::string* key) {
  struct Scope {
    bool object = false;
    bool expect_key = false;
    std::set<std::string> keys;
  };
  std::vector<Scope> scopes;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const size_t start = i;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (scopes.empty() || !scopes.back().object ||
          !scopes.back().expect_key) {
        continue;
      }
      Scope& s = scopes.back();
      s.expect_key = false;
      std::string k;
      try {
        k = JsonDoc::parse(text.substr(start, i - start + 1))
                .get<std::string>();
      } catch (const JsonDoc::exception&) {
        continue;  // Not valid JSON after all: the parser says why.
      }
      if (!s.keys.insert(k).second) {
        *key = std::move(k);
        return start;
      }
    } else if (c == '{' || c == '[') {
      scopes.push_back(Scope{c == '{', c == '{', {}});
    } else if ((c == '}' || c == ']') && !scopes.empty()) {
      scopes.pop_back();
    } else if (c == ',' && !scopes.empty() && scopes.back().object) {
      scopes.back().expect_key = true;
    }
  }
  return std::string_view::npos;
}

}  // namespace json_nlohmann_internal

// Parses one JSON value nested at most `max_depth` deep (the records'
// copies and the bridge recurse). Errors: InvalidArgument "LINE:COL:
// <what>" with 1-based line and byte column of where the parser stopped
// (as ParseJson), or of a key an object repeats ("duplicate key \"k\"",
// as ParseJson refuses them too).
inline StatusOr<JsonDoc> ParseJsonDoc(std::string_view text,
                                      size_t max_depth = 512) {
  namespace internal = json_nlohmann_internal;
  if (size_t at = internal::TooDeep(text, max_depth);
      at != std::string_view::npos) {
    return InvalidArgument(internal::Where(text, at) + ": expected at most " +
                           std::to_string(max_depth) +
                           " levels of nested arrays and objects");
  }
  try {
    JsonDoc doc = JsonDoc::parse(text);
    std::string key;
    if (size_t at = internal::DuplicateKey(text, &key);
        at != std::string_view::npos) {
      return InvalidArgument(
          internal::Where(text, at) + ": duplicate key " +
          JsonDoc(key).dump(-1, ' ', false, JsonDoc::error_handler_t::replace));
    }
    return doc;
  } catch (const JsonDoc::parse_error& e) {
    const size_t at = std::min(e.byte == 0 ? 0 : e.byte - 1, text.size());
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 2, column 3:
    // syntax error ..." -> "syntax error ...".
    if (size_t p = what.find("column "); p != std::string::npos) {
      if (size_t colon = what.find(": ", p); colon != std::string::npos) {
        what = what.substr(colon + 2);
      }
    }
    return InvalidArgument(internal::Where(text, at) + ": " + what);
  } catch (const JsonDoc::exception& e) {
    return InvalidArgument(e.what());
  }
}

// base/json -> nlohmann. Numbers keep their kind (int64, uint64, double);
// a double's source text is not kept.
inline JsonDoc ToJsonDoc(const Json& j) {
  switch (j.type()) {
    case Json::Type::kNull:
      return nullptr;
    case Json::Type::kBool:
      return j.bool_value();
    case Json::Type::kInt64:
      return j.int64_value();
    case Json::Type::kUint64:
      return j.uint64_value();
    case Json::Type::kDouble:
      return j.number_value();
    case Json::Type::kString:
      return j.string_value();
    case Json::Type::kArray: {
      JsonDoc a = JsonDoc::array();
      for (const Json& e : j.array()) a.push_back(ToJsonDoc(e));
      return a;
    }
    case Json::Type::kObject: {
      JsonDoc o = JsonDoc::object();
      for (const auto& [k, v] : j.object()) o[k] = ToJsonDoc(v);
      return o;
    }
  }
  return nullptr;
}

// nlohmann -> base/json (binary values, which JSON text never holds,
// become null).
inline Json FromJsonDoc(const JsonDoc& d) {
  switch (d.type()) {
    case JsonDoc::value_t::boolean:
      return Json(d.get<bool>());
    case JsonDoc::value_t::number_integer:
      return Json(d.get<int64_t>());
    case JsonDoc::value_t::number_unsigned:
      return Json(d.get<uint64_t>());
    case JsonDoc::value_t::number_float:
      return Json(d.get<double>());
    case JsonDoc::value_t::string:
      return Json(d.get_ref<const std::string&>());
    case JsonDoc::value_t::array: {
      Json a = Json::MakeArray();
      for (const JsonDoc& e : d) a.push_back(FromJsonDoc(e));
      return a;
    }
    case JsonDoc::value_t::object: {
      Json o = Json::MakeObject();
      for (const auto& [k, v] : d.items()) o[k] = FromJsonDoc(v);
      return o;
    }
    default:
      return Json();
  }
}

// An optional record field as JSON: its value, or null.
template <typename T>
JsonDoc JsonDocOrNull(const std::optional<T>& v) {
  return v ? JsonDoc(*v) : JsonDoc();
}

// Reads the fields of one JSON object for a record's from-JSON function.
// Every error is InvalidArgument naming the field by its path from the
// document's root: "field 'findings[1].case' is missing", "field 'text'
// must be a string, got number".
class JsonFields {
 public:
  // How a null member reads: as absent (agents' claims write `"case":
  // null` for "no case"), or as a value of the wrong type (API requests).
  enum class Null { kAbsent, kWrongType };

  // `object` must outlive the reader. `path` is the object's own path
  // ("" for the root). Errors: "<path> must be an object, got <type>".
  static StatusOr<JsonFields> Of(const JsonDoc& object, std::string path = "",
                                 Null null = Null::kAbsent) {
    if (!object.is_object()) {
      return InvalidArgument((path.empty() ? std::string("the document")
                                           : "field '" + path + "'") +
                             " must be an object, got " + object.type_name());
    }
    return JsonFields(object, std::move(path), null);
  }

  // The field's path for messages: "a.b", "a[2]" is the caller's.
  std::string Path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  std::string Name(std::string_view key) const {
    return "field '" + Path(key) + "'";
  }

  // The member, or nullptr when absent (or null under Null::kAbsent).
  const JsonDoc* Find(std::string_view key) const {
    auto it = object_->find(key);
    if (it == object_->end()) return nullptr;
    if (it->is_null() && null_ == Null::kAbsent) return nullptr;
    return &*it;
  }
  StatusOr<const JsonDoc*> Required(std::string_view key) const {
    const JsonDoc* v = Find(key);
    if (v == nullptr) return InvalidArgument(Name(key) + " is missing");
    return v;
  }
  Status WrongType(std::string_view key, std::string_view want,
                   const JsonDoc& got) const {
    return InvalidArgument(Name(key) + " must be " + std::string(want) +
                           ", got " + got.type_name());
  }

  StatusOr<std::optional<std::string>> OptionalString(
      std::string_view key) const {
    const JsonDoc* v = Find(key);
    if (v == nullptr) return std::optional<std::string>();
    if (!v->is_string()) return WrongType(key, "a string", *v);
    return std::optional<std::string>(v->get<std::string>());
  }
  StatusOr<std::string> String(std::string_view key) const {
    ASSIGN_OR_RETURN(const JsonDoc* v, Required(key));
    if (!v->is_string()) return WrongType(key, "a string", *v);
    return v->get<std::string>();
  }
  // Integers only (no 1.0); unsigned values above INT64_MAX do not fit.
  StatusOr<std::optional<int64_t>> OptionalInt(std::string_view key) const {
    const JsonDoc* v = Find(key);
    if (v == nullptr) return std::optional<int64_t>();
    return IntOf(key, *v);
  }
  StatusOr<int64_t> Int(std::string_view key) const {
    ASSIGN_OR_RETURN(std::optional<int64_t> v, OptionalInt(key));
    if (!v) return InvalidArgument(Name(key) + " is missing");
    return *v;
  }
  StatusOr<std::optional<double>> OptionalDouble(std::string_view key) const {
    const JsonDoc* v = Find(key);
    if (v == nullptr) return std::optional<double>();
    if (!v->is_number()) return WrongType(key, "a number", *v);
    return std::optional<double>(v->get<double>());
  }
  StatusOr<std::optional<bool>> OptionalBool(std::string_view key) const {
    const JsonDoc* v = Find(key);
    if (v == nullptr) return std::optional<bool>();
    if (!v->is_boolean()) return WrongType(key, "a boolean", *v);
    return std::optional<bool>(v->get<bool>());
  }
  // An object or array member (nullptr when absent).
  StatusOr<const JsonDoc*> OptionalObject(std::string_view key) const {
    const JsonDoc* v = Find(key);
    if (v != nullptr && !v->is_object()) return WrongType(key, "an object", *v);
    return v;
  }
  StatusOr<const JsonDoc*> OptionalArray(std::string_view key) const {
    const JsonDoc* v = Find(key);
    if (v != nullptr && !v->is_array()) return WrongType(key, "an array", *v);
    return v;
  }

  // Members a record always writes, null where unset: absent is "is
  // missing" and null is nullopt (or a null JsonDoc), whatever `Null` says.
  StatusOr<const JsonDoc*> Nullable(std::string_view key) const {
    auto it = object_->find(key);
    if (it == object_->end()) return InvalidArgument(Name(key) + " is missing");
    return it->is_null() ? nullptr : &*it;
  }
  StatusOr<std::optional<std::string>> NullableString(
      std::string_view key) const {
    ASSIGN_OR_RETURN(const JsonDoc* v, Nullable(key));
    if (v == nullptr) return std::optional<std::string>();
    if (!v->is_string()) return WrongType(key, "a string", *v);
    return std::optional<std::string>(v->get<std::string>());
  }
  StatusOr<std::optional<int64_t>> NullableInt(std::string_view key) const {
    ASSIGN_OR_RETURN(const JsonDoc* v, Nullable(key));
    if (v == nullptr) return std::optional<int64_t>();
    return IntOf(key, *v);
  }
  // A free-form object member, or null.
  StatusOr<JsonDoc> NullableObject(std::string_view key) const {
    ASSIGN_OR_RETURN(const JsonDoc* v, Nullable(key));
    if (v == nullptr) return JsonDoc();
    if (!v->is_object()) return WrongType(key, "an object or null", *v);
    return *v;
  }
  // The reader of a required object member (its fields named by path).
  StatusOr<JsonFields> Object(std::string_view key) const {
    ASSIGN_OR_RETURN(const JsonDoc* v, Required(key));
    if (!v->is_object()) return WrongType(key, "an object", *v);
    return JsonFields(*v, Path(key), null_);
  }

  // InvalidArgument "unknown field 'x' (expected one of a, b)" when the
  // object has a member not in `allowed`.
  Status OnlyFields(std::initializer_list<std::string_view> allowed) const {
    for (const auto& [key, value] : object_->items()) {
      bool known = false;
      for (std::string_view a : allowed) known = known || key == a;
      if (known) continue;
      std::string expected;
      for (std::string_view a : allowed) {
        if (!expected.empty()) expected += ", ";
        expected += a;
      }
      return InvalidArgument("unknown field '" + Path(key) +
                             "' (expected one of " + expected + ")");
    }
    return Status::Ok();
  }

 private:
  JsonFields(const JsonDoc& object, std::string path, Null null)
      : object_(&object), path_(std::move(path)), null_(null) {}

  StatusOr<std::optional<int64_t>> IntOf(std::string_view key,
                                         const JsonDoc& v) const {
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return InvalidArgument(Name(key) + " is out of range");
    }
    if (!v.is_number_integer()) return WrongType(key, "an integer", v);
    return std::optional<int64_t>(v.get<int64_t>());
  }

  const JsonDoc* object_;
  std::string path_;
  Null null_;
};

}  // namespace trench
