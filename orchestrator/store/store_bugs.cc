// Store: bugs, their lifecycle events, cases and target runs.
#include <spdlog/spdlog.h>

#include "base/log_context.h"
#include "base/sha256.h"
#include "orchestrator/store/event_bell.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {
namespace {

constexpr char kBugColumns[] =
    "SELECT id, state, signature, title, created_ms, updated_ms, "
    "duplicate_of, flaky_rate, case_sha256, minimized_sha256, "
    "culprit_commit, fix_commit, details FROM bugs ";

StatusOr<BugState> StoredState(Db* db, const std::string& name,
                               const std::string& what) {
  StatusOr<BugState> state = ParseBugState(name);
  if (!state.ok()) {
    return IoError("store " + db->path() + ": " + what + ": " +
                   state.status().message());
  }
  return state;
}

StatusOr<Bug> ReadBug(Db* db, const Statement& st) {
  Bug bug;
  bug.id = st.ColumnInt64(0);
  std::string what = "bug " + std::to_string(bug.id);
  ASSIGN_OR_RETURN(bug.state, StoredState(db, st.ColumnText(1), what));
  bug.signature = st.ColumnText(2);
  bug.title = st.ColumnText(3);
  bug.created_ms = st.ColumnInt64(4);
  bug.updated_ms = st.ColumnInt64(5);
  bug.duplicate_of = st.ColumnOptionalInt64(6);
  bug.flaky_rate = st.ColumnOptionalDouble(7);
  bug.case_sha256 = st.ColumnOptionalText(8);
  bug.minimized_sha256 = st.ColumnOptionalText(9);
  bug.culprit_commit = st.ColumnOptionalText(10);
  bug.fix_commit = st.ColumnOptionalText(11);
  ASSIGN_OR_RETURN(bug.details, st.ColumnJson(12, "bugs.details of " + what));
  return bug;
}

StatusOr<std::vector<Bug>> ReadBugs(Db* db, Statement& st) {
  return ReadRows<Bug>(st, [&] { return ReadBug(db, st); });
}

StatusOr<bool> CaseExists(Db* db, const std::string& sha256) {
  ASSIGN_OR_RETURN(Statement st,
                   db->Prepare("SELECT 1 FROM cases WHERE sha256 = ?1"));
  return st.BindText(1, sha256).Step();
}

Status InsertEvent(Db* db, int64_t bug_id, std::optional<BugState> from,
                   BugState to, const std::string& actor, const Json& evidence,
                   int64_t now) {
  ASSIGN_OR_RETURN(Statement st,
                   db->Prepare("INSERT INTO events (bug_id, from_state, "
                               "to_state, actor, evidence, at_ms) VALUES "
                               "(?1, ?2, ?3, ?4, ?5, ?6)"));
  st.BindInt64(1, bug_id);
  if (from) {
    st.BindText(2, BugStateName(*from));
  } else {
    st.BindNull(2);
  }
  return st.BindText(3, BugStateName(to))
      .BindText(4, actor)
      .BindJson(5, evidence)
      .BindInt64(6, now)
      .Run();
}

// Checks the fields `to` needs; resolves a duplicate to the root of its
// duplicate chain so that duplicate_of always names a non-duplicate bug.
Status CheckTransitionFields(Store* store, const Bug& bug, BugState to,
                             TransitionFields* fields) {
  const std::string what = "bug " + std::to_string(bug.id);
  if (fields->flaky_rate &&
      !(*fields->flaky_rate >= 0 && *fields->flaky_rate <= 1)) {
    return InvalidArgument(what + ": flaky rate " +
                           std::to_string(*fields->flaky_rate) +
                           " is not in [0, 1]");
  }
  // What the orchestrator must have checked, and so must record, before
  // the move (given now, or already on the bug).
  struct Needed {
    BugState state;
    bool present;
    const char* field;
  };
  const Needed needed[] = {
      {BugState::kFlaky, fields->flaky_rate.has_value(), "a flaky rate"},
      {BugState::kMinimized,
       fields->minimized_sha256.has_value() || bug.minimized_sha256,
       "the minimized case (minimized_sha256)"},
      {BugState::kCulpritFound,
       fields->culprit_commit.has_value() || bug.culprit_commit,
       "the culprit commit"},
      {BugState::kFixed, fields->fix_commit.has_value() || bug.fix_commit,
       "the fix commit"},
  };
  for (const Needed& n : needed) {
    if (to == n.state && !n.present) {
      return InvalidArgument(what + ": a move to " +
                             std::string(BugStateName(to)) + " needs " +
                             n.field);
    }
  }
  if (to != BugState::kDuplicate) {
    if (fields->duplicate_of) {
      return InvalidArgument(what +
                             ": duplicate_of is only set by a move to "
                             "duplicate");
    }
    return Status::Ok();
  }
  if (!fields->duplicate_of) {
    return InvalidArgument(what + ": a move to duplicate needs duplicate_of");
  }
  int64_t target = *fields->duplicate_of;
  for (int hops = 0;; ++hops) {
    if (target == bug.id || hops > 1000) {
      return FailedPrecondition(what + " cannot be a duplicate of itself");
    }
    StatusOr<Bug> other = store->GetBug(target);
    if (!other.ok() && other.status().code() == StatusCode::kNotFound) {
      return FailedPrecondition(what + ": duplicate_of names bug " +
                                std::to_string(target) +
                                ", which does not exist");
    }
    if (!other.ok()) return other.status();
    if (other->state != BugState::kDuplicate || !other->duplicate_of) break;
    target = *other->duplicate_of;
  }
  fields->duplicate_of = target;
  return Status::Ok();
}

}  // namespace

