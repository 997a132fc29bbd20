#include "agents/json_schema.h"

#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace trench::agents {
namespace {

constexpr std::array<std::string_view, 7> kTypes = {
    "object", "array", "string", "integer", "number", "boolean", "null"};

std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string At(const std::string& path) {
  return path.empty() ? "arguments" : path;
}

// Number of UTF-8 code points (continuation bytes are not counted).
size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool IsKnownType(const Json& t) {
  if (!t.is_string()) return false;
  for (std::string_view k : kTypes) {
    if (t.string_value() == k) return true;
  }
  return false;
}

Status SchemaError(const std::string& path, std::string_view what) {
  return InvalidArgument((path.empty() ? "schema" : path) + ": " +
                         std::string(what));
}

Status CheckNonNegativeInt(const Json& v, const std::string& path) {
  if (!v.is_integer() ||
      (v.type() == Json::Type::kInt64 && v.int64_value() < 0)) {
    return SchemaError(path, "expected a non-negative integer");
  }
  return Status::Ok();
}

Status CheckSchemaAt(const Json& schema, const std::string& path, int depth) {
  if (depth > 64) return SchemaError(path, "nested too deeply");
  if (!schema.is_object()) return SchemaError(path, "expected an object");
  for (const auto& [key, v] : schema.object()) {
    const std::string p = Join(path, key);
    if (key == "description" || key == "title" || key == "default") {
      continue;
    } else if (key == "type") {
      if (v.is_array()) {
        if (v.size() == 0) return SchemaError(p, "empty list of types");
        for (const Json& t : v.array()) {
          if (!IsKnownType(t)) return SchemaError(p, "unknown type");
        }
      } else if (!IsKnownType(v)) {
        return SchemaError(p, "unknown type");
      }
    } else if (key == "properties") {
      if (!v.is_object()) return SchemaError(p, "expected an object");
      for (const auto& [name, sub] : v.object()) {
        RETURN_IF_ERROR(CheckSchemaAt(sub, Join(p, name), depth + 1));
      }
    } else if (key == "required") {
      if (!v.is_array()) return SchemaError(p, "expected an array");
      for (const Json& r : v.array()) {
        if (!r.is_string()) return SchemaError(p, "expected strings");
      }
    } else if (key == "additionalProperties") {
      if (!v.is_bool()) return SchemaError(p, "expected a boolean");
    } else if (key == "items") {
      RETURN_IF_ERROR(CheckSchemaAt(v, p, depth + 1));
    } else if (key == "enum") {
      if (!v.is_array() || v.size() == 0) {
        return SchemaError(p, "expected a non-empty array");
      }
    } else if (key == "minimum" || key == "maximum") {
      if (!v.is_number()) return SchemaError(p, "expected a number");
    } else if (key == "minLength" || key == "maxLength" || key == "minItems" ||
               key == "maxItems") {
      RETURN_IF_ERROR(CheckNonNegativeInt(v, p));
    } else {
      return SchemaError(p, "unsupported keyword");
    }
  }
  return Status::Ok();
}

// "an integer", "a string", ... for messages.
std::string Article(std::string_view type) {
  if (type == "integer" || type == "object" || type == "array") {
    return "an " + std::string(type);
  }
  if (type == "null") return "null";
  return "a " + std::string(type);
}

bool HasType(const Json& value, std::string_view type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_integer();
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_bool();
  if (type == "null") return value.is_null();
  return false;
}

Status TypeError(const std::string& path, const std::string& expected,
                 const Json& value) {
  return InvalidArgument(At(path) + ": expected " + expected + ", got " +
                         ShortJson(value));
}

Status CheckType(const Json& type, const Json& value, const std::string& path) {
  if (type.is_string()) {
    if (HasType(value, type.string_value())) return Status::Ok();
    return TypeError(path, Article(type.string_value()), value);
  }
  if (!type.is_array()) return Status::Ok();
  std::string expected;
  for (const Json& t : type.array()) {
    if (!t.is_string()) continue;
    if (HasType(value, t.string_value())) return Status::Ok();
    expected += (expected.empty() ? "" : " or ") + Article(t.string_value());
  }
  return TypeError(path, expected, value);
}

Status ValidateAt(const Json& schema, const Json& value,
                  const std::string& path, int depth);

Status ValidateObject(const Json& schema, const Json& value,
                      const std::string& path, int depth) {
  const Json* props = schema.Find("properties");
  if (const Json* req = schema.Find("required"); req && req->is_array()) {
    for (const Json& r : req->array()) {
      if (r.is_string() && value.Find(r.string_value()) == nullptr) {
        return InvalidArgument(Join(path, r.string_value()) +
                               ": missing required property");
      }
    }
  }
  const Json* extra = schema.Find("additionalProperties");
  const bool closed = extra && extra->is_bool() && !extra->bool_value();
  for (const auto& [key, v] : value.object()) {
    const Json* sub = props && props->is_object() ? props->Find(key) : nullptr;
    if (sub != nullptr) {
      RETURN_IF_ERROR(ValidateAt(*sub, v, Join(path, key), depth + 1));
    } else if (closed) {
      std::string allowed;
      if (props && props->is_object()) {
        for (const auto& [name, unused] : props->object()) {
          allowed += (allowed.empty() ? "" : ", ") + name;
        }
      }
      return InvalidArgument(Join(path, key) + ": unknown property (allowed: " +
                             (allowed.empty() ? "none" : allowed) + ")");
    }
  }
  return Status::Ok();
}

Status ValidateArray(const Json& schema, const Json& value,
                     const std::string& path, int depth) {
  const Json* min = schema.Find("minItems");
  if (min && min->is_integer() && min->number_value() > value.size()) {
    return InvalidArgument(At(path) + ": expected at least " +
                           min->number_text() + " items, got " +
                           std::to_string(value.size()));
  }
  const Json* max = schema.Find("maxItems");
  if (max && max->is_integer() && max->number_value() < value.size()) {
    return InvalidArgument(At(path) + ": expected at most " +
                           max->number_text() + " items, got " +
                           std::to_string(value.size()));
  }
  const Json* items = schema.Find("items");
  if (items == nullptr) return Status::Ok();
  for (size_t i = 0; i < value.size(); ++i) {
    RETURN_IF_ERROR(ValidateAt(*items, value.array()[i],
                               At(path) + "[" + std::to_string(i) + "]",
                               depth + 1));
  }
  return Status::Ok();
}

Status ValidateScalar(const Json& schema, const Json& value,
                      const std::string& path) {
  if (value.is_number()) {
    const double x = value.number_value();
    const Json* min = schema.Find("minimum");
    if (min && min->is_number() && x < min->number_value()) {
      return InvalidArgument(At(path) + ": " + value.number_text() +
                             " is below the minimum " + min->number_text());
    }
    const Json* max = schema.Find("maximum");
    if (max && max->is_number() && x > max->number_value()) {
      return InvalidArgument(At(path) + ": " + value.number_text() +
                             " is above the maximum " + max->number_text());
    }
  }
  if (value.is_string()) {
    const size_t n = CodePoints(value.string_value());
    const Json* min = schema.Find("minLength");
    if (min && min->is_integer() && n < min->number_value()) {
      return InvalidArgument(At(path) + ": expected at least " +
                             min->number_text() + " characters, got " +
                             std::to_string(n));
    }
    const Json* max = schema.Find("maxLength");
    if (max && max->is_integer() && n > max->number_value()) {
      return InvalidArgument(At(path) + ": expected at most " +
                             max->number_text() + " characters, got " +
                             std::to_string(n));
    }
  }
  return Status::Ok();
}

Status ValidateAt(const Json& schema, const Json& value,
                  const std::string& path, int depth) {
  if (!schema.is_object() || depth > 64) return Status::Ok();
  if (const Json* type = schema.Find("type")) {
    RETURN_IF_ERROR(CheckType(*type, value, path));
  }
  if (const Json* en = schema.Find("enum"); en && en->is_array()) {
    bool found = false;
    std::string allowed;
    for (const Json& e : en->array()) {
      found = found || e == value;
      allowed += (allowed.empty() ? "" : ", ") + ShortJson(e, 30);
    }
    if (!found) {
      return InvalidArgument(At(path) + ": expected one of " + allowed +
                             ", got " + ShortJson(value));
    }
  }
  if (value.is_object()) return ValidateObject(schema, value, path, depth);
  if (value.is_array()) return ValidateArray(schema, value, path, depth);
  return ValidateScalar(schema, value, path);
}

}  // namespace

Status CheckSchema(const Json& schema) { return CheckSchemaAt(schema, "", 0); }

StatusOr<Json> ParseSchema(std::string_view text) {
  JsonParseOptions options;
  options.max_depth = 64;
  StatusOr<Json> schema = ParseJson(text, options);
  if (!schema.ok()) return schema.status().WithContext("schema");
  RETURN_IF_ERROR(CheckSchema(*schema));
  return schema;
}

Status ValidateJson(const Json& schema, const Json& value) {
  return ValidateAt(schema, value, "", 0);
}

std::string ShortJson(const Json& value, size_t max_chars) {
  std::string text = value.Dump();
  if (text.size() <= max_chars) return text;
  size_t cut = max_chars;
  // Do not cut a UTF-8 sequence in half.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return text.substr(0, cut) + "...";
}

}  // namespace trench::agents
