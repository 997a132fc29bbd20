// The Slurm executor's jobs in the store (table executor_jobs, migration
// 12): the Slurm id of each run, stored with the queue job and lease
// attempt it ran for, so that a daemon restarted after SIGKILL knows which
// jobs it started and did not see end.
//
// A row is written (state "SUBMITTING", no id) before sbatch runs, and
// the id right after it answers: a crash between the two leaves a row
// whose job is found by its unique name (squeue), never submitted again.
// Errors: the store's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator::slurm {

struct SlurmJobRecord {
  std::string name;  // The Slurm job name: unique per (job, seq).
  int64_t job_id = 0;
  int attempt = 0;
  int seq = 0;
  std::optional<int64_t> slurm_id;
  std::string state;  // "SUBMITTING" or a Slurm state name.
  bool finished = false;
  int requeues = 0;
  int64_t submitted_ms = 0;
  std::optional<int64_t> started_ms, ended_ms;
};

// Inserts or replaces `name`'s row as submitting (finished 0, no id).
Status RecordSubmitting(Store* store, const SlurmJobRecord& record);
Status RecordSlurmId(Store* store, const std::string& name, int64_t slurm_id);
// The last state seen; `finished` marks a job the daemon saw end (or
// gave up on), which is never reattached.
Status RecordState(Store* store, const std::string& name,
                   const std::string& state, bool finished,
                   std::optional<int64_t> started_ms,
                   std::optional<int64_t> ended_ms);
Status RecordRequeue(Store* store, const std::string& name);
StatusOr<std::optional<SlurmJobRecord>> GetJobRecord(Store* store,
                                                     const std::string& name);
// Rows not finished: of queue job `job_id`, or of every job (job_id 0).
StatusOr<std::vector<SlurmJobRecord>> UnfinishedJobRecords(Store* store,
                                                           int64_t job_id);

}  // namespace trench::orchestrator::slurm