// The bug and its creation event. REQUIRES: in a transaction.
StatusOr<int64_t> Store::InsertBug(const NewBug& bug, const std::string& actor,
                                   const Json& evidence, int64_t now) {
  if (bug.case_sha256) {
    ASSIGN_OR_RETURN(bool exists, CaseExists(db(), *bug.case_sha256));
    if (!exists) {
      return FailedPrecondition("new bug: case " + *bug.case_sha256 +
                                " is not stored");
    }
  }
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("INSERT INTO bugs (state, signature, title, created_ms, "
                    "updated_ms, case_sha256, details) VALUES (?1, ?2, ?3, "
                    "?4, ?4, ?5, ?6)"));
  RETURN_IF_ERROR(st.BindText(1, BugStateName(BugState::kNew))
                      .BindText(2, bug.signature)
                      .BindText(3, bug.title)
                      .BindInt64(4, now)
                      .BindOptionalText(5, bug.case_sha256)
                      .BindJson(6, bug.details)
                      .Run());
  const int64_t id = db()->LastInsertRowId();
  RETURN_IF_ERROR(InsertEvent(db(), id, std::nullopt, BugState::kNew, actor,
                              evidence, now));
  return id;
}

StatusOr<int64_t> Store::CreateBug(const NewBug& bug, const std::string& actor,
                                   const Json& evidence) {
  int64_t id = 0;
  RETURN_IF_ERROR(InTransaction(db(), [&]() -> Status {
    ASSIGN_OR_RETURN(id, InsertBug(bug, actor, evidence, clock_->NowMillis()));
    return Status::Ok();
  }));
  RingEventBell();
  return id;
}

StatusOr<CreatedBug> Store::CreateBugOnce(const NewBug& bug,
                                          const std::string& actor,
                                          const Json& evidence,
                                          const IdempotencyKey& key) {
  CreatedBug out;
  RETURN_IF_ERROR(InTransaction(db(), [&]() -> Status {
    const int64_t now = clock_->NowMillis();
    ASSIGN_OR_RETURN(Statement expire,
                     db()->Prepare("DELETE FROM idempotency_keys WHERE "
                                   "created_ms <= ?1"));
    RETURN_IF_ERROR(expire.BindInt64(1, now - key.retention_ms).Run());
    ASSIGN_OR_RETURN(Statement seen,
                     db()->Prepare("SELECT request_sha256, bug_id FROM "
                                   "idempotency_keys WHERE key = ?1"));
    ASSIGN_OR_RETURN(bool row, seen.BindText(1, key.key).Step());
    if (row) {
      out.id = seen.ColumnInt64(1);
      if (seen.ColumnText(0) != key.request_sha256) {
        return FailedPrecondition(
            "Idempotency-Key '" + key.key +
            "' was already used for a different report (bug " +
            std::to_string(out.id) + "); use a new key for a new report");
      }
      out.replayed = true;
      return Status::Ok();
    }
    ASSIGN_OR_RETURN(out.id, InsertBug(bug, actor, evidence, now));
    ASSIGN_OR_RETURN(Statement put,
                     db()->Prepare("INSERT INTO idempotency_keys (key, "
                                   "request_sha256, bug_id, created_ms) "
                                   "VALUES (?1, ?2, ?3, ?4)"));
    return put.BindText(1, key.key)
        .BindText(2, key.request_sha256)
        .BindInt64(3, out.id)
        .BindInt64(4, now)
        .Run();
  }));
  if (!out.replayed) RingEventBell();
  return out;
}

