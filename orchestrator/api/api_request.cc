// ApiRequest/ApiResponse helpers: target parsing, JSON errors, token compare.
#include "orchestrator/api/api_request.h"

#include <array>
#include <cstdint>

#include "base/sha256.h"

namespace trench::orchestrator {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes %XX escapes (and '+' as a space when `plus_is_space`).
StatusOr<std::string> PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+' && plus_is_space) {
      out += ' ';
    } else if (s[i] != '%') {
      out += s[i];
    } else {
      int hi = i + 2 < s.size() ? HexValue(s[i + 1]) : -1;
      int lo = i + 2 < s.size() ? HexValue(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return InvalidArgument("bad percent escape at byte " +
                               std::to_string(i) + " of the request target");
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
  }
  return out;
}

}  // namespace

Status ParseTarget(std::string_view target, std::string* path,
                   std::map<std::string, std::string>* query) {
  if (target.empty() || target[0] != '/') {
    return InvalidArgument("request target must start with '/'");
  }
  size_t q = target.find('?');
  ASSIGN_OR_RETURN(*path, PercentDecode(target.substr(0, q), false));
  query->clear();
  if (q == std::string_view::npos) return Status::Ok();
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view item = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? "" : rest.substr(amp + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    ASSIGN_OR_RETURN(std::string key, PercentDecode(item.substr(0, eq), true));
    std::string value;
    if (eq != std::string_view::npos) {
      ASSIGN_OR_RETURN(value, PercentDecode(item.substr(eq + 1), true));
    }
    (*query)[key] = std::move(value);
  }
  return Status::Ok();
}

ApiResponse JsonResponse(int status, const Json& body) {
  ApiResponse r;
  r.status = status;
  r.body = body.Dump();
  r.body += '\n';
  return r;
}

ApiResponse ErrorResponse(int status, std::string_view code,
                          std::string_view message) {
  Json error = Json::MakeObject();
  error["code"] = code;
  error["message"] = message;
  Json body = Json::MakeObject();
  body["error"] = std::move(error);
  return JsonResponse(status, body);
}

ApiResponse StatusResponse(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      return ErrorResponse(400, "invalid_argument", status.message());
    case StatusCode::kNotFound:
      return ErrorResponse(404, "not_found", status.message());
    case StatusCode::kFailedPrecondition:
      return ErrorResponse(409, "conflict", status.message());
    case StatusCode::kResourceExhausted:
      return ErrorResponse(503, "unavailable", status.message());
    default:
      return ErrorResponse(500, "internal", status.ToString());
  }
}

StatusOr<Json> ParseBodyObject(std::string_view body) {
  StatusOr<Json> json = ParseJson(body);
  if (!json.ok()) {
    return InvalidArgument("malformed JSON in request body: " +
                           json.status().message());
  }
  if (!json->is_object()) {
    return InvalidArgument("request body must be a JSON object, got " +
                           std::string(JsonTypeName(*json)));
  }
  return json;
}

Status CheckFields(const Json& object,
                   std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : object.object()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || key == a;
    if (known) continue;
    std::string expected;
    for (std::string_view a : allowed) {
      if (!expected.empty()) expected += ", ";
      expected += a;
    }
    return InvalidArgument("unknown field '" + key + "' (expected one of " +
                           expected + ")");
  }
  return Status::Ok();
}

StatusOr<std::optional<std::string>> OptionalString(const Json& object,
                                                    std::string_view key) {
  const Json* v = object.Find(key);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) {
    return InvalidArgument("field '" + std::string(key) +
                           "' must be a string, got " +
                           std::string(JsonTypeName(*v)));
  }
  return std::optional<std::string>(v->string_value());
}

std::string_view JsonTypeName(const Json& value) {
  switch (value.type()) {
    case Json::Type::kNull:
      return "null";
    case Json::Type::kBool:
      return "boolean";
    case Json::Type::kInt64:
    case Json::Type::kUint64:
    case Json::Type::kDouble:
      return "number";
    case Json::Type::kString:
      return "string";
    case Json::Type::kArray:
      return "array";
    case Json::Type::kObject:
      return "object";
  }
  return "value";
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Hashing first makes the comparison length-independent too.
  Sha256 ha, hb;
  ha.Update(a);
  hb.Update(b);
  std::array<uint8_t, 32> da = ha.Digest(), db = hb.Digest();
  volatile uint8_t diff = 0;
  for (size_t i = 0; i < da.size(); ++i) diff = diff | (da[i] ^ db[i]);
  return diff == 0;
}

}  // namespace trench::orchestrator
