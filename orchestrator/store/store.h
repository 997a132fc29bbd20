// The orchestrator's durable store: one SQLite file (WAL) holding bugs,
// cases, target runs, lifecycle events, builds, patches and agent sessions.
// The job queue lives in the same file (job_queue.h).
//
// Every write is one transaction: after a crash (kill -9) at any moment,
// each write is either fully there or not at all. A bug's state and the
// event row recording the move are written together (TransitionBug).
// Each write that adds an event row rings the event bell (event_bell.h)
// once it is committed, for the API's long polls.
//
// Errors: kNotFound for unknown ids; kInvalidArgument for bad arguments
// (e.g. a flaky rate outside [0, 1]); kFailedPrecondition for illegal
// lifecycle moves and broken references; kIoError for a file that is not a
// store, or stored data that does not parse (bad JSON, unknown state),
// naming the row; others as in store_sqlite.h.
//
// Thread-safety: a Store is one connection, used by one thread at a time.
// Open one Store per thread on the same file; SQLite serialises them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "orchestrator/store/lifecycle.h"
#include "orchestrator/store/store_clock.h"
#include "orchestrator/store/store_sqlite.h"

namespace trench::orchestrator {

struct StoreOptions {
  Clock* clock = SystemClock::Get();  // Not owned; must outlive the Store.
  bool create_if_missing = true;
  int busy_timeout_ms = 5000;
  bool full_sync = false;  // See Db::Options::full_sync.
};

struct Bug {
  int64_t id = 0;
  BugState state = BugState::kNew;
  std::string signature;
  std::string title;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  std::optional<int64_t> duplicate_of;
  std::optional<double> flaky_rate;
  std::optional<std::string> case_sha256;       // The repro case.
  std::optional<std::string> minimized_sha256;  // The minimized case.
  std::optional<std::string> culprit_commit;
  std::optional<std::string> fix_commit;
  Json details = Json::MakeObject();  // Localization, report text, ...
};

struct NewBug {
  std::string signature;
  std::string title;
  std::optional<std::string> case_sha256;
  Json details = Json::MakeObject();
};

// A client's Idempotency-Key for creating a bug (POST /api/v1/reports).
struct IdempotencyKey {
  std::string key;             // As sent (the API checked its form).
  std::string request_sha256;  // What the request asked for.
  int64_t retention_ms = 0;    // Uses older than this are forgotten.
};

struct CreatedBug {
  int64_t id = 0;
  bool replayed = false;  // The key's earlier bug; nothing was written.
};

// Fields set together with a transition (absent: unchanged).
struct TransitionFields {
  // "REQUIRED for -> X" fields must be given for that move unless the bug
  // already has them (e.g. back from patch_drafted to culprit_found).
  std::optional<int64_t> duplicate_of;  // REQUIRED for -> duplicate.
  std::optional<double> flaky_rate;     // REQUIRED for -> flaky; in [0, 1].
  std::optional<std::string> signature;
  std::optional<std::string> minimized_sha256;  // REQUIRED for -> minimized.
  std::optional<std::string> culprit_commit;  // REQUIRED for -> culprit_found.
  std::optional<std::string> fix_commit;      // REQUIRED for -> fixed.
  std::optional<Json> details;  // Replaces the whole details object.
  // Edits the details (after `details`, when given) inside the move's
  // transaction, on the bug as stored then: a read-modify-write no other
  // connection can interleave with (e.g. appending a reviewer's hint). It
  // runs before the move is checked; an error aborts the move (so it may
  // refuse it with its own reason).
  std::function<Status(const Bug& bug, Json* details)> edit_details;
  // Replaces the repro case (e.g. a report's module made a full case with
  // inputs by the reproducer); must be stored.
  std::optional<std::string> case_sha256;
};

struct Event {
  int64_t id = 0;
  int64_t bug_id = 0;
  std::optional<BugState> from;  // Absent for the bug's creation.
  BugState to = BugState::kNew;
  std::string actor;  // "orchestrator", "api:<user>", "reproducer#2", ...
  Json evidence;
  int64_t at_ms = 0;
};

// The events of a commit (DESIGN.md "The daemon"), apart from the bugs'
// state changes: the repo watcher saw it land; its build step finished
// (built or not: evidence "built").
enum class CommitEventKind { kCommitLanded, kBuildReady };
// "commit_landed", "build_ready".
std::string_view CommitEventName(CommitEventKind kind);

// One commit event. It shares the events table's id sequence with the
// bugs' events, so both can be merged into one ordered feed.
struct CommitEvent {
  int64_t id = 0;
  std::string commit_sha;
  CommitEventKind kind = CommitEventKind::kCommitLanded;
  std::string actor;
  Json evidence;
  int64_t at_ms = 0;
};

struct Case {
  std::string sha256;  // 64 lowercase hex digits: the content address.
  std::string path;    // <var>/cases/<sha256>/
  Json origin;         // case.json's origin: fuzz seed, trace, report id.
  int64_t created_ms = 0;
};

struct Run {
  int64_t id = 0;
  std::string case_sha256;
  std::optional<int64_t> bug_id;
  std::string commit_sha;
  Json verdict;  // hlo-diff's verdict.
  double seconds = 0;
  int64_t created_ms = 0;
};

enum class BuildStatus { kPending, kOk, kFailed };

struct Build {
  int64_t id = 0;
  std::string commit_sha;
  std::string patch_hash;  // Empty: the commit as is.
  BuildStatus status = BuildStatus::kPending;
  std::string bin_dir;
  std::string log_tail;
  // The target's description at this commit as JSON (SetBuildTarget); ""
  // until it was read.
  std::string target;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
};

struct Patch {
  int64_t id = 0;
  int64_t bug_id = 0;
  std::string branch;  // trench/bug-<id>
  std::string diff;
  bool verified = false;
  Json verification = Json::MakeObject();
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
};

struct AgentSession {
  int64_t id = 0;
  std::optional<int64_t> bug_id;
  std::string role;     // The swarm role.
  std::string backend;  // The configured brain: builtin, openai, anthropic.
  std::string status;   // running, done, "fell back to builtin: ...", ...
  std::string fallback_reason;  // Its class ("timeout"), or "".
  double cost_usd = 0;          // Its tokens at the backend's prices.
  int64_t input_tokens = 0, output_tokens = 0;  // Over its messages.
  int64_t started_ms = 0;
  std::optional<int64_t> ended_ms;
};

// What a bug's agent sessions used, for the per-bug budgets.
struct AgentSpend {
  int64_t tokens = 0;  // Input + output.
  double cost_usd = 0;
};

struct AgentMessage {
  int64_t id = 0;
  int64_t session_id = 0;
  std::string role;  // system, user, assistant, tool.
  std::string content;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t at_ms = 0;
};

class Store {
 public:
  // Opens the store file at `path`, creating it (and its schema) when
  // missing, and applies pending migrations. Errors as in Db::Open and
  // ApplyMigrations (a newer schema is refused).
  static StatusOr<std::unique_ptr<Store>> Open(const std::string& path,
                                               const StoreOptions& options);

