#include "orchestrator/store/job_queue.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/log_context.h"

namespace trench::orchestrator {
namespace {

constexpr std::string_view kJobStateNames[] = {"queued", "leased", "done",
                                               "failed", "parked"};

constexpr char kJobColumns[] =
    "SELECT id, kind, payload, state, priority, dedup_key, lease_owner, "
    "lease_expires_ms, attempts, max_attempts, not_before_ms, result, "
    "last_error, created_ms, updated_ms, crashes FROM jobs ";

constexpr std::string_view kCrashLoop = "crash loop: ";

StatusOr<JobState> ParseJobState(Db* db, const std::string& name, int64_t id) {
  for (size_t i = 0; i < std::size(kJobStateNames); ++i) {
    if (kJobStateNames[i] == name) return static_cast<JobState>(i);
  }
  return IoError("store " + db->path() + ": job " + std::to_string(id) +
                 " has unknown state '" + name + "'");
}

StatusOr<Job> ReadJob(Db* db, const Statement& st) {
  Job job;
  job.id = st.ColumnInt64(0);
  const std::string what = " of job " + std::to_string(job.id);
  job.kind = st.ColumnText(1);
  ASSIGN_OR_RETURN(job.payload, st.ColumnJson(2, "jobs.payload" + what));
  ASSIGN_OR_RETURN(job.state, ParseJobState(db, st.ColumnText(3), job.id));
  job.priority = static_cast<int>(st.ColumnInt64(4));
  job.dedup_key = st.ColumnText(5);
  job.lease_owner = st.ColumnOptionalText(6);
  job.lease_expires_ms = st.ColumnOptionalInt64(7);
  job.attempts = static_cast<int>(st.ColumnInt64(8));
  job.max_attempts = static_cast<int>(st.ColumnInt64(9));
  job.not_before_ms = st.ColumnInt64(10);
  ASSIGN_OR_RETURN(job.result, st.ColumnJson(11, "jobs.result" + what));
  job.last_error = st.ColumnText(12);
  job.created_ms = st.ColumnInt64(13);
  job.updated_ms = st.ColumnInt64(14);
  job.crashes = static_cast<int>(st.ColumnInt64(15));
  return job;
}

// Every row `st` (a kJobColumns query) gives.
StatusOr<std::vector<Job>> ReadJobs(Db* db, Statement& st) {
  std::vector<Job> jobs;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return jobs;
    ASSIGN_OR_RETURN(Job job, ReadJob(db, st));
    jobs.push_back(std::move(job));
  }
}

}  // namespace

std::string_view JobStateName(JobState state) {
  return kJobStateNames[static_cast<size_t>(state)];
}

std::string_view JobStateShownName(JobState state) {
  return state == JobState::kLeased ? "running" : JobStateName(state);
}

std::string JobStateShownNames() {
  std::string out;
  for (size_t i = 0; i < std::size(kJobStateNames); ++i) {
    if (i > 0) out += ", ";
    out += JobStateShownName(static_cast<JobState>(i));
  }
  return out;
}

StatusOr<JobState> ParseJobStateShownName(std::string_view name) {
  for (size_t i = 0; i < std::size(kJobStateNames); ++i) {
    const JobState state = static_cast<JobState>(i);
    if (JobStateShownName(state) == name) return state;
  }
  return InvalidArgument("unknown job state '" + std::string(name) +
                         "' (valid: " + JobStateShownNames() + ")");
}

int FailuresOf(const Job& job) { return job.attempts - job.crashes; }

std::string ParkedReason(const Job& job) {
  if (job.state != JobState::kParked) return "";
  if (job.last_error.starts_with(kCrashLoop)) return job.last_error;
  return "failed " + std::to_string(FailuresOf(job)) + " of " +
         std::to_string(job.max_attempts) + " attempts: " + job.last_error;
}

JobLease LeaseOf(const Job& job) {
  return JobLease{job.id, job.lease_owner.value_or(""), job.attempts};
}

