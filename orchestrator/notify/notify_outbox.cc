// The outbox's dispatcher and bookkeeping (notify_outbox.h).
#include "orchestrator/notify/notify_outbox.h"

#include <algorithm>
#include <cmath>

#include "base/sha256.h"
#include "orchestrator/notify/notify_mail.h"
#include "orchestrator/notify/notify_webhook.h"
#include "orchestrator/pipeline/triage_report.h"
#include "orchestrator/store/records_json.h"

namespace trench::orchestrator {
namespace {

constexpr char kCursorKey[] = "notify.cursor";
constexpr double kMaxBackoffSeconds = 3600;

StatusOr<std::optional<int64_t>> ReadCursor(Db* db) {
  ASSIGN_OR_RETURN(Statement st,
                   db->Prepare("SELECT value FROM meta WHERE key = ?1"));
  st.BindText(1, kCursorKey);
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<int64_t>();
  const std::string text = st.ColumnText(0);
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 0) {
    return IoError("store " + db->path() + ": meta " + kCursorKey + " is '" +
                   text + "', not an event id");
  }
  return std::optional<int64_t>(v);
}

Status WriteCursor(Db* db, int64_t cursor) {
  ASSIGN_OR_RETURN(Statement st,
                   db->Prepare("INSERT INTO meta (key, value) VALUES (?1, ?2) "
                               "ON CONFLICT (key) DO UPDATE SET value = "
                               "excluded.value"));
  return st.BindText(1, kCursorKey).BindText(2, std::to_string(cursor)).Run();
}

StatusOr<int64_t> NewestEventId(Db* db) {
  ASSIGN_OR_RETURN(Statement st,
                   db->Prepare("SELECT coalesce(max(id), 0) FROM events"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt64(0) : 0;
}

// The mail of `event` for bug `bug`: its report, and the patch for a
// proposal.
StatusOr<std::string> MailPayload(Store* store, const NotifyDestination& d,
                                  const Event& event, const Bug& bug,
                                  const std::string& delivery_id) {
  MailContent m;
  m.kind = NotifyEventKind(event);
  m.delivery_id = delivery_id;
  m.bug = bug;
  m.now_ms = store->clock()->NowMillis();
  ASSIGN_OR_RETURN(std::vector<Event> events,
                   store->ListEvents(bug.id, 0, 100000));
  ASSIGN_OR_RETURN(std::vector<Patch> patches, store->ListPatches(bug.id));
  if (!events.empty() && events.front().id != event.id) {
    m.thread_id = DeliveryId(events.front().id, d.key);
  }
  if (!patches.empty()) {
    m.diff = patches.back().diff;
    m.branch = patches.back().branch;
  }
  Json response = Json::MakeObject();
  response["bug"] = BugToJson(bug);
  Json ev = Json::MakeArray();
  for (const Event& e : events) ev.push_back(EventToJson(e));
  response["events"] = std::move(ev);
  Json ps = Json::MakeArray();
  for (const Patch& p : patches) ps.push_back(PatchToJson(p));
  response["patches"] = std::move(ps);
  StatusOr<std::string> report = BugReportText(response);
  m.report =
      report.ok() ? *report : "(no report: " + report.status().message() + ")";
  return RenderMail(d.email, m);
}

OutboxRow ReadRow(const Statement& st) {
  OutboxRow r;
  r.id = st.ColumnInt64(0);
  r.event_id = st.ColumnInt64(1);
  r.destination = st.ColumnText(2);
  r.channel = st.ColumnText(3);
  r.kind = st.ColumnText(4);
  r.delivery_id = st.ColumnText(5);
  r.payload = st.ColumnText(6);
  r.state = st.ColumnText(7);
  r.attempts = static_cast<int>(st.ColumnInt64(8));
  r.next_attempt_ms = st.ColumnInt64(9);
  r.last_error = st.ColumnText(10);
  r.created_ms = st.ColumnInt64(11);
  return r;
}

}  // namespace

std::string DeliveryId(int64_t event_id, const std::string& destination) {
  return "ev" + std::to_string(event_id) + "-" +
         Sha256Hex(destination).substr(0, 12);
}

StatusOr<int> DispatchEvents(Store* store, const NotifySetup& setup,
                             bool backfill, int batch) {
  Db* db = store->db();
  int read = 0;
  Status s = InTransaction(db, [&]() -> Status {
    ASSIGN_OR_RETURN(std::optional<int64_t> cursor, ReadCursor(db));
    if (!cursor) {
      int64_t start = 0;
      if (!backfill) {
        ASSIGN_OR_RETURN(start, NewestEventId(db));
      }
      cursor = start;
      RETURN_IF_ERROR(WriteCursor(db, start));
    }
    ASSIGN_OR_RETURN(std::vector<Event> events,
                     store->ListEvents(std::nullopt, *cursor, batch));
    read = static_cast<int>(events.size());
    const int64_t now = store->clock()->NowMillis();
    for (const Event& e : events) {
      const std::string kind = NotifyEventKind(e);
      std::optional<Bug> bug;
      for (const NotifyDestination& d : setup.destinations) {
        if (kind.empty() || !d.Wants(kind)) continue;
        if (!bug) {
          ASSIGN_OR_RETURN(bug, store->GetBug(e.bug_id));
        }
        const std::string id = DeliveryId(e.id, d.key);
        std::string payload;
        if (d.channel == NotifyChannel::kWebhook) {
          payload = WebhookBody(id, e, *bug);
        } else {
          ASSIGN_OR_RETURN(payload, MailPayload(store, d, e, *bug, id));
        }
        ASSIGN_OR_RETURN(
            Statement st,
            db->Prepare("INSERT INTO notify_outbox (event_id, destination, "
                        "channel, kind, delivery_id, payload, state, "
                        "next_attempt_ms, created_ms, updated_ms) VALUES (?1, "
                        "?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?7, ?7) ON "
                        "CONFLICT (event_id, destination) DO NOTHING"));
        RETURN_IF_ERROR(st.BindInt64(1, e.id)
                            .BindText(2, d.key)
                            .BindText(3, NotifyChannelName(d.channel))
                            .BindText(4, kind)
                            .BindText(5, id)
                            .BindText(6, payload)
                            .BindInt64(7, now)
                            .Run());
      }
      cursor = e.id;
    }
    return WriteCursor(db, *cursor);
  });
  if (!s.ok()) return s.WithContext("notify dispatch");
  return read;
}

StatusOr<std::vector<OutboxRow>> DueDeliveries(Store* store, int64_t now_ms,
                                               int limit) {
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare(
          "SELECT id, event_id, destination, channel, kind, delivery_id, "
          "payload, state, attempts, next_attempt_ms, last_error, created_ms "
          "FROM notify_outbox WHERE state = 'pending' AND next_attempt_ms <= "
          "?1 ORDER BY next_attempt_ms, id LIMIT ?2"));
  st.BindInt64(1, now_ms).BindInt64(2, limit);
  return ReadRows<OutboxRow>(
      st, [&]() -> StatusOr<OutboxRow> { return ReadRow(st); });
}

StatusOr<std::string> RecordAttempt(Store* store, const NotifySetup& setup,
                                    const OutboxRow& row,
                                    const SendResult& result, int64_t now_ms) {
  const int attempts = row.attempts + 1;
  std::string state = "pending";
  std::string error = result.detail;
  int64_t next = now_ms;
  switch (result.outcome) {
    case SendOutcome::kSent:
      state = "sent";
      break;
    case SendOutcome::kRefused:
      state = "failed";
      break;
    case SendOutcome::kRetry: {
      const double wait = std::min(
          kMaxBackoffSeconds,
          setup.backoff_seconds * std::ldexp(1.0, std::min(attempts - 1, 30)));
      next = now_ms + static_cast<int64_t>(wait * 1000);
      if (attempts >= setup.max_attempts) {
        state = "dead";
        error += " (gave up after " + std::to_string(attempts) + " attempts)";
      } else if (now_ms - row.created_ms >= setup.max_age_seconds * 1000) {
        state = "dead";
        error += " (gave up: older than max_age_seconds)";
      }
      break;
    }
  }
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare(
          "UPDATE notify_outbox SET state = ?2, attempts = ?3, "
          "next_attempt_ms = ?4, last_error = ?5, updated_ms = ?6 WHERE id = "
          "?1 AND state = 'pending'"));
  RETURN_IF_ERROR(st.BindInt64(1, row.id)
                      .BindText(2, state)
                      .BindInt64(3, attempts)
                      .BindInt64(4, next)
                      .BindText(5, error)
                      .BindInt64(6, now_ms)
                      .Run());
  return state;
}

StatusOr<std::vector<OutboxRow>> ListOutbox(Store* store,
                                            const std::string& state) {
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare(
          "SELECT id, event_id, destination, channel, kind, delivery_id, "
          "payload, state, attempts, next_attempt_ms, last_error, created_ms "
          "FROM notify_outbox WHERE ?1 = '' OR state = ?1 ORDER BY id"));
  st.BindText(1, state);
  return ReadRows<OutboxRow>(
      st, [&]() -> StatusOr<OutboxRow> { return ReadRow(st); });
}

StatusOr<std::optional<int64_t>> NextDueMs(Store* store) {
  ASSIGN_OR_RETURN(Statement st,
                   store->db()->Prepare("SELECT min(next_attempt_ms) FROM "
                                        "notify_outbox WHERE state = "
                                        "'pending'"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnOptionalInt64(0) : std::optional<int64_t>();
}

}  // namespace trench::orchestrator
