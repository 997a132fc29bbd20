// The HTTP API's request and response values, free of any HTTP library:
// http_server.cc turns Beast messages into ApiRequest and ApiResponse back
// into Beast messages; the handlers (api_handlers.h) see only these.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json_nlohmann.h"
#include "base/status.h"

namespace trench::orchestrator {

struct ApiRequest {
  std::string method;  // "GET", "POST", ... as sent.
  std::string path;    // Percent-decoded path, without the query.
  std::map<std::string, std::string> query;  // Decoded; last one wins.
  // Header names lowercased; values as sent.
  std::map<std::string, std::string> headers;
  std::string body;
};

struct ApiResponse;

// Something the server keeps without a thread and polls again when woken:
// the base of long polls and streams. Wake() is what the handler wires to
// what the answer waits for (the store's event bell).
class Wakeable {
 public:
  virtual ~Wakeable() = default;
  // The server's: what Wake() runs (it posts a poll to a handler thread).
  void SetWaker(std::function<void()> waker);
  // Asks the server to poll again soon; a no-op before SetWaker or after
  // the answer. Thread-safe, quick, never blocks on a poll.
  void Wake();

 private:
  std::mutex mu_;
  std::function<void()> waker_;  // GUARDED_BY(mu_)
};

// An answer that is not ready yet: a long poll (GET /api/v1/events?wait=).
// The server keeps the connection without a thread or a store connection
// per waiter: it calls Poll() again on a handler thread (where Handle
// runs) when Wake() is called, every poll interval as a fallback, and with
// `final` true at the deadline or when the server stops.
class PendingResponse : public Wakeable {
 public:
  explicit PendingResponse(std::chrono::steady_clock::time_point deadline)
      : deadline_(deadline) {}

  // The answer when ready, else nullopt. With `final`, never nullopt.
  virtual std::optional<ApiResponse> Poll(bool final) = 0;

  std::chrono::steady_clock::time_point deadline() const { return deadline_; }

 private:
  const std::chrono::steady_clock::time_point deadline_;
};

// An open-ended answer: server-sent events (GET /api/v1/events/stream).
// The server writes the status line and the headers (the ApiResponse's
// status, content type and headers, with no Content-Length and
// "Connection: close": the body ends when the connection does), then calls
// Next() on a handler thread when woken, every poll interval, and again at
// once after each chunk it wrote, and writes what Next returns. When
// nothing was written for the heartbeat interval it writes Heartbeat().
// The stream ends when Next sets *done, when the client is gone (a write
// fails or times out), or when the server stops (a last Next with `final`
// true, then the close). The server holds no thread or store connection
// per stream.
class StreamResponse : public Wakeable {
 public:
  // The next bytes to send ("" for nothing now); *done ends the stream
  // after them. With `final`, the stream ends after what it returns.
  virtual std::string Next(bool final, bool* done) = 0;
  // Bytes that keep an idle connection alive (an SSE comment).
  virtual std::string Heartbeat() const { return ": ping\n\n"; }
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // Extra ones.
  // When set, the rest is ignored: the answer comes from `pending`.
  std::shared_ptr<PendingResponse> pending;
  // When set, the status, content type and headers are sent, then the body
  // comes from `stream` (`body` is ignored).
  std::shared_ptr<StreamResponse> stream;
};

// Splits a request target ("/a%20b?x=1&y") into a decoded path and query
// map (a key without '=' maps to ""; '+' in the query means a space).
// Errors: InvalidArgument for a bad percent escape or a target that does
// not start with '/'.
Status ParseTarget(std::string_view target, std::string* path,
                   std::map<std::string, std::string>* query);

// A JSON response with `body` (compact, one line).
ApiResponse JsonResponse(int status, const JsonDoc& body);
// The ErrorBody {"error": {"code": code, "message": message}} with
// `status`.
ApiResponse ErrorResponse(int status, std::string_view code,
                          std::string_view message);
// The error response for a Status from the store or a validator:
// kInvalidArgument 400, kNotFound 404, kFailedPrecondition 409,
// kResourceExhausted 503 (store busy), anything else 500.
// REQUIRES: !status.ok().
ApiResponse StatusResponse(const Status& status);

// True when `a` equals `b`, in time independent of where they differ and
// of their lengths (both are hashed first).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace trench::orchestrator
