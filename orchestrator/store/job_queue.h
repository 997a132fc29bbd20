// The durable job queue, in the store's SQLite file (table `jobs`).
//
// A generic engine: a job is a kind (a string the daemon dispatches on) and
// a JSON payload; the queue knows nothing about what jobs do.
//
// Job states:
//   queued -> leased          Lease(): a worker owns it until the lease
//                             expires; each lease counts one attempt.
//   leased -> done            Complete(): with a JSON result.
//   leased -> queued          Fail(retryable) with failures left (after a
//                             backoff), Release() (graceful shutdown; the
//                             attempt is not counted), or a lost lease
//                             (the worker died: kill -9, lost node).
//   leased -> parked          Fail(retryable) with no failures left, or a
//                             lost lease that makes max_crashes lost
//                             leases (a crash loop): needs a human
//                             (Unpark()).
//   leased -> failed          Fail(not retryable): a final answer.
// Expired leases are taken back by every Lease() call and by
// RequeueExpired(); a restarted daemon calls RequeueOwner(its name) to
// take back its previous incarnation's leases at once.
//
// Two budgets: a lost lease is the worker's crash, not the job's failure,
// so it counts in `crashes`, not against max_attempts: failures are
// attempts - crashes (a daemon killed 25 times in a row must not park the
// step it was running). Crashes have their own bound (max_crashes, per
// queue), so that a job that kills its worker each time is still parked,
// with "crash loop: N leases lost ..." as its last error.
//
// Each lease carries a fencing token (the attempt number): a worker whose
// lease expired and was re-leased cannot complete, fail, extend or release
// the job any more (kFailedPrecondition "job 7 is not leased by w1 at
// attempt 2 (it is queued)").
//
// Every call is one transaction on the store's connection; several
// JobQueues on several connections (threads or processes) share the queue
// safely: a job is leased by at most one owner at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

enum class JobState { kQueued, kLeased, kDone, kFailed, kParked };
// The stored name: "queued", "leased", "done", "failed", "parked".
std::string_view JobStateName(JobState state);
// The name operators see (API, CLI): the stored one, except "running" for
// leased (a worker is on it).
std::string_view JobStateShownName(JobState state);
// "queued, running, done, failed, parked": the shown names, for help and
// error texts.
std::string JobStateShownNames();
// Parses a shown name. Errors: kInvalidArgument "unknown job state 'x'
// (valid: queued, running, done, failed, parked)".
StatusOr<JobState> ParseJobStateShownName(std::string_view name);

struct JobOptions {
  // At most one live (queued or leased) job has this key; enqueueing
  // another returns the live one. Empty: no dedup.
  std::string dedup_key;
  int max_attempts = 3;  // >= 1.
  int priority = 0;      // Higher first; FIFO within a priority.
  int64_t delay_ms = 0;  // Not leased before now + delay_ms.
};

struct Job {
  int64_t id = 0;
  std::string kind;
  Json payload;
  JobState state = JobState::kQueued;
  int priority = 0;
  std::string dedup_key;
  std::optional<std::string> lease_owner;
  std::optional<int64_t> lease_expires_ms;
  int attempts = 0;      // Times leased; the fencing token of the lease.
  int crashes = 0;       // Leases lost (taken back): not failures.
  int max_attempts = 0;  // Bounds the failures: attempts - crashes.
  int64_t not_before_ms = 0;
  Json result;  // Null until done.
  std::string last_error;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
};

// Identifies one lease of one job (from a leased Job).
struct JobLease {
  int64_t job_id = 0;
  std::string owner;
  int attempt = 0;
};
JobLease LeaseOf(const Job& job);

struct EnqueueResult {
  int64_t id = 0;
  bool created = false;  // False: an existing live job had the dedup key.
};

// Which jobs JobQueue::Find lists; every field set narrows it.
struct JobFilter {
  std::optional<JobState> state;
  std::string kind;        // "": any.
  std::string key_prefix;  // Dedup keys starting with it; "": any.
  int64_t before_id = 0;   // Only ids below it (a page); 0: no bound.
  int limit = 100;         // >= 1.
};

struct JobQueueOptions {
  // Delay before a failed job's retry: base * 2^(attempts-1), capped.
  int64_t retry_base_ms = 1000;
  int64_t retry_max_ms = 5 * 60 * 1000;
  // Lost leases (crashes) after which a job is parked as a crash loop:
  // well above the kills in a row an operator or a bad night deals out.
  int max_crashes = 50;  // >= 1.
};

// Failures a job used: attempts that were not lost leases.
int FailuresOf(const Job& job);
// Why `job` is parked, for humans ("" when it is not parked): its crash
// loop, or "failed N of M attempts: <last error>".
std::string ParkedReason(const Job& job);

