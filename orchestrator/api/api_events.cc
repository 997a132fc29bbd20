// GET /api/v1/events: the feed of bug and commit events, and its long poll
// (?wait=): waiters are PendingResponses the HTTP server keeps, woken by
// the store's event bell (event_bell.h).
#include <algorithm>
#include <set>

#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/api_handlers.h"
#include "orchestrator/api/api_query.h"
#include "orchestrator/api/event_waiters.h"
#include "orchestrator/store/event_bell.h"

namespace trench::orchestrator {

// One client waiting for events after its since=.
class EventsPending : public PendingResponse {
 public:
  EventsPending(std::shared_ptr<EventWaiters> waiters, ApiRequest request,
                std::chrono::steady_clock::time_point deadline)
      : PendingResponse(deadline),
        waiters_(std::move(waiters)),
        request_(std::move(request)) {}
  ~EventsPending() override {
    std::lock_guard<std::mutex> lock(waiters_->set_mu);
    waiters_->waiting.erase(this);
  }

  std::optional<ApiResponse> Poll(bool final) override {
    std::lock_guard<std::mutex> alive(waiters_->alive_mu);
    if (waiters_->handlers == nullptr) {
      return ErrorResponse(503, "unavailable", "the daemon is stopping");
    }
    ApiHandlers* h = waiters_->handlers;
    std::lock_guard<std::mutex> lock(h->mu_);
    bool any = false;
    ApiResponse r = h->EventsNow(request_, &any);
    if (any || final || r.status != 200) return r;
    return std::nullopt;
  }

 private:
  std::shared_ptr<EventWaiters> waiters_;
  const ApiRequest request_;
};

ApiHandlers::ApiHandlers(Store* store, ApiOptions options)
    : store_(store),
      options_(std::move(options)),
      waiters_(std::make_shared<EventWaiters>()) {
  waiters_->handlers = this;
  std::weak_ptr<EventWaiters> weak = waiters_;
  waiters_->bell = SubscribeEventBell([weak] {
    std::shared_ptr<EventWaiters> w = weak.lock();
    if (w == nullptr) return;
    std::lock_guard<std::mutex> lock(w->set_mu);
    for (Wakeable* p : w->waiting) p->Wake();
  });
}

ApiHandlers::~ApiHandlers() {
  UnsubscribeEventBell(waiters_->bell);
  std::lock_guard<std::mutex> alive(waiters_->alive_mu);
  waiters_->handlers = nullptr;
}

ApiResponse ApiHandlers::ListEvents(const ApiRequest& request) {
  StatusOr<int64_t> wait = QueryInt(request, "wait", 0, 0);
  if (!wait.ok()) return StatusResponse(wait.status());
  bool any = false;
  ApiResponse now = EventsNow(request, &any);
  if (any || *wait == 0 || now.status != 200) return now;
  const int64_t seconds =
      std::min<int64_t>(*wait, std::max(options_.max_wait_seconds, 0));
  if (seconds == 0) return now;
  auto pending = std::make_shared<EventsPending>(
      waiters_, request,
      std::chrono::steady_clock::now() + std::chrono::seconds(seconds));
  {
    std::lock_guard<std::mutex> lock(waiters_->set_mu);
    if (static_cast<int>(waiters_->waiting.size()) >= options_.max_waiters) {
      ApiResponse r = ErrorResponse(
          503, "unavailable",
          std::to_string(options_.max_waiters) +
              " clients are already waiting for events (the most at once); "
              "try again shortly, or without wait=");
      r.headers.emplace_back("Retry-After", "1");
      return r;
    }
    waiters_->waiting.insert(pending.get());
  }
  ApiResponse r;
  r.pending = std::move(pending);
  return r;
}

ApiResponse ApiHandlers::EventsNow(const ApiRequest& request, bool* any) {
  *any = false;
  StatusOr<int64_t> since = QueryInt(request, "since", 0, 0);
  if (!since.ok()) return StatusResponse(since.status());
  StatusOr<int> limit = QueryLimit(request, options_);
  if (!limit.ok()) return StatusResponse(limit.status());
  StatusOr<EventFilter> filter = ParseEventFilter(request);
  if (!filter.ok()) return StatusResponse(filter.status());
  StatusOr<EventFeed> feed = FeedAfter(*since, *limit, *filter);
  if (!feed.ok()) return StatusResponse(feed.status());
  *any = !feed->events.empty();
  return JsonResponse(200, ToJson(*feed));
}

StatusOr<EventFilter> ParseEventFilter(const ApiRequest& request) {
  EventFilter f;
  if (request.query.count("bug")) {
    ASSIGN_OR_RETURN(f.bug, QueryInt(request, "bug", 0, 1));
  }
  if (auto it = request.query.find("commit"); it != request.query.end()) {
    if (f.bug) {
      return InvalidArgument(
          "give query parameter 'bug' or 'commit', not both");
    }
    f.commit = it->second;
  }
  return f;
}

StatusOr<EventFeed> ApiHandlers::FeedAfter(int64_t since, int limit,
                                           const EventFilter& filter) {
  // Both kinds share one id sequence: the first `limit` of their merge
  // are among the first `limit` of each.
  std::vector<Event> events;
  std::vector<CommitEvent> commits;
  if (!filter.commit) {
    ASSIGN_OR_RETURN(events, store_->ListEvents(filter.bug, since, limit));
  }
  if (!filter.bug) {
    ASSIGN_OR_RETURN(commits,
                     store_->ListCommitEvents(filter.commit, since, limit));
  }
  EventFeed feed;
  feed.next = since;
  size_t b = 0, c = 0;
  while (static_cast<int>(feed.events.size()) < limit &&
         (b < events.size() || c < commits.size())) {
    if (c == commits.size() ||
        (b < events.size() && events[b].id < commits[c].id)) {
      feed.next = events[b].id;
      feed.events.push_back(std::move(events[b++]));
    } else {
      feed.next = commits[c].id;
      feed.events.push_back(std::move(commits[c++]));
    }
  }
  return feed;
}

}  // namespace trench::orchestrator