StatusOr<Bug> Store::GetBug(int64_t id) {
  ASSIGN_OR_RETURN(Statement st,
                   db()->Prepare(std::string(kBugColumns) + "WHERE id = ?1"));
  ASSIGN_OR_RETURN(bool row, st.BindInt64(1, id).Step());
  if (!row) return NotFound("no bug " + std::to_string(id));
  return ReadBug(db(), st);
}

StatusOr<std::vector<Bug>> Store::GetBugs(const std::vector<int64_t>& ids) {
  if (ids.empty()) return std::vector<Bug>();
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare(std::string(kBugColumns) +
                    "WHERE id IN (SELECT value FROM json_each(?1)) "
                    "ORDER BY id"));
  Json list = Json::MakeArray();
  for (int64_t id : ids) list.push_back(id);
  st.BindText(1, list.Dump());
  return ReadBugs(db(), st);
}

StatusOr<std::vector<Bug>> Store::ListBugs(std::optional<BugState> state,
                                           int64_t after_id, int limit) {
  ASSIGN_OR_RETURN(Statement st,
                   db()->Prepare(std::string(kBugColumns) +
                                 "WHERE id > ?1 AND (?2 IS NULL OR state = ?2) "
                                 "ORDER BY id LIMIT ?3"));
  st.BindInt64(1, after_id).BindInt64(3, limit);
  if (state) st.BindText(2, BugStateName(*state));
  return ReadBugs(db(), st);
}

StatusOr<std::vector<Bug>> Store::ListBugsBySignature(
    const std::string& signature) {
  ASSIGN_OR_RETURN(Statement st,
                   db()->Prepare(std::string(kBugColumns) +
                                 "WHERE signature = ?1 ORDER BY id"));
  st.BindText(1, signature);
  return ReadBugs(db(), st);
}

StatusOr<std::vector<Bug>> Store::ListBugsMentioning(
    const std::string& signature, const std::string& text) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare(std::string(kBugColumns) +
                    "WHERE signature = ?1 OR instr(details, ?2) > 0 "
                    "ORDER BY id"));
  st.BindText(1, signature).BindText(2, Json(text).Dump());
  return ReadBugs(db(), st);
}

StatusOr<std::optional<Bug>> Store::FindOpenBugBySignature(
    const std::string& signature) {
  ASSIGN_OR_RETURN(std::vector<Bug> bugs, ListBugsBySignature(signature));
  for (Bug& bug : bugs) {
    if (IsOpen(bug.state)) return std::optional<Bug>(std::move(bug));
  }
  return std::optional<Bug>();
}

Status Store::NoteBug(int64_t id, const std::string& actor,
                      const Json& evidence, const Json& details) {
  return InTransaction(db(), [&]() -> Status {
    ASSIGN_OR_RETURN(Bug bug, GetBug(id));
    RETURN_IF_ERROR(SetBugDetails(id, details));
    return InsertEvent(db(), id, bug.state, bug.state, actor, evidence,
                       clock_->NowMillis());
  });
}

