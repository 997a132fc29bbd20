#include "agents/llm_stream_fetch.h"

#include <string>
#include <utility>
#include <vector>

namespace trench::agents {

StatusOr<HttpResponse> FetchEventStream(
    HttpRequest request, std::string_view what,
    const std::function<Status(const SseEvent&)>& on_event,
    const std::function<bool()>& complete, std::string_view end_name) {
  constexpr size_t kMaxErrorBody = 64 << 10;
  SseParser parser;
  std::string raw;  // The start of the body, for error replies.
  Status error;
  std::vector<SseEvent> events;
  auto deliver = [&] {
    for (const SseEvent& e : events) {
      if (error.ok()) error = on_event(e);
    }
    events.clear();
    return error.ok();
  };
  request.on_body = [&](std::string_view chunk) {
    if (raw.size() < kMaxErrorBody) raw.append(chunk);
    if (error.ok()) error = parser.Feed(chunk, &events);
    return deliver();
  };
  auto resp = HttpFetch(request);
  if (resp.ok() && (resp->status < 200 || resp->status > 299)) {
    resp->body = std::move(raw);
    return resp;
  }
  const std::string context(what);
  if (!error.ok()) return error.WithContext(context);
  if (!resp.ok()) return resp;
  error = parser.Finish(&events);
  if (error.ok()) deliver();
  if (!error.ok()) return error.WithContext(context);
  if (!complete()) {
    return IoError(context + ": the stream ended before " +
                   std::string(end_name));
  }
  return resp;
}

}  // namespace trench::agents
