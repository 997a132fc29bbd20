// A small blocking HTTP client over libcurl, for the LLM backends and the
// `trench` CLI. One request at a time per call; safe to call from several
// threads at once (each call uses its own curl handle).
//
// Errors (as values, never exceptions):
//   kInvalidArgument   a malformed URL or method;
//   kDeadlineExceeded  no complete answer within `timeout_seconds`
//                      ("POST http://127.0.0.1:8080/v1/chat/completions:
//                      timed out after 30 s");
//   kIoError           connection refused, reset, DNS, TLS: curl's own
//                      message after the method and URL.
//   kFailedPrecondition a redirect to another scheme, host or port
//                      ("... refused a redirect (307) from
//                      http://127.0.0.1:80 to http://localhost:81: ...");
//                      the headers carry credentials, so they go nowhere
//                      but the URL's own origin. Not transient.
//   kCancelled         `cancel` became true during the transfer ("POST
//                      <url>: cancelled"); the connection is dropped
//                      within about a second (curl's progress callback
//                      polls the flag at least once a second, also while
//                      the server sends nothing).
// Any HTTP status (2xx, 4xx, 5xx) is a response, not an error. Redirects
// within the origin are followed (at most 5; 303, and 301/302 of a POST,
// become a GET), with the same headers; a redirect's body is never passed
// to on_body.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace trench::agents {

struct HttpRequest {
  std::string method = "GET";  // GET, POST, PUT, DELETE.
  std::string url;
  // Extra headers, e.g. {"Authorization", "Bearer ..."}; never logged.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // Sent when not empty (or for POST/PUT).
  double timeout_seconds = 60;
  double connect_timeout_seconds = 10;
  // When set, body bytes are passed here as they arrive (for SSE) instead
  // of being collected in HttpResponse::body. Returning false aborts the
  // transfer (the call then fails with kIoError "aborted by the reader").
  std::function<bool(std::string_view chunk)> on_body;
  // When set and true (now or during the transfer), the request stops with
  // kCancelled. Not owned; must outlive the call.
  const std::atomic<bool>* cancel = nullptr;
};

struct HttpResponse {
  int status = 0;
  // Header names in lower case, in the order received (the last
  // response's headers when there were redirects or 100-continue).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // Empty when on_body took the bytes.

  // The first header with this (lower-case) name, or "".
  std::string Header(std::string_view lower_name) const;
};

StatusOr<HttpResponse> HttpFetch(const HttpRequest& request);

}  // namespace trench::agents