StatusOr<Bug> Store::TransitionBug(int64_t id, BugState to,
                                   const std::string& actor,
                                   const Json& evidence,
                                   const TransitionFields& given) {
  TransitionFields fields = given;
  BugState from = to;
  RETURN_IF_ERROR(InTransaction(db(), [&]() -> Status {
    // Read inside the write transaction: no other connection can move the
    // bug between the check and the write.
    ASSIGN_OR_RETURN(Bug bug, GetBug(id));
    from = bug.state;
    if (fields.edit_details) {  // First: it may refuse with its own reason.
      Json details = fields.details ? *fields.details : bug.details;
      RETURN_IF_ERROR(fields.edit_details(bug, &details));
      fields.details = std::move(details);
    }
    RETURN_IF_ERROR(CheckTransition(bug.state, to)
                        .WithContext("bug " + std::to_string(id)));
    RETURN_IF_ERROR(CheckTransitionFields(this, bug, to, &fields));
    for (const auto* c : {&fields.minimized_sha256, &fields.case_sha256}) {
      if (!*c) continue;
      ASSIGN_OR_RETURN(bool exists, CaseExists(db(), **c));
      if (!exists) {
        return FailedPrecondition("bug " + std::to_string(id) + ": case " +
                                  **c + " is not stored");
      }
    }
    const int64_t now = clock_->NowMillis();
    ASSIGN_OR_RETURN(
        Statement st,
        db()->Prepare("UPDATE bugs SET state = ?2, updated_ms = ?3, "
                      "duplicate_of = CASE WHEN ?2 = 'new' THEN NULL ELSE "
                      "coalesce(?4, duplicate_of) END, "
                      "flaky_rate = coalesce(?5, flaky_rate), "
                      "signature = coalesce(?6, signature), "
                      "minimized_sha256 = coalesce(?7, minimized_sha256), "
                      "culprit_commit = coalesce(?8, culprit_commit), "
                      "fix_commit = coalesce(?9, fix_commit), "
                      "details = coalesce(?10, details), "
                      "case_sha256 = coalesce(?11, case_sha256) WHERE id = "
                      "?1"));
    st.BindInt64(1, id)
        .BindText(2, BugStateName(to))
        .BindInt64(3, now)
        .BindOptionalInt64(4, fields.duplicate_of)
        .BindOptionalDouble(5, fields.flaky_rate)
        .BindOptionalText(6, fields.signature)
        .BindOptionalText(7, fields.minimized_sha256)
        .BindOptionalText(8, fields.culprit_commit)
        .BindOptionalText(9, fields.fix_commit)
        .BindOptionalText(11, fields.case_sha256);
    if (fields.details) {
      st.BindJson(10, *fields.details);
    } else {
      st.BindNull(10);
    }
    RETURN_IF_ERROR(st.Run());
    return InsertEvent(db(), id, bug.state, to, actor, evidence, now);
  }));
  Json f = Json::MakeObject();
  f["bug"] = id;
  f["from"] = BugStateName(from);
  f["to"] = BugStateName(to);
  f["actor"] = actor;
  LogScope scope(f);
  spdlog::info("bug {}: {} -> {}", id, BugStateName(from), BugStateName(to));
  RingEventBell();
  return GetBug(id);
}

StatusOr<std::vector<Event>> Store::ListEvents(std::optional<int64_t> bug_id,
                                               int64_t after_id, int limit) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("SELECT id, bug_id, from_state, to_state, actor, "
                    "evidence, at_ms FROM events WHERE id > ?1 AND bug_id IS "
                    "NOT NULL AND (?2 IS NULL OR bug_id = ?2) ORDER BY id "
                    "LIMIT ?3"));
  st.BindInt64(1, after_id).BindOptionalInt64(2, bug_id).BindInt64(3, limit);
  return ReadRows<Event>(st, [&]() -> StatusOr<Event> {
    Event e;
    e.id = st.ColumnInt64(0);
    e.bug_id = st.ColumnInt64(1);
    const std::string what = "event " + std::to_string(e.id);
    if (!st.IsNull(2)) {
      ASSIGN_OR_RETURN(e.from, StoredState(db(), st.ColumnText(2), what));
    }
    ASSIGN_OR_RETURN(e.to, StoredState(db(), st.ColumnText(3), what));
    e.actor = st.ColumnText(4);
    ASSIGN_OR_RETURN(e.evidence,
                     st.ColumnJson(5, "events.evidence of " + what));
    e.at_ms = st.ColumnInt64(6);
    return e;
  });
}