StatusOr<EnqueueResult> JobQueue::Enqueue(const std::string& kind,
                                          const Json& payload,
                                          const JobOptions& options) {
  if (kind.empty()) return InvalidArgument("job kind is empty");
  if (options.max_attempts < 1) {
    return InvalidArgument("job max_attempts must be >= 1, not " +
                           std::to_string(options.max_attempts));
  }
  if (options.delay_ms < 0) return InvalidArgument("job delay is negative");
  Db* db = store_->db();
  EnqueueResult result;
  RETURN_IF_ERROR(InTransaction(db, [&]() -> Status {
    if (!options.dedup_key.empty()) {
      ASSIGN_OR_RETURN(Statement live,
                       db->Prepare("SELECT id FROM jobs WHERE dedup_key = ?1 "
                                   "AND state IN ('queued', 'leased')"));
      ASSIGN_OR_RETURN(bool found, live.BindText(1, options.dedup_key).Step());
      if (found) {
        result = EnqueueResult{live.ColumnInt64(0), false};
        return Status::Ok();
      }
    }
    const int64_t now = store_->clock()->NowMillis();
    ASSIGN_OR_RETURN(
        Statement st,
        db->Prepare("INSERT INTO jobs (kind, payload, state, priority, "
                    "dedup_key, max_attempts, not_before_ms, created_ms, "
                    "updated_ms) VALUES (?1, ?2, 'queued', ?3, ?4, ?5, ?6, "
                    "?7, ?7)"));
    st.BindText(1, kind)
        .BindJson(2, payload)
        .BindInt64(3, options.priority)
        .BindInt64(5, options.max_attempts)
        .BindInt64(6, now + options.delay_ms)
        .BindInt64(7, now);
    if (options.dedup_key.empty()) {
      st.BindNull(4);
    } else {
      st.BindText(4, options.dedup_key);
    }
    RETURN_IF_ERROR(st.Run());
    result = EnqueueResult{db->LastInsertRowId(), true};
    return Status::Ok();
  }));
  return result;
}

StatusOr<std::vector<Job>> JobQueue::Lease(
    const std::string& owner, int max_jobs, int64_t lease_ms,
    const std::vector<std::string>& kinds) {
  if (owner.empty()) return InvalidArgument("job lease owner is empty");
  if (max_jobs < 1 || lease_ms < 1) {
    return InvalidArgument("job lease needs max_jobs >= 1 and lease_ms >= 1");
  }
  Db* db = store_->db();
  std::vector<Job> leased;
  RETURN_IF_ERROR(InTransaction(db, [&]() -> Status {
    RETURN_IF_ERROR(RequeueLeasesInTransaction(std::nullopt).status());
    const int64_t now = store_->clock()->NowMillis();
    // The kinds travel as one bound JSON array, so the SQL text (and the
    // cached statement) is the same for every filter.
    ASSIGN_OR_RETURN(
        Statement ready,
        db->Prepare("SELECT id FROM jobs WHERE state = 'queued' AND "
                    "not_before_ms <= ?1 AND (?2 IS NULL OR kind IN (SELECT "
                    "value FROM json_each(?2))) ORDER BY priority DESC, id "
                    "LIMIT ?3"));
    ready.BindInt64(1, now).BindInt64(3, max_jobs);
    if (!kinds.empty()) {
      Json::Array array(kinds.begin(), kinds.end());
      ready.BindJson(2, Json(std::move(array)));
    }
    std::vector<int64_t> ids;
    while (true) {
      ASSIGN_OR_RETURN(bool row, ready.Step());
      if (!row) break;
      ids.push_back(ready.ColumnInt64(0));
    }
    for (int64_t id : ids) {
      ASSIGN_OR_RETURN(
          Statement st,
          db->Prepare("UPDATE jobs SET state = 'leased', lease_owner = ?2, "
                      "lease_expires_ms = ?3, attempts = attempts + 1, "
                      "updated_ms = ?4 WHERE id = ?1"));
      RETURN_IF_ERROR(st.BindInt64(1, id)
                          .BindText(2, owner)
                          .BindInt64(3, now + lease_ms)
                          .BindInt64(4, now)
                          .Run());
      StatusOr<Job> job = Get(id);
      if (job.ok()) {
        leased.push_back(std::move(job).value());
      } else if (job.status().code() == StatusCode::kIoError) {
        // A row that does not parse would otherwise fail every lease and
        // wedge the queue: fail it (Get() keeps reporting why) and go on.
        RETURN_IF_ERROR(FailCorruptJobInTransaction(id, job.status(), now));
      } else {
        return job.status();
      }
    }
    return Status::Ok();
  }));
  return leased;
}

