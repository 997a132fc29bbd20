// GET /api/v1/events/stream: the event feed as server-sent events. Each
// client is a StreamResponse the HTTP server keeps (no thread, no store
// connection per client), woken by the store's event bell like the long
// polls of api_events.cc.
#include <type_traits>
#include <variant>

#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/api_handlers.h"
#include "orchestrator/api/api_query.h"
#include "orchestrator/api/event_waiters.h"
#include "orchestrator/store/event_bell.h"

namespace trench::orchestrator {
namespace {

// Events read from the store per Next(): a stream far behind catches up
// over several writes instead of one huge one.
constexpr int kBatch = 200;

// "id: N\nevent: bug|commit\ndata: {json}\n\n" (compact JSON holds no
// newline, so one data line is the whole event).
std::string SseEvent(const EventFeed::Entry& entry) {
  return std::visit(
      [](const auto& e) {
        const bool bug = std::is_same_v<std::decay_t<decltype(e)>, Event>;
        return "id: " + std::to_string(e.id) +
               "\nevent: " + (bug ? "bug" : "commit") +
               "\ndata: " + ToJson(e).dump() + "\n\n";
      },
      entry);
}

}  // namespace

// One client's stream of the events after its cursor.
class EventStream : public StreamResponse {
 public:
  EventStream(std::shared_ptr<EventWaiters> waiters, int64_t since,
              EventFilter filter)
      : waiters_(std::move(waiters)),
        since_(since),
        filter_(std::move(filter)) {}
  ~EventStream() override {
    std::lock_guard<std::mutex> lock(waiters_->set_mu);
    waiters_->waiting.erase(this);
    --waiters_->streams;
  }

  std::string Next(bool final, bool* done) override {
    // First: the reconnection delay, and where the stream starts (so a
    // client knows it is subscribed).
    std::string out;
    if (!started_) {
      started_ = true;
      out = "retry: 3000\n: events after " + std::to_string(since_) + "\n\n";
    }
    std::lock_guard<std::mutex> alive(waiters_->alive_mu);
    ApiHandlers* h = waiters_->handlers;
    if (h == nullptr) {
      *done = true;
      return out;
    }
    std::lock_guard<std::mutex> lock(h->mu_);
    StatusOr<EventFeed> feed = h->FeedAfter(since_, kBatch, filter_);
    if (!feed.ok()) {
      // The store is busy or failing: say so and end; the client
      // reconnects with Last-Event-ID and loses nothing.
      *done = true;
      JsonDoc e = JsonDoc::object();
      e["message"] = feed.status().message();
      return out + "event: error\ndata: " + e.dump() + "\n\n";
    }
    for (const EventFeed::Entry& entry : feed->events) out += SseEvent(entry);
    since_ = feed->next;
    *done = final;
    return out;
  }

 private:
  std::shared_ptr<EventWaiters> waiters_;
  // Only touched by the server's polls, one at a time.
  int64_t since_;
  bool started_ = false;
  const EventFilter filter_;
};

ApiResponse ApiHandlers::StreamEvents(const ApiRequest& request) {
  StatusOr<EventFilter> filter = ParseEventFilter(request);
  if (!filter.ok()) return StatusResponse(filter.status());
  // Where to start: since=, else the Last-Event-ID a reconnecting
  // EventSource sends, else now (only events written from here on).
  int64_t since = 0;
  if (request.query.count("since")) {
    StatusOr<int64_t> s = QueryInt(request, "since", 0, 0);
    if (!s.ok()) return StatusResponse(s.status());
    since = *s;
  } else if (auto it = request.headers.find("last-event-id");
             it != request.headers.end()) {
    std::optional<int64_t> id = ParsePositive(it->second);
    if (!id && it->second != "0") {
      return ErrorResponse(400, "bad_request",
                           "header Last-Event-ID must be an event id (a "
                           "non-negative integer)");
    }
    since = id.value_or(0);
  } else {
    StatusOr<int64_t> last = store_->LastEventId();
    if (!last.ok()) return StatusResponse(last.status());
    since = *last;
  }
  std::shared_ptr<EventStream> stream;
  {
    std::lock_guard<std::mutex> lock(waiters_->set_mu);
    if (waiters_->streams >= options_.max_streams) {
      ApiResponse r = ErrorResponse(
          503, "unavailable",
          std::to_string(options_.max_streams) +
              " event streams are open (the most at once); try again "
              "shortly, or poll /api/v1/events?wait=");
      r.headers.emplace_back("Retry-After", "5");
      return r;
    }
    stream = std::make_shared<EventStream>(waiters_, since, *filter);
    ++waiters_->streams;
    waiters_->waiting.insert(stream.get());
  }
  ApiResponse r;
  r.content_type = "text/event-stream; charset=utf-8";
  r.headers.emplace_back("Cache-Control", "no-cache, no-store");
  r.headers.emplace_back("X-Accel-Buffering", "no");
  r.stream = std::move(stream);
  return r;
}

}  // namespace trench::orchestrator
