// Checked reads of a JSON object's members (json_reader.h).
#include "base/json_reader.h"

namespace trench {

Status JsonReader::Check() const {
  return j_.is_object() ? Status::Ok() : Error("", "expected an object");
}

StatusOr<const Json*> JsonReader::Get(std::string_view key) const {
  const Json* v = j_.is_object() ? j_.Find(key) : nullptr;
  if (v == nullptr) return Error(key, "missing");
  return v;
}

StatusOr<std::string> JsonReader::String(std::string_view key) const {
  ASSIGN_OR_RETURN(const Json* v, Get(key));
  if (!v->is_string()) return Error(key, "expected a string");
  return v->string_value();
}

StatusOr<int64_t> JsonReader::Int(std::string_view key) const {
  ASSIGN_OR_RETURN(const Json* v, Get(key));
  StatusOr<int64_t> n = v->GetInt64();
  if (!n.ok()) return Error(key, "expected an integer");
  return n;
}

StatusOr<uint64_t> JsonReader::Uint(std::string_view key) const {
  ASSIGN_OR_RETURN(const Json* v, Get(key));
  StatusOr<uint64_t> n = v->GetUint64();
  if (!n.ok()) return Error(key, "expected a non-negative integer");
  return n;
}

StatusOr<double> JsonReader::NonNegative(std::string_view key) const {
  ASSIGN_OR_RETURN(const Json* v, Get(key));
  if (!v->is_number() || !(v->number_value() >= 0)) {
    return Error(key, "expected a non-negative number");
  }
  return v->number_value();
}

StatusOr<bool> JsonReader::Bool(std::string_view key) const {
  ASSIGN_OR_RETURN(const Json* v, Get(key));
  if (!v->is_bool()) return Error(key, "expected a boolean");
  return v->bool_value();
}

StatusOr<std::vector<std::string>> JsonReader::Strings(
    std::string_view key) const {
  ASSIGN_OR_RETURN(const Json* v, Get(key));
  if (!v->is_array()) return Error(key, "expected an array of strings");
  std::vector<std::string> out;
  for (const Json& s : v->array()) {
    if (!s.is_string()) return Error(key, "expected an array of strings");
    out.push_back(s.string_value());
  }
  return out;
}

JsonReader JsonReader::Sub(const Json& j, std::string_view key) const {
  return JsonReader(j, where_ + "." + std::string(key));
}

Status JsonReader::Error(std::string_view key, const std::string& what) const {
  return InvalidArgument(where_ + (key.empty() ? "" : ".") + std::string(key) +
                         ": " + what);
}

}  // namespace trench