StatusOr<std::map<BugState, int64_t>> Store::CountBugsByState() {
  std::map<BugState, int64_t> counts;
  for (BugState s : AllBugStates()) counts[s] = 0;
  ASSIGN_OR_RETURN(Statement st, db()->Prepare("SELECT state, count(*) FROM "
                                               "bugs GROUP BY state"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return counts;
    ASSIGN_OR_RETURN(BugState s,
                     StoredState(db(), st.ColumnText(0), "bugs.state"));
    counts[s] = st.ColumnInt64(1);
  }
}

StatusOr<bool> Store::PutCase(const std::string& sha256,
                              const std::string& path, const Json& origin) {
  if (!IsLowerHex(sha256, 64)) {
    return InvalidArgument("case address '" + sha256 +
                           "' is not 64 lowercase hex digits");
  }
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("INSERT INTO cases (sha256, path, origin, created_ms) "
                    "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (sha256) DO NOTHING"));
  RETURN_IF_ERROR(st.BindText(1, sha256)
                      .BindText(2, path)
                      .BindJson(3, origin)
                      .BindInt64(4, clock_->NowMillis())
                      .Run());
  return db()->Changes() == 1;
}

StatusOr<Case> Store::GetCase(const std::string& sha256) {
  ASSIGN_OR_RETURN(Statement st,
                   db()->Prepare("SELECT sha256, path, origin, created_ms "
                                 "FROM cases WHERE sha256 = ?1"));
  ASSIGN_OR_RETURN(bool row, st.BindText(1, sha256).Step());
  if (!row) return NotFound("no case " + sha256);
  Case c;
  c.sha256 = st.ColumnText(0);
  c.path = st.ColumnText(1);
  ASSIGN_OR_RETURN(c.origin, st.ColumnJson(2, "cases.origin of " + sha256));
  c.created_ms = st.ColumnInt64(3);
  return c;
}

StatusOr<int64_t> Store::AddRun(const std::string& case_sha256,
                                std::optional<int64_t> bug_id,
                                const std::string& commit_sha,
                                const Json& verdict, double seconds) {
  ASSIGN_OR_RETURN(bool exists, CaseExists(db(), case_sha256));
  if (!exists) {
    return FailedPrecondition("run: case " + case_sha256 + " is not stored");
  }
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("INSERT INTO runs (case_sha256, bug_id, commit_sha, "
                    "verdict, seconds, created_ms) VALUES (?1, ?2, ?3, ?4, "
                    "?5, ?6)"));
  RETURN_IF_ERROR(st.BindText(1, case_sha256)
                      .BindOptionalInt64(2, bug_id)
                      .BindText(3, commit_sha)
                      .BindJson(4, verdict)
                      .BindDouble(5, seconds)
                      .BindInt64(6, clock_->NowMillis())
                      .Run());
  return db()->LastInsertRowId();
}

StatusOr<std::vector<Run>> Store::ListRunsForCase(
    const std::string& case_sha256) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("SELECT id, case_sha256, bug_id, commit_sha, verdict, "
                    "seconds, created_ms FROM runs WHERE case_sha256 = ?1 "
                    "ORDER BY id"));
  st.BindText(1, case_sha256);
  return ReadRows<Run>(st, [&]() -> StatusOr<Run> {
    Run r;
    r.id = st.ColumnInt64(0);
    r.case_sha256 = st.ColumnText(1);
    r.bug_id = st.ColumnOptionalInt64(2);
    r.commit_sha = st.ColumnText(3);
    ASSIGN_OR_RETURN(r.verdict, st.ColumnJson(4, "runs.verdict of run " +
                                                     std::to_string(r.id)));
    r.seconds = st.ColumnDouble(5);
    r.created_ms = st.ColumnInt64(6);
    return r;
  });
}

StatusOr<int64_t> Store::CountRuns() {
  ASSIGN_OR_RETURN(Statement st, db()->Prepare("SELECT count(*) FROM runs"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt64(0) : 0;
}

}  // namespace trench::orchestrator
