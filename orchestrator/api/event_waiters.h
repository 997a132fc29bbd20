// The clients waiting for events: the long polls of GET /api/v1/events
// (api_events.cc) and the streams of GET /api/v1/events/stream
// (api_event_stream.cc), woken together by the store's event bell. Shared
// by ApiHandlers and the waiters (which may outlive it: the HTTP server
// holds them); internal to orchestrator/api.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>

#include "orchestrator/api/api_request.h"

namespace trench::orchestrator {

class ApiHandlers;

// Lock order: alive_mu, then ApiHandlers::mu_, then set_mu, then a
// Wakeable's own lock.
struct EventWaiters {
  std::mutex alive_mu;              // Held while a waiter polls.
  ApiHandlers* handlers = nullptr;  // GUARDED_BY(alive_mu); null when gone.
  std::mutex set_mu;
  // The long polls (PendingResponse) and the streams (StreamResponse).
  std::set<Wakeable*> waiting;  // GUARDED_BY(set_mu)
  int streams = 0;              // GUARDED_BY(set_mu)
  uint64_t bell = 0;            // The bell subscription.
};

}  // namespace trench::orchestrator
