// One streaming HTTP attempt for the LLM backends: the reply body goes
// through an SseParser and each event to `on_event`, as bytes arrive.
#pragma once

#include <functional>
#include <string_view>

#include "agents/http_client.h"
#include "agents/sse.h"
#include "base/status.h"

namespace trench::agents {

// Sends `request` (its on_body is replaced). A non-2xx reply is returned
// with its raw body (first 64 KiB) in HttpResponse::body, whatever the
// events said, so that the retry policy can classify it. For a 2xx reply:
// the first error of `on_event` (or of the SSE parser) stops the transfer
// and is returned with `what` as context; when the body ends and
// `complete()` is false, the result is kIoError "<what>: the stream ended
// before <end_name>" (retryable, like a dropped connection).
StatusOr<HttpResponse> FetchEventStream(
    HttpRequest request, std::string_view what,
    const std::function<Status(const SseEvent&)>& on_event,
    const std::function<bool()>& complete, std::string_view end_name);

}  // namespace trench::agents
