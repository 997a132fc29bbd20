#include "orchestrator/store/migrations.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>

namespace trench::orchestrator {
namespace {

// Times are milliseconds since the Unix epoch (see store_clock.h). JSON
// columns hold compact JSON text. Bug states are the names in
// lifecycle.def; they are checked when read, not by a CHECK constraint,
// so that adding a state needs no migration.
constexpr char kInitialSchema[] = R"sql(
CREATE TABLE cases (
  sha256 TEXT PRIMARY KEY CHECK (length(sha256) = 64),
  path TEXT NOT NULL,
  origin TEXT NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE TABLE bugs (
  id INTEGER PRIMARY KEY,
  state TEXT NOT NULL,
  signature TEXT NOT NULL DEFAULT '',
  title TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  duplicate_of INTEGER REFERENCES bugs(id),
  flaky_rate REAL CHECK (flaky_rate IS NULL OR
                         (flaky_rate >= 0 AND flaky_rate <= 1)),
  case_sha256 TEXT REFERENCES cases(sha256),
  minimized_sha256 TEXT REFERENCES cases(sha256),
  culprit_commit TEXT,
  fix_commit TEXT,
  details TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  case_sha256 TEXT NOT NULL REFERENCES cases(sha256),
  bug_id INTEGER REFERENCES bugs(id),
  commit_sha TEXT NOT NULL,
  verdict TEXT NOT NULL,
  seconds REAL NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  bug_id INTEGER NOT NULL REFERENCES bugs(id),
  from_state TEXT,
  to_state TEXT NOT NULL,
  actor TEXT NOT NULL,
  evidence TEXT NOT NULL,
  at_ms INTEGER NOT NULL
);
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL
    CHECK (state IN ('queued', 'leased', 'done', 'failed', 'parked')),
  priority INTEGER NOT NULL DEFAULT 0,
  dedup_key TEXT,
  lease_owner TEXT,
  lease_expires_ms INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL CHECK (max_attempts >= 1),
  not_before_ms INTEGER NOT NULL,
  result TEXT,
  last_error TEXT,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE TABLE builds (
  id INTEGER PRIMARY KEY,
  commit_sha TEXT NOT NULL,
  patch_hash TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL CHECK (status IN ('pending', 'ok', 'failed')),
  bin_dir TEXT NOT NULL DEFAULT '',
  log_tail TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  UNIQUE (commit_sha, patch_hash)
);
CREATE TABLE patches (
  id INTEGER PRIMARY KEY,
  bug_id INTEGER NOT NULL REFERENCES bugs(id),
  branch TEXT NOT NULL,
  diff TEXT NOT NULL,
  verified INTEGER NOT NULL DEFAULT 0 CHECK (verified IN (0, 1)),
  verification TEXT NOT NULL DEFAULT '{}',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE TABLE agent_sessions (
  id INTEGER PRIMARY KEY,
  bug_id INTEGER REFERENCES bugs(id),
  role TEXT NOT NULL,
  backend TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'running',
  started_ms INTEGER NOT NULL,
  ended_ms INTEGER
);
CREATE TABLE agent_messages (
  id INTEGER PRIMARY KEY,
  session_id INTEGER NOT NULL REFERENCES agent_sessions(id),
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  at_ms INTEGER NOT NULL
);
)sql";

// Lookups the daemon does on every finding, lease and page of the API.
// The partial unique index makes "one live job per dedup key" a database
// invariant, not only a check in JobQueue::Enqueue.
constexpr char kIndexes[] = R"sql(
CREATE INDEX bugs_by_signature ON bugs(signature, state);
CREATE INDEX bugs_by_state ON bugs(state);
CREATE INDEX events_by_bug ON events(bug_id, id);
CREATE INDEX runs_by_case ON runs(case_sha256, id);
CREATE INDEX jobs_ready ON jobs(state, priority DESC, id);
CREATE INDEX jobs_by_lease ON jobs(state, lease_expires_ms);
CREATE UNIQUE INDEX jobs_live_dedup ON jobs(dedup_key)
  WHERE dedup_key IS NOT NULL AND state IN ('queued', 'leased');
CREATE INDEX patches_by_bug ON patches(bug_id, id);
CREATE INDEX agent_messages_by_session ON agent_messages(session_id, id);
)sql";

// The events of a commit (commit_landed, build_ready) join the bugs' events
// in one table and one id sequence, so that the API's event feed is one
// ordered stream: a row is either a bug's state change (bug_id, to_state)
// or a commit's event (commit_sha, name), never both. SQLite cannot drop a
// NOT NULL, hence the rebuild. A commit has each event at most once: the
// partial unique index is what makes re-running a step after a crash
// (kill -9 between the row and the job's completion) write nothing twice.
constexpr char kCommitEvents[] = R"sql(
CREATE TABLE events_v3 (
  id INTEGER PRIMARY KEY,
  bug_id INTEGER REFERENCES bugs(id),
  from_state TEXT,
  to_state TEXT,
  commit_sha TEXT,
  name TEXT,
  actor TEXT NOT NULL,
  evidence TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  CHECK ((bug_id IS NOT NULL AND to_state IS NOT NULL AND
          commit_sha IS NULL AND name IS NULL) OR
         (bug_id IS NULL AND from_state IS NULL AND to_state IS NULL AND
          commit_sha IS NOT NULL AND name IS NOT NULL))
);
INSERT INTO events_v3 (id, bug_id, from_state, to_state, actor, evidence,
                       at_ms)
  SELECT id, bug_id, from_state, to_state, actor, evidence, at_ms FROM events;
DROP TABLE events;
ALTER TABLE events_v3 RENAME TO events;
CREATE INDEX events_by_bug ON events(bug_id, id);
CREATE UNIQUE INDEX events_once_per_commit ON events(commit_sha, name)
  WHERE commit_sha IS NOT NULL;
)sql";

// What an agent session cost in currency units (the config's LLM prices
// times its tokens), kept on the session so that the per-bug cost budget is
// one sum.
constexpr char kSessionCost[] = R"sql(
ALTER TABLE agent_sessions ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0
  CHECK (cost_usd >= 0);
)sql";

