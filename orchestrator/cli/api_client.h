// What the API client commands (cmd_client.cc, cmd_jobs.cc) share: the
// daemon's address, one request, and the small formatting helpers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/json_nlohmann.h"
#include "base/status.h"
#include "orchestrator/cli/cli.h"

namespace trench::cli {

inline constexpr char kDefaultServer[] = "http://127.0.0.1:7878";

// The daemon at --server URL, $TRENCH_SERVER or the default.
class ApiClient {
 public:
  // `server`: --server's value ("" when not given).
  ApiClient(const Context& ctx, const std::string& server);

  // GET `path`: the response's JSON object. Errors carry the message to
  // print (see Call). `timeout_seconds`: the whole request's bound.
  StatusOr<JsonDoc> Get(const std::string& path, int timeout_seconds = 120) {
    return Call("GET", path, "", timeout_seconds);
  }
  StatusOr<JsonDoc> Post(const std::string& path, const JsonDoc& body) {
    return Call("POST", path, DumpJsonDoc(body), 120);
  }

 private:
  // Errors: kIoError "no daemon at URL (curl's message)" when nothing
  // answers; "<error.message> (HTTP 409)" for API errors (kNotFound for
  // 404, kResourceExhausted for 503, else kFailedPrecondition); "unexpected
  // reply
  // ..." for a reply that is not a JSON object.
  StatusOr<JsonDoc> Call(const std::string& method, const std::string& path,
                         const std::string& body, int timeout_seconds);

  std::string server_;
  std::string token_;
};

// A positive decimal integer, or nullopt.
std::optional<int64_t> PositiveId(const std::string& s);
// A record's time (ms since the epoch) as "YYYY-MM-DD HH:MM" UTC.
std::string Time(int64_t ms);
// `s` percent-encoded for a query value.
std::string QueryValue(std::string_view s);
// The message for a reply that is not the record it should be.
std::string Unexpected(const Status& s);
// Prints an API error (or another failure), escaped; returns kExitFailure.
int ApiFail(const Context& ctx, const Status& s);
// Declares --server URL on `p`.
void ServerFlag(FlagParser* p, std::string* server);

}  // namespace trench::cli
