// The Slurm executor's jobs in the store (slurm_job_records.h).
#include "orchestrator/slurm/slurm_job_records.h"

#include "orchestrator/store/store_sqlite.h"

namespace trench::orchestrator::slurm {
namespace {

constexpr char kColumns[] =
    "name, job_id, attempt, seq, slurm_id, state, finished, requeues, "
    "submitted_ms, started_ms, ended_ms";

SlurmJobRecord ReadRecord(const Statement& st) {
  SlurmJobRecord r;
  r.name = st.ColumnText(0);
  r.job_id = st.ColumnInt64(1);
  r.attempt = static_cast<int>(st.ColumnInt64(2));
  r.seq = static_cast<int>(st.ColumnInt64(3));
  r.slurm_id = st.ColumnOptionalInt64(4);
  r.state = st.ColumnText(5);
  r.finished = st.ColumnInt64(6) != 0;
  r.requeues = static_cast<int>(st.ColumnInt64(7));
  r.submitted_ms = st.ColumnInt64(8);
  r.started_ms = st.ColumnOptionalInt64(9);
  r.ended_ms = st.ColumnOptionalInt64(10);
  return r;
}

Status RunOne(Statement st) { return st.Run(); }

}  // namespace

Status RecordSubmitting(Store* store, const SlurmJobRecord& record) {
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare(
          "INSERT OR REPLACE INTO executor_jobs (name, job_id, attempt, seq, "
          "slurm_id, state, finished, requeues, submitted_ms) VALUES (?, ?, "
          "?, ?, NULL, 'SUBMITTING', 0, ?, ?)"));
  st.BindText(1, record.name)
      .BindInt64(2, record.job_id)
      .BindInt64(3, record.attempt)
      .BindInt64(4, record.seq)
      .BindInt64(5, record.requeues)
      .BindInt64(6, record.submitted_ms);
  return RunOne(std::move(st));
}

Status RecordSlurmId(Store* store, const std::string& name, int64_t slurm_id) {
  ASSIGN_OR_RETURN(Statement st,
                   store->db()->Prepare("UPDATE executor_jobs SET slurm_id = "
                                        "?, state = 'PENDING' WHERE name = ?"));
  st.BindInt64(1, slurm_id).BindText(2, name);
  return RunOne(std::move(st));
}

Status RecordState(Store* store, const std::string& name,
                   const std::string& state, bool finished,
                   std::optional<int64_t> started_ms,
                   std::optional<int64_t> ended_ms) {
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare(
          "UPDATE executor_jobs SET state = ?, finished = ?, started_ms = "
          "COALESCE(?, started_ms), ended_ms = COALESCE(?, ended_ms) WHERE "
          "name = ?"));
  st.BindText(1, state)
      .BindInt64(2, finished ? 1 : 0)
      .BindOptionalInt64(3, started_ms)
      .BindOptionalInt64(4, ended_ms)
      .BindText(5, name);
  return RunOne(std::move(st));
}

Status RecordRequeue(Store* store, const std::string& name) {
  ASSIGN_OR_RETURN(Statement st,
                   store->db()->Prepare("UPDATE executor_jobs SET requeues = "
                                        "requeues + 1 WHERE name = ?"));
  st.BindText(1, name);
  return RunOne(std::move(st));
}

StatusOr<std::optional<SlurmJobRecord>> GetJobRecord(Store* store,
                                                     const std::string& name) {
  ASSIGN_OR_RETURN(Statement st,
                   store->db()->Prepare(std::string("SELECT ") + kColumns +
                                        " FROM executor_jobs WHERE name = ?"));
  st.BindText(1, name);
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<SlurmJobRecord>();
  return std::optional<SlurmJobRecord>(ReadRecord(st));
}

StatusOr<std::vector<SlurmJobRecord>> UnfinishedJobRecords(Store* store,
                                                           int64_t job_id) {
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare(std::string("SELECT ") + kColumns +
                           " FROM executor_jobs WHERE finished = 0 AND (? = 0 "
                           "OR job_id = ?) ORDER BY job_id, seq"));
  st.BindInt64(1, job_id).BindInt64(2, job_id);
  std::vector<SlurmJobRecord> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back(ReadRecord(st));
  }
  return out;
}

}  // namespace trench::orchestrator::slurm
