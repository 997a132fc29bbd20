// Store: the events of commits (commit_landed, build_ready). They live in
// the events table next to the bugs' state changes (migration 3).
#include "orchestrator/store/event_bell.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {
namespace {

constexpr std::string_view kCommitEventNames[] = {"commit_landed",
                                                  "build_ready"};

StatusOr<CommitEventKind> ParseCommitEvent(Db* db, const std::string& name,
                                           int64_t id) {
  for (size_t i = 0; i < std::size(kCommitEventNames); ++i) {
    if (kCommitEventNames[i] == name) return static_cast<CommitEventKind>(i);
  }
  return IoError("store " + db->path() + ": event " + std::to_string(id) +
                 " has an unknown commit event '" + name + "'");
}

}  // namespace

std::string_view CommitEventName(CommitEventKind kind) {
  return kCommitEventNames[static_cast<size_t>(kind)];
}

StatusOr<bool> Store::RecordCommitEvent(const std::string& commit_sha,
                                        CommitEventKind kind,
                                        const std::string& actor,
                                        const Json& evidence) {
  if (commit_sha.empty()) {
    return InvalidArgument("a commit event needs the commit");
  }
  // The conflict target names the partial unique index
  // events_once_per_commit: a second row for the pair is dropped.
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("INSERT INTO events (commit_sha, name, actor, evidence, "
                    "at_ms) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT "
                    "(commit_sha, name) WHERE commit_sha IS NOT NULL DO "
                    "NOTHING"));
  RETURN_IF_ERROR(st.BindText(1, commit_sha)
                      .BindText(2, CommitEventName(kind))
                      .BindText(3, actor)
                      .BindJson(4, evidence)
                      .BindInt64(5, clock_->NowMillis())
                      .Run()
                      .WithContext(std::string(CommitEventName(kind)) + " of " +
                                   commit_sha));
  const bool written = db()->Changes() == 1;
  if (written) RingEventBell();
  return written;
}

StatusOr<std::vector<CommitEvent>> Store::ListCommitEvents(
    std::optional<std::string> commit_sha, int64_t after_id, int limit) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("SELECT id, commit_sha, name, actor, evidence, at_ms "
                    "FROM events WHERE id > ?1 AND commit_sha IS NOT NULL "
                    "AND (?2 IS NULL OR commit_sha = ?2) ORDER BY id LIMIT "
                    "?3"));
  st.BindInt64(1, after_id).BindOptionalText(2, commit_sha).BindInt64(3, limit);
  return ReadRows<CommitEvent>(st, [&]() -> StatusOr<CommitEvent> {
    CommitEvent e;
    e.id = st.ColumnInt64(0);
    e.commit_sha = st.ColumnText(1);
    ASSIGN_OR_RETURN(e.kind, ParseCommitEvent(db(), st.ColumnText(2), e.id));
    e.actor = st.ColumnText(3);
    ASSIGN_OR_RETURN(e.evidence, st.ColumnJson(4, "events.evidence of event " +
                                                      std::to_string(e.id)));
    e.at_ms = st.ColumnInt64(5);
    return e;
  });
}

}  // namespace trench::orchestrator

namespace trench::orchestrator {

StatusOr<int64_t> Store::LastEventId() {
  ASSIGN_OR_RETURN(Statement st,
                   db()->Prepare("SELECT COALESCE(MAX(id), 0) FROM events"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return int64_t{0};
  return st.ColumnInt64(0);
}

}  // namespace trench::orchestrator
