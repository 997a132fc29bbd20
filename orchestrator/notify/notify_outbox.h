// The notifications' durable outbox (store table notify_outbox, migration
// 11): what makes a SIGKILL at any moment lose no notification and never
// make a second delivery of an (event, destination) pair.
//
// - DispatchEvents reads the bug events after the cursor (meta key
//   "notify.cursor"), writes one pending row per (event, destination that
//   wants its kind) with its payload rendered, and advances the cursor,
//   all in ONE transaction: after a crash either all of it is there or
//   none (then the same events are read again). The unique (event_id,
//   destination) makes a second row impossible anyway.
// - A row's delivery_id ("ev<event id>-<12 hex of sha256(destination)>")
//   is fixed when it is written; each send of the row carries it.
// - RecordAttempt writes the outcome of one send: sent; failed (refused
//   for good); pending again with next_attempt_ms = now + backoff *
//   2^(attempts-1) (at most an hour); or dead once attempts reach
//   max_attempts or the row is older than max_age_seconds. A crash
//   between a send and its record leaves the row pending: it is sent
//   again, with the same delivery id (receivers drop repeats by it).
//
// Events before the cursor existed are not sent unless `backfill` (a
// store that had events before notifications were configured starts at
// its newest event). Commit events are not notified.
//
// Errors: the store's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "orchestrator/notify/notify_send.h"
#include "orchestrator/notify/notify_setup.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

struct OutboxRow {
  int64_t id = 0;
  int64_t event_id = 0;
  std::string destination;  // NotifyDestination::key.
  std::string channel;      // "webhook", "email".
  std::string kind;         // NotifyEventKind.
  std::string delivery_id;
  std::string payload;  // The webhook body or the whole mail.
  std::string state;    // pending, sent, failed, dead.
  int attempts = 0;
  int64_t next_attempt_ms = 0;
  std::string last_error;
  int64_t created_ms = 0;
};

// The delivery id of (event, destination).
std::string DeliveryId(int64_t event_id, const std::string& destination);

// Moves up to `batch` events into the outbox; returns how many events were
// read (< batch: caught up).
StatusOr<int> DispatchEvents(Store* store, const NotifySetup& setup,
                             bool backfill, int batch);

// Pending rows due at `now_ms`, oldest first, at most `limit`.
StatusOr<std::vector<OutboxRow>> DueDeliveries(Store* store, int64_t now_ms,
                                               int limit);

// Records one send of `row`; returns the row's new state.
StatusOr<std::string> RecordAttempt(Store* store, const NotifySetup& setup,
                                    const OutboxRow& row,
                                    const SendResult& result, int64_t now_ms);

// The rows in `state` ("" : all), in id order (tests, diagnosis).
StatusOr<std::vector<OutboxRow>> ListOutbox(Store* store,
                                            const std::string& state);

// When the next pending row is due (nullopt: none pending).
StatusOr<std::optional<int64_t>> NextDueMs(Store* store);

}  // namespace trench::orchestrator