// What the target said about itself at a build's commit (its passes and
// emitters with their source files: triage/case/target_description.h),
// as JSON; '' until the build is described.
constexpr char kBuildTarget[] = R"sql(
ALTER TABLE builds ADD COLUMN target TEXT NOT NULL DEFAULT '';
)sql";

// Idempotency-Key uses of POST /api/v1/reports: the key, a hash of the
// report it came with, and the bug it made (written with the bug).
constexpr char kIdempotencyKeys[] = R"sql(
CREATE TABLE idempotency_keys (
  key TEXT PRIMARY KEY,
  request_sha256 TEXT NOT NULL,
  bug_id INTEGER NOT NULL REFERENCES bugs(id),
  created_ms INTEGER NOT NULL
);
)sql";

// A job's lost leases (the daemon died while it ran), counted apart from
// its failures: job_queue.h "Two budgets".
constexpr char kJobCrashes[] = R"sql(
ALTER TABLE jobs ADD COLUMN crashes INTEGER NOT NULL DEFAULT 0
  CHECK (crashes >= 0);
)sql";

// Idempotency-Key uses of POST /api/v1/jobs/{id}/retry: the key and the
// job it queued again (job_queue.h UnparkOnce). Apart from the reports'
// keys: a key is per endpoint.
constexpr char kJobRetryKeys[] = R"sql(
CREATE TABLE job_retry_keys (
  key TEXT PRIMARY KEY,
  job_id INTEGER NOT NULL REFERENCES jobs(id),
  created_ms INTEGER NOT NULL
);
)sql";

// Why an agent session fell back to the built-in brain: a class of
// orchestrator/pipeline/fallback_reasons.def ('' when it did not), for
// the metrics by role, backend and reason.
constexpr char kSessionFallbackReason[] = R"sql(
ALTER TABLE agent_sessions ADD COLUMN fallback_reason TEXT NOT NULL
  DEFAULT '';
)sql";

// The web dashboard's lookups (orchestrator/api/web_data.h): the bug list's
// filters on the localization's findings (expression indexes: a query must
// spell the expression exactly so; guarded by json_valid, so that a row
// whose details do not parse is still written, and read as an error
// naming it), a bug's runs and agent sessions, and the jobs by kind.
constexpr char kWebIndexes[] = R"sql(
CREATE INDEX bugs_by_pass ON bugs((CASE WHEN json_valid(details) THEN
  json_extract(details, '$.localization.findings.pass') END));
CREATE INDEX bugs_by_opcode ON bugs((CASE WHEN json_valid(details) THEN
  json_extract(details, '$.localization.findings.opcode') END));
CREATE INDEX bugs_by_fused_opcode ON bugs((CASE WHEN json_valid(details) THEN
  json_extract(details, '$.localization.findings.fused_opcode') END));
CREATE INDEX runs_by_bug ON runs(bug_id, id);
CREATE INDEX agent_sessions_by_bug ON agent_sessions(bug_id, id);
CREATE INDEX jobs_by_kind ON jobs(kind, state, id);
)sql";

// Notifications (orchestrator/notify/): the durable outbox. One row per
// (event, destination), written with the dispatcher's cursor (meta
// 'notify.cursor') in one transaction; a deliverer sends the pending rows
// and records the outcome. delivery_id is what receivers see, the same
// on every resend. state: pending, sent, failed (refused for good), dead
// (gave up: too many attempts or too old).
constexpr char kNotifyOutbox[] = R"sql(
CREATE TABLE notify_outbox (
  id INTEGER PRIMARY KEY,
  event_id INTEGER NOT NULL REFERENCES events(id),
  destination TEXT NOT NULL,
  channel TEXT NOT NULL,
  kind TEXT NOT NULL,
  delivery_id TEXT NOT NULL UNIQUE,
  payload TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_ms INTEGER NOT NULL,
  last_error TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  UNIQUE (event_id, destination)
);
CREATE INDEX notify_outbox_due ON notify_outbox (state, next_attempt_ms);
)sql";

