// ApiRequest/ApiResponse helpers: target parsing, JSON errors, token compare.
#include "orchestrator/api/api_request.h"

#include <array>
#include <cstdint>

#include "base/sha256.h"
#include "orchestrator/api/api_bodies.h"

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

ApiResponse JsonResponse(int status, const JsonDoc& body) {
  ApiResponse r;
  r.status = status;
  r.body = DumpJsonDoc(body);
  r.body += '\n';
  return r;
}

ApiResponse ErrorResponse(int status, std::string_view code,
                          std::string_view message) {
  return JsonResponse(
      status, ToJson(ErrorBody{std::string(code), std::string(message)}));
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

namespace trench::orchestrator {

void Wakeable::SetWaker(std::function<void()> waker) {
  std::lock_guard<std::mutex> lock(mu_);
  waker_ = std::move(waker);
}

void Wakeable::Wake() {
  std::lock_guard<std::mutex> lock(mu_);
  if (waker_) waker_();
}

}  // namespace trench::orchestrator