  Db* db() { return db_.get(); }
  Clock* clock() { return clock_; }

  // ---- Bugs and their lifecycle (store_bugs.cc) ----

  // Creates a bug in state `new` with its creation event (from: none).
  // Returns its id. Errors: kFailedPrecondition when case_sha256 names no
  // stored case.
  StatusOr<int64_t> CreateBug(const NewBug& bug, const std::string& actor,
                              const Json& evidence);
  // CreateBug under an idempotency key, the key recorded in the same
  // transaction as the bug (a crash leaves both or neither). A key used
  // within its retention for the same request_sha256 returns that bug,
  // replayed, and writes nothing (expired uses are deleted first). Errors:
  // as CreateBug; kFailedPrecondition "Idempotency-Key '<key>' was already
  // used for a different report (bug N) ..." for another request_sha256.
  StatusOr<CreatedBug> CreateBugOnce(const NewBug& bug,
                                     const std::string& actor,
                                     const Json& evidence,
                                     const IdempotencyKey& key);
  StatusOr<Bug> GetBug(int64_t id);
  // The bugs with these ids, in id order, read in one query; ids with no
  // bug are left out.
  StatusOr<std::vector<Bug>> GetBugs(const std::vector<int64_t>& ids);
  // Bugs with id > after_id in id order, at most `limit`; only those in
  // `state` when given.
  StatusOr<std::vector<Bug>> ListBugs(std::optional<BugState> state,
                                      int64_t after_id, int limit);
  // The oldest open bug (IsOpen) with this signature, if any.
  StatusOr<std::optional<Bug>> FindOpenBugBySignature(
      const std::string& signature);
  // Every bug with this signature, in any state, in id order.
  StatusOr<std::vector<Bug>> ListBugsBySignature(const std::string& signature);
  // Every bug whose signature is `signature` or whose details hold the
  // JSON string `text` anywhere, in id order: a prefilter done by SQLite
  // (no JSON is parsed for the bugs that do not match).
  StatusOr<std::vector<Bug>> ListBugsMentioning(const std::string& signature,
                                                const std::string& text);
  // Moves bug `id` to `to` and appends the event, in one transaction.
  // Errors: kNotFound (no such bug); kFailedPrecondition for an illegal
  // move (CheckTransition's message, prefixed by "bug N"), a duplicate of
  // itself or of a missing bug, a minimized case that is not stored;
  // kInvalidArgument when a field required by `to` is missing ("bug 3: a
  // move to fixed needs the fix commit") or out of range. Nothing is
  // written on error. A move to new (a reviewer's reopen) clears
  // duplicate_of.
  StatusOr<Bug> TransitionBug(int64_t id, BugState to, const std::string& actor,
                              const Json& evidence,
                              const TransitionFields& fields = {});
  // Replaces bug `id`'s details without a state change (no event row):
  // for the daemon's bookkeeping (draft rounds, "needs a human").
  // kNotFound for an unknown bug.
  Status SetBugDetails(int64_t id, const Json& details);
  // Replaces bug `id`'s details and records why as a note: an event row
  // whose from and to are the bug's (unchanged) state, with `evidence`,
  // in one transaction. For what a reviewer follows in the history without
  // a state change (a finding waiting for an older bug, its release).
  // kNotFound for an unknown bug.
  Status NoteBug(int64_t id, const std::string& actor, const Json& evidence,
                 const Json& details);
  // Bug events with id > after_id (all bugs, or only `bug_id`), in order;
  // commit events are left out (ListCommitEvents).
  StatusOr<std::vector<Event>> ListEvents(std::optional<int64_t> bug_id,
                                          int64_t after_id, int limit);
  // Records `kind` for `commit_sha` unless that commit has it already
  // (a step re-run after a crash): exactly one row per (commit, kind).
  // Returns true when the row is new. kInvalidArgument for an empty sha.
  StatusOr<bool> RecordCommitEvent(const std::string& commit_sha,
                                   CommitEventKind kind,
                                   const std::string& actor,
                                   const Json& evidence);
  // Commit events with id > after_id (all commits, or only `commit_sha`),
  // in id order, at most `limit`. Bug events are not included (ListEvents).
  StatusOr<std::vector<CommitEvent>> ListCommitEvents(
      std::optional<std::string> commit_sha, int64_t after_id, int limit);
  // The newest event's id (bug or commit event; they share one sequence),
  // 0 when there is none.
  StatusOr<int64_t> LastEventId();
  // Bug counts per state (every registry state present, 0 when none).
  StatusOr<std::map<BugState, int64_t>> CountBugsByState();