Status JobQueue::FailCorruptJobInTransaction(int64_t id, const Status& error,
                                             int64_t now) {
  Json fields = Json::MakeObject();
  fields["job"] = id;
  fields["error"] = error.message();
  LogScope scope(fields);
  spdlog::error("job queue: failing job {}: {}", id, error.message());
  ASSIGN_OR_RETURN(
      Statement st,
      store_->db()->Prepare(
          "UPDATE jobs SET state = 'failed', last_error = ?2, lease_owner = "
          "NULL, lease_expires_ms = NULL, updated_ms = ?3 WHERE id = ?1"));
  return st.BindInt64(1, id)
      .BindText(2, error.message())
      .BindInt64(3, now)
      .Run();
}

StatusOr<Job> JobQueue::CheckLeaseInTransaction(const JobLease& lease) {
  ASSIGN_OR_RETURN(Job job, Get(lease.job_id));
  if (job.state != JobState::kLeased || job.lease_owner != lease.owner ||
      job.attempts != lease.attempt) {
    std::string now = std::string(JobStateName(job.state));
    if (job.state == JobState::kLeased) {
      now += " by " + job.lease_owner.value_or("?") + " at attempt " +
             std::to_string(job.attempts);
    }
    return FailedPrecondition("job " + std::to_string(lease.job_id) +
                              " is not leased by " + lease.owner +
                              " at attempt " + std::to_string(lease.attempt) +
                              " (it is " + now + ")");
  }
  return job;
}

Status JobQueue::Heartbeat(const JobLease& lease, int64_t lease_ms) {
  if (lease_ms < 1) return InvalidArgument("job lease_ms must be >= 1");
  Db* db = store_->db();
  return InTransaction(db, [&]() -> Status {
    RETURN_IF_ERROR(CheckLeaseInTransaction(lease).status());
    const int64_t now = store_->clock()->NowMillis();
    ASSIGN_OR_RETURN(Statement st,
                     db->Prepare("UPDATE jobs SET lease_expires_ms = ?2, "
                                 "updated_ms = ?3 WHERE id = ?1"));
    return st.BindInt64(1, lease.job_id)
        .BindInt64(2, now + lease_ms)
        .BindInt64(3, now)
        .Run();
  });
}

Status JobQueue::Complete(const JobLease& lease, const Json& result) {
  Db* db = store_->db();
  return InTransaction(db, [&]() -> Status {
    RETURN_IF_ERROR(CheckLeaseInTransaction(lease).status());
    ASSIGN_OR_RETURN(Statement st,
                     db->Prepare("UPDATE jobs SET state = 'done', result = ?2, "
                                 "lease_owner = NULL, lease_expires_ms = NULL, "
                                 "updated_ms = ?3 WHERE id = ?1"));
    return st.BindInt64(1, lease.job_id)
        .BindJson(2, result)
        .BindInt64(3, store_->clock()->NowMillis())
        .Run();
  });
}

