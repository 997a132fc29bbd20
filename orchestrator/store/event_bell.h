// The store's event bell: a process-wide notice that events (bugs' state
// changes, commits' events) were written, so that readers waiting for new
// events (GET /api/v1/events?wait=, api_handlers.h) wake at once instead
// of polling.
//
// The store rings it after each successful write that added an event row
// (Store::CreateBug, CreateBugOnce, TransitionBug, RecordCommitEvent), on
// the writer's thread, after the commit (RecordCommitEvent inside a
// caller's transaction rings before that transaction commits: waiters
// must re-check later too, so they keep polling as a fallback). Only
// writers in this process ring it: another process's writes are seen by
// the fallback polling only.
#pragma once

#include <cstdint>
#include <functional>

namespace trench::orchestrator {

// Calls every subscribed listener. Thread-safe.
void RingEventBell();

// Subscribes `listener`, called on the ringing thread after each ring,
// under the bell's lock: it must be quick and must not block or ring (post
// the work elsewhere). Returns the id for UnsubscribeEventBell.
// Thread-safe.
uint64_t SubscribeEventBell(std::function<void()> listener);
// Removes a listener; when it returns, the listener is not running and
// will not be called again. Unknown ids are ignored. Thread-safe.
void UnsubscribeEventBell(uint64_t id);

}  // namespace trench::orchestrator