  // ---- Cases and runs (store_bugs.cc) ----

  // Records a case. Content-addressed: storing the same sha256 again is a
  // no-op that returns false (true when newly stored). Errors:
  // kInvalidArgument when sha256 is not 64 lowercase hex digits.
  StatusOr<bool> PutCase(const std::string& sha256, const std::string& path,
                         const Json& origin);
  StatusOr<Case> GetCase(const std::string& sha256);
  // Records one target run; returns its id. Errors: kFailedPrecondition
  // when the case or bug does not exist.
  StatusOr<int64_t> AddRun(const std::string& case_sha256,
                           std::optional<int64_t> bug_id,
                           const std::string& commit_sha, const Json& verdict,
                           double seconds);
  StatusOr<std::vector<Run>> ListRunsForCase(const std::string& case_sha256);
  StatusOr<int64_t> CountRuns();

  // ---- Builds, patches, agent sessions (store_artifacts.cc) ----

  // Inserts or updates the build of (commit_sha, patch_hash); returns its id.
  StatusOr<int64_t> PutBuild(const std::string& commit_sha,
                             const std::string& patch_hash, BuildStatus status,
                             const std::string& bin_dir,
                             const std::string& log_tail);
  // kNotFound when that commit (and patch) was never built.
  StatusOr<Build> GetBuild(const std::string& commit_sha,
                           const std::string& patch_hash);
  // Records the target's description (JSON text) with the build of
  // (commit_sha, patch_hash). kNotFound when there is no such build.
  Status SetBuildTarget(const std::string& commit_sha,
                        const std::string& patch_hash,
                        const std::string& target);
  StatusOr<int64_t> AddPatch(int64_t bug_id, const std::string& branch,
                             const std::string& diff);
  Status SetPatchVerified(int64_t patch_id, bool verified,
                          const Json& verification);
  StatusOr<std::vector<Patch>> ListPatches(int64_t bug_id);
  StatusOr<int64_t> StartAgentSession(std::optional<int64_t> bug_id,
                                      const std::string& role,
                                      const std::string& backend);
  // Records the session's end: `status`, and the class of why it fell back
  // to the built-in brain ("" when it did not; pipeline/
  // fallback_reasons.def). kNotFound for an unknown session.
  Status EndAgentSession(int64_t session_id, const std::string& status,
                         const std::string& fallback_reason = "");
  // Appends a message to the session and adds `cost_usd` (>= 0) to its
  // cost, in one transaction. Errors: kFailedPrecondition for an unknown
  // session; kInvalidArgument for a negative cost.
  StatusOr<int64_t> AddAgentMessage(int64_t session_id, const std::string& role,
                                    const std::string& content,
                                    int64_t input_tokens, int64_t output_tokens,
                                    double cost_usd = 0);
  StatusOr<std::vector<AgentMessage>> ListAgentMessages(int64_t session_id);
  // The sessions of `bug_id` (all when absent), in id order.
  StatusOr<std::vector<AgentSession>> ListAgentSessions(
      std::optional<int64_t> bug_id);
  // Tokens and cost of every session of the bug so far.
  StatusOr<AgentSpend> AgentSpendOfBug(int64_t bug_id);
  // Sum of input + output tokens over all agent messages.
  StatusOr<int64_t> TotalAgentTokens();

  // ---- Daemon settings that must survive restarts (store_meta.cc) ----

  // The meta table's value for `key` (e.g. "watch.last_commit"), or
  // nullopt. Keys starting with "schema" are the migrations' own.
  StatusOr<std::optional<std::string>> GetMeta(const std::string& key);
  // Sets it (one transaction). kInvalidArgument for a "schema..." key.
  Status SetMeta(const std::string& key, const std::string& value);

 private:
  Store(std::unique_ptr<Db> db, Clock* clock)
      : db_(std::move(db)), clock_(clock) {}
  StatusOr<int64_t> InsertBug(const NewBug& bug, const std::string& actor,
                              const Json& evidence, int64_t now);
  std::unique_ptr<Db> db_;
  Clock* clock_;
};

std::string_view BuildStatusName(BuildStatus status);

}  // namespace trench::orchestrator