class JobQueue {
 public:
  // `store` is not owned and must outlive the queue; the queue uses its
  // connection and clock (so one thread at a time, like the Store).
  explicit JobQueue(Store* store, JobQueueOptions options = {})
      : store_(store), options_(options) {}

  // Adds a job (or finds the live one with the same dedup key).
  // Errors: kInvalidArgument for an empty kind, max_attempts < 1 or a
  // negative delay.
  StatusOr<EnqueueResult> Enqueue(const std::string& kind, const Json& payload,
                                  const JobOptions& options = {});

  // Leases up to `max_jobs` ready jobs (queued, not_before passed) to
  // `owner` for `lease_ms`, highest priority first, then oldest; only of
  // the given kinds when `kinds` is not empty. Expired leases are taken
  // back first. Returns the leased jobs (possibly none). A job whose stored
  // row does not parse (malformed JSON) is not returned: it is marked
  // failed with the parse error as last_error, and logged.
  // Errors: kInvalidArgument for an empty owner, max_jobs < 1 or
  // lease_ms < 1.
  StatusOr<std::vector<Job>> Lease(const std::string& owner, int max_jobs,
                                   int64_t lease_ms,
                                   const std::vector<std::string>& kinds = {});
  // Extends the lease to now + lease_ms. Errors: kFailedPrecondition when
  // the lease is no longer held (see above); kNotFound for no such job.
  Status Heartbeat(const JobLease& lease, int64_t lease_ms);
  // Marks the job done with `result`. Errors as Heartbeat.
  Status Complete(const JobLease& lease, const Json& result);
  // Records the failure `error`. Retryable: queued again after the backoff
  // when attempts remain, parked otherwise. Not retryable: failed.
  // Returns the job's new state. Errors as Heartbeat.
  StatusOr<JobState> Fail(const JobLease& lease, const std::string& error,
                          bool retryable);
  // Gives the job back untouched (queued, the attempt not counted): for a
  // worker that stops before it started the work. Errors as Heartbeat.
  Status Release(const JobLease& lease);

  // Takes back every lease that expired by now: one more crash for each;
  // queued again, or parked when that makes max_crashes (logged as an
  // error). Returns how many were taken back.
  StatusOr<int64_t> RequeueExpired();
  // Takes back every lease of `owner` now, expired or not (a restarted
  // daemon voiding its dead incarnation's leases); same rules as above.
  StatusOr<int64_t> RequeueOwner(const std::string& owner);
  // Queues a parked (or failed) job again with its attempts and crashes
  // reset.
  // Errors: kFailedPrecondition when it is neither parked nor failed.
  Status Unpark(int64_t job_id);
  // Unpark under a client's idempotency key (POST /api/v1/jobs/{id}/retry),
  // the key recorded in the same transaction: a key already used for this
  // job within `retention_ms` returns true (replayed) and changes nothing;
  // else the job is unparked and false returned. Errors: as Unpark;
  // kFailedPrecondition "Idempotency-Key '<key>' was already used for job
  // N" for a key used for another job.
  StatusOr<bool> UnparkOnce(int64_t job_id, const std::string& key,
                            int64_t retention_ms);

  // kNotFound for an unknown id; kIoError for malformed stored JSON.
  StatusOr<Job> Get(int64_t job_id);
  // The newest job with this dedup key (live or not), if any.
  StatusOr<std::optional<Job>> Latest(const std::string& dedup_key);
  // Jobs whose dedup key starts with `prefix` (e.g. one bug's steps),
  // newest first, at most `limit`.
  StatusOr<std::vector<Job>> ListByKeyPrefix(const std::string& prefix,
                                             int limit);
  // The jobs `filter` selects, newest (highest id) first, at most
  // filter.limit. Errors: kInvalidArgument for limit < 1 or a negative
  // before_id.
  StatusOr<std::vector<Job>> Find(const JobFilter& filter);
  // Jobs in `state`, oldest first, at most `limit`.
  StatusOr<std::vector<Job>> List(JobState state, int limit);
  StatusOr<int64_t> Count(JobState state);

 private:
  // REQUIRES: inside a transaction. Marks a job whose stored row does not
  // parse as failed, with `error` as its last error.
  Status FailCorruptJobInTransaction(int64_t id, const Status& error,
                                     int64_t now);
  // REQUIRES: inside a transaction. Unpark's work.
  Status UnparkInTransaction(int64_t job_id);
  // REQUIRES: inside a transaction. Loads the job and checks the lease.
  StatusOr<Job> CheckLeaseInTransaction(const JobLease& lease);
  // REQUIRES: inside a transaction. Takes back the leases of `owner`, or
  // every expired lease when absent.
  StatusOr<int64_t> RequeueLeasesInTransaction(
      const std::optional<std::string>& owner);

  Store* store_;
  JobQueueOptions options_;
};

}  // namespace trench::orchestrator