StatusOr<JobState> JobQueue::Fail(const JobLease& lease,
                                  const std::string& error, bool retryable) {
  Db* db = store_->db();
  JobState next = JobState::kFailed;
  RETURN_IF_ERROR(InTransaction(db, [&]() -> Status {
    ASSIGN_OR_RETURN(Job job, CheckLeaseInTransaction(lease));
    const int64_t now = store_->clock()->NowMillis();
    int64_t not_before = job.not_before_ms;
    if (!retryable) {
      next = JobState::kFailed;
    } else if (FailuresOf(job) >= job.max_attempts) {
      next = JobState::kParked;
    } else {
      next = JobState::kQueued;
      int shift = std::clamp(FailuresOf(job) - 1, 0, 30);
      not_before = now + std::min(options_.retry_max_ms,
                                  options_.retry_base_ms << shift);
    }
    ASSIGN_OR_RETURN(
        Statement st,
        db->Prepare("UPDATE jobs SET state = ?2, last_error = ?3, "
                    "not_before_ms = ?4, lease_owner = NULL, "
                    "lease_expires_ms = NULL, updated_ms = ?5 WHERE id = ?1"));
    return st.BindInt64(1, lease.job_id)
        .BindText(2, JobStateName(next))
        .BindText(3, error)
        .BindInt64(4, not_before)
        .BindInt64(5, now)
        .Run();
  }));
  return next;
}

Status JobQueue::Release(const JobLease& lease) {
  Db* db = store_->db();
  return InTransaction(db, [&]() -> Status {
    RETURN_IF_ERROR(CheckLeaseInTransaction(lease).status());
    ASSIGN_OR_RETURN(
        Statement st,
        db->Prepare("UPDATE jobs SET state = 'queued', attempts = attempts - "
                    "1, lease_owner = NULL, lease_expires_ms = NULL, "
                    "updated_ms = ?2 WHERE id = ?1"));
    return st.BindInt64(1, lease.job_id)
        .BindInt64(2, store_->clock()->NowMillis())
        .Run();
  });
}

StatusOr<int64_t> JobQueue::RequeueLeasesInTransaction(
    const std::optional<std::string>& owner) {
  Db* db = store_->db();
  const int64_t now = store_->clock()->NowMillis();
  const int64_t max_crashes = std::max(1, options_.max_crashes);
  // With an owner: all of its leases. Without: every expired lease.
  constexpr char kTaken[] =
      "state = 'leased' AND ((?1 IS NULL AND lease_expires_ms <= ?2) OR "
      "lease_owner = ?1)";
  // The crash loops first, for the log: the queue knows no bugs, but an
  // operator must see which job keeps killing its workers.
  ASSIGN_OR_RETURN(Statement loops,
                   db->Prepare(std::string("SELECT id, kind, crashes + 1 FROM "
                                           "jobs WHERE ") +
                               kTaken + " AND crashes + 1 >= ?3"));
  loops.BindOptionalText(1, owner).BindInt64(2, now).BindInt64(3, max_crashes);
  while (true) {
    ASSIGN_OR_RETURN(bool row, loops.Step());
    if (!row) break;
    Json fields = Json::MakeObject();
    fields["job"] = loops.ColumnInt64(0);
    fields["step"] = loops.ColumnText(1);
    fields["crashes"] = loops.ColumnInt64(2);
    LogScope scope(fields);
    spdlog::error("job queue: job {} {} parked: crash loop ({} leases lost)",
                  loops.ColumnInt64(0), loops.ColumnText(1),
                  loops.ColumnInt64(2));
  }
  // A lost lease is one more crash, not a failure (the attempt stays
  // counted: it is the fencing token). A job that made max_crashes is
  // parked: it may be what kills the workers. SQLite evaluates every
  // right-hand side on the row as it was.
  ASSIGN_OR_RETURN(
      Statement st,
      db->Prepare(
          std::string("UPDATE jobs SET crashes = crashes + 1, state = CASE "
                      "WHEN crashes + 1 >= ?3 THEN 'parked' ELSE 'queued' "
                      "END, last_error = CASE WHEN crashes + 1 >= ?3 THEN "
                      "'") +
          std::string(kCrashLoop) +
          "' || (crashes + 1) || ' leases lost, the last: ' ELSE '' "
          "END || 'lease of ' || lease_owner || ' at attempt ' || "
          "attempts || CASE WHEN ?1 IS NULL THEN ' expired' ELSE ' "
          "taken back' END, lease_owner = NULL, lease_expires_ms = "
          "NULL, updated_ms = ?2 WHERE " +
          kTaken));
  st.BindOptionalText(1, owner).BindInt64(2, now).BindInt64(3, max_crashes);
  RETURN_IF_ERROR(st.Run());
  return db->Changes();
}