// The Slurm executor's jobs (orchestrator/slurm/slurm_job_records.h): one
// row per run it started, named by its queue job and place, with the
// Slurm id once sbatch answered. A row not `finished` is a job a daemon
// started and did not see end: a restarted daemon reattaches to it.
constexpr char kExecutorJobs[] = R"sql(
CREATE TABLE executor_jobs (
  name TEXT PRIMARY KEY,
  job_id INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  slurm_id INTEGER,
  state TEXT NOT NULL,
  finished INTEGER NOT NULL DEFAULT 0 CHECK (finished IN (0, 1)),
  requeues INTEGER NOT NULL DEFAULT 0,
  submitted_ms INTEGER NOT NULL,
  started_ms INTEGER,
  ended_ms INTEGER
);
CREATE INDEX executor_jobs_live ON executor_jobs(finished, job_id);
)sql";

constexpr Migration kMigrations[] = {
    {1, "initial schema", kInitialSchema},
    {2, "lookup indexes and live-job dedup", kIndexes},
    {3, "commit events (commit_landed, build_ready)", kCommitEvents},
    {4, "agent session cost", kSessionCost},
    {5, "the target's description per build", kBuildTarget},
    {6, "idempotency keys of reports", kIdempotencyKeys},
    {7, "lost leases per job", kJobCrashes},
    {8, "idempotency keys of job retries", kJobRetryKeys},
    {9, "agent session fallback reason", kSessionFallbackReason},
    {10, "notification outbox", kNotifyOutbox},
    {11, "web dashboard indexes", kWebIndexes},
    {12, "Slurm executor jobs", kExecutorJobs},
};

Status EnsureMetaTable(Db* db) {
  return db->Exec(
      "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT "
      "NULL)");
}

Status WriteSchemaVersion(Db* db, int version) {
  ASSIGN_OR_RETURN(Statement st,
                   db->Prepare("INSERT INTO meta (key, value) VALUES "
                               "('schema_version', ?1) ON CONFLICT (key) DO "
                               "UPDATE SET value = excluded.value"));
  return st.BindText(1, std::to_string(version)).Run();
}

Status CheckNumbering(std::span<const Migration> migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return Internal("store migrations are misnumbered: entry " +
                      std::to_string(i) + " has version " +
                      std::to_string(migrations[i].version) + ", expected " +
                      std::to_string(i + 1));
    }
  }
  return Status::Ok();
}

}  // namespace

std::span<const Migration> StoreMigrations() { return kMigrations; }

int LatestSchemaVersion() { return StoreMigrations().back().version; }

StatusOr<int> ReadSchemaVersion(Db* db) {
  ASSIGN_OR_RETURN(Statement exists,
                   db->Prepare("SELECT 1 FROM sqlite_schema WHERE type = "
                               "'table' AND name = 'meta'"));
  ASSIGN_OR_RETURN(bool has_meta, exists.Step());
  if (!has_meta) return 0;
  ASSIGN_OR_RETURN(Statement st, db->Prepare("SELECT value FROM meta WHERE "
                                             "key = 'schema_version'"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return 0;
  std::string text = st.ColumnText(0);
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < 0 ||
      value > 1'000'000) {
    return IoError("store " + db->path() + ": meta.schema_version is '" + text +
                   "', not a version number");
  }
  return static_cast<int>(value);
}

Status ApplyMigrations(Db* db, std::span<const Migration> migrations) {
  RETURN_IF_ERROR(CheckNumbering(migrations));
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  while (true) {
    // Version read and migration run in one write transaction, so that two
    // processes opening a new store at once apply each step exactly once.
    ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
    RETURN_IF_ERROR(EnsureMetaTable(db));
    ASSIGN_OR_RETURN(int version, ReadSchemaVersion(db));
    if (version > latest) {
      return FailedPrecondition(
          "store " + db->path() + ": schema version " +
          std::to_string(version) + " is newer than this trench knows (" +
          std::to_string(latest) + "); use a newer trench");
    }
    if (version == latest) return txn.Commit();
    const Migration& m = migrations[version];  // Numbered from 1.
    std::string context =
        "migration " + std::to_string(m.version) + " (" + m.name + ")";
    RETURN_IF_ERROR(db->Exec(m.sql).WithContext(context));
    RETURN_IF_ERROR(WriteSchemaVersion(db, m.version).WithContext(context));
    RETURN_IF_ERROR(txn.Commit().WithContext(context));
    spdlog::info("store {}: applied {}", db->path(), context);
  }
}

}  // namespace trench::orchestrator
