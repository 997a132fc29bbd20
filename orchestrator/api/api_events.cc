// GET /api/v1/events: the feed of bug and commit events, and its long poll
// (?wait=): waiters are PendingResponses the HTTP server keeps, woken by
// the store's event bell (event_bell.h).
#include <algorithm>
#include <set>

#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/api_handlers.h"
#include "orchestrator/api/api_query.h"
#include "orchestrator/store/event_bell.h"

namespace trench::orchestrator {

// Lock order: alive_mu, then ApiHandlers::mu_, then set_mu, then a
// PendingResponse's own lock.
struct EventWaiters {
  std::mutex alive_mu;              // Held while a waiter polls.
  ApiHandlers* handlers = nullptr;  // GUARDED_BY(alive_mu); null when gone.
  std::mutex set_mu;
  std::set<PendingResponse*> waiting;  // GUARDED_BY(set_mu)
  uint64_t bell = 0;                   // The bell subscription.
};

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
    for (PendingResponse* p : w->waiting) p->Wake();
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
  std::optional<int64_t> bug;
  if (request.query.count("bug")) {
    StatusOr<int64_t> b = QueryInt(request, "bug", 0, 1);
    if (!b.ok()) return StatusResponse(b.status());
    bug = *b;
  }
  std::optional<std::string> commit;
  if (auto it = request.query.find("commit"); it != request.query.end()) {
    if (bug) {
      return ErrorResponse(400, "bad_request",
                           "give query parameter 'bug' or 'commit', not both");
    }
    commit = it->second;
  }
  // Both kinds share one id sequence: the first `limit` of their merge
  // are among the first `limit` of each.
  std::vector<Event> events;
  std::vector<CommitEvent> commits;
  if (!commit) {
    StatusOr<std::vector<Event>> e = store_->ListEvents(bug, *since, *limit);
    if (!e.ok()) return StatusResponse(e.status());
    events = std::move(*e);
  }
  if (!bug) {
    StatusOr<std::vector<CommitEvent>> c =
        store_->ListCommitEvents(commit, *since, *limit);
    if (!c.ok()) return StatusResponse(c.status());
    commits = std::move(*c);
  }
  EventFeed feed;
  feed.next = *since;
  size_t b = 0, c = 0;
  while (static_cast<int>(feed.events.size()) < *limit &&
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
  *any = !feed.events.empty();
  return JsonResponse(200, ToJson(feed));
}

}  // namespace trench::orchestrator