StatusOr<int64_t> JobQueue::RequeueExpired() {
  int64_t n = 0;
  RETURN_IF_ERROR(InTransaction(store_->db(), [&]() -> Status {
    ASSIGN_OR_RETURN(n, RequeueLeasesInTransaction(std::nullopt));
    return Status::Ok();
  }));
  return n;
}

StatusOr<int64_t> JobQueue::RequeueOwner(const std::string& owner) {
  if (owner.empty()) return InvalidArgument("job lease owner is empty");
  int64_t n = 0;
  RETURN_IF_ERROR(InTransaction(store_->db(), [&]() -> Status {
    ASSIGN_OR_RETURN(n, RequeueLeasesInTransaction(owner));
    return Status::Ok();
  }));
  return n;
}

Status JobQueue::Unpark(int64_t job_id) {
  return InTransaction(store_->db(),
                       [&]() -> Status { return UnparkInTransaction(job_id); });
}

StatusOr<bool> JobQueue::UnparkOnce(int64_t job_id, const std::string& key,
                                    int64_t retention_ms) {
  Db* db = store_->db();
  bool replayed = false;
  RETURN_IF_ERROR(InTransaction(db, [&]() -> Status {
    const int64_t now = store_->clock()->NowMillis();
    ASSIGN_OR_RETURN(Statement expire,
                     db->Prepare("DELETE FROM job_retry_keys WHERE "
                                 "created_ms <= ?1"));
    RETURN_IF_ERROR(expire.BindInt64(1, now - retention_ms).Run());
    ASSIGN_OR_RETURN(Statement seen,
                     db->Prepare("SELECT job_id FROM job_retry_keys WHERE "
                                 "key = ?1"));
    ASSIGN_OR_RETURN(bool row, seen.BindText(1, key).Step());
    if (row) {
      const int64_t used_for = seen.ColumnInt64(0);
      if (used_for != job_id) {
        return FailedPrecondition(
            "Idempotency-Key '" + key + "' was already used for job " +
            std::to_string(used_for) + "; use a new key for a new retry");
      }
      replayed = true;
      return Status::Ok();
    }
    RETURN_IF_ERROR(UnparkInTransaction(job_id));
    ASSIGN_OR_RETURN(Statement put,
                     db->Prepare("INSERT INTO job_retry_keys (key, job_id, "
                                 "created_ms) VALUES (?1, ?2, ?3)"));
    return put.BindText(1, key).BindInt64(2, job_id).BindInt64(3, now).Run();
  }));
  return replayed;
}

Status JobQueue::UnparkInTransaction(int64_t job_id) {
  Db* db = store_->db();
  {
    ASSIGN_OR_RETURN(Job job, Get(job_id));
    if (job.state != JobState::kParked && job.state != JobState::kFailed) {
      return FailedPrecondition(
          "job " + std::to_string(job_id) + " is " +
          std::string(JobStateShownName(job.state)) +
          ", not parked or failed: only a parked or failed job can be "
          "queued again");
    }
    const int64_t now = store_->clock()->NowMillis();
    // The unique index on live dedup keys refuses this when a live job
    // with the same key was enqueued meanwhile.
    ASSIGN_OR_RETURN(
        Statement st,
        db->Prepare("UPDATE jobs SET state = 'queued', attempts = 0, "
                    "crashes = 0, not_before_ms = ?2, updated_ms = ?2 WHERE "
                    "id = ?1"));
    return st.BindInt64(1, job_id).BindInt64(2, now).Run().WithContext(
        "unpark job " + std::to_string(job_id));
  }
}

StatusOr<Job> JobQueue::Get(int64_t job_id) {
  Db* db = store_->db();
  ASSIGN_OR_RETURN(Statement st,
                   db->Prepare(std::string(kJobColumns) + "WHERE id = ?1"));
  ASSIGN_OR_RETURN(bool row, st.BindInt64(1, job_id).Step());
  if (!row) return NotFound("no job " + std::to_string(job_id));
  return ReadJob(db, st);
}

StatusOr<std::optional<Job>> JobQueue::Latest(const std::string& dedup_key) {
  Db* db = store_->db();
  ASSIGN_OR_RETURN(Statement st,
                   db->Prepare(std::string(kJobColumns) +
                               "WHERE dedup_key = ?1 ORDER BY id DESC LIMIT "
                               "1"));
  ASSIGN_OR_RETURN(bool row, st.BindText(1, dedup_key).Step());
  if (!row) return std::optional<Job>();
  ASSIGN_OR_RETURN(Job job, ReadJob(db, st));
  return std::optional<Job>(std::move(job));
}

StatusOr<std::vector<Job>> JobQueue::ListByKeyPrefix(const std::string& prefix,
                                                     int limit) {
  Db* db = store_->db();
  ASSIGN_OR_RETURN(Statement st,
                   db->Prepare(std::string(kJobColumns) +
                               "WHERE substr(dedup_key, 1, length(?1)) = ?1 "
                               "ORDER BY id DESC LIMIT ?2"));
  st.BindText(1, prefix).BindInt64(2, limit);
  return ReadJobs(db, st);
}

StatusOr<std::vector<Job>> JobQueue::Find(const JobFilter& filter) {
  if (filter.limit < 1) return InvalidArgument("job list limit must be >= 1");
  if (filter.before_id < 0) {
    return InvalidArgument("job list before id must be >= 0");
  }
  Db* db = store_->db();
  ASSIGN_OR_RETURN(
      Statement st,
      db->Prepare(std::string(kJobColumns) +
                  "WHERE (?1 IS NULL OR state = ?1) AND (?2 = '' OR kind = "
                  "?2) AND (?3 = '' OR substr(dedup_key, 1, length(?3)) = "
                  "?3) AND (?4 = 0 OR id < ?4) ORDER BY id DESC LIMIT ?5"));
  if (filter.state) {
    st.BindText(1, JobStateName(*filter.state));
  } else {
    st.BindNull(1);
  }
  st.BindText(2, filter.kind)
      .BindText(3, filter.key_prefix)
      .BindInt64(4, filter.before_id)
      .BindInt64(5, filter.limit);
  return ReadJobs(db, st);
}

StatusOr<std::vector<Job>> JobQueue::List(JobState state, int limit) {
  Db* db = store_->db();
  ASSIGN_OR_RETURN(Statement st,
                   db->Prepare(std::string(kJobColumns) +
                               "WHERE state = ?1 ORDER BY id LIMIT ?2"));
  st.BindText(1, JobStateName(state)).BindInt64(2, limit);
  return ReadJobs(db, st);
}

StatusOr<int64_t> JobQueue::Count(JobState state) {
  ASSIGN_OR_RETURN(Statement st,
                   store_->db()->Prepare("SELECT count(*) FROM jobs WHERE "
                                         "state = ?1"));
  ASSIGN_OR_RETURN(bool row, st.BindText(1, JobStateName(state)).Step());
  return row ? st.ColumnInt64(0) : 0;
}

}  // namespace trench::orchestrator
