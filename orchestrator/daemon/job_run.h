// One leased job on a daemon worker: its handler runs inside a log scope
// (base/log_context.h) carrying the job's fields, so that every line of
// the run (the steps' own spdlog calls included) says which job, step,
// bug, commit and attempt it belongs to; and its lifecycle lines:
//   info  "job started"    job, step, attempt, worker, bug?, commit?
//   info  "job done"       ... duration_ms
//   info  "job interrupted: queued again for the next start"
//                          ... duration_ms, error (a shutdown stopped it)
//   warn  "job failed: will be retried"   ... duration_ms, error
//   error "job parked: needs a human"     ... duration_ms, error
//   warn  "job failed for good"           ... duration_ms, error
// (bug: the payload's "bug", commit: its "commit", when present).
#pragma once

#include <atomic>
#include <string>

#include "base/json.h"
#include "base/status.h"
#include "orchestrator/pipeline/pipeline.h"
#include "orchestrator/store/job_queue.h"

namespace trench::orchestrator {

// The log fields of `job`: job, step (its kind), attempt, and bug and
// commit from its payload when there.
Json JobLogFields(const Job& job);

// Whether a step's error is worth another attempt: not for
// kInvalidArgument, kFailedPrecondition or kNotFound (pipeline.h).
bool RetryableStepError(const Status& s);

// Runs `handler` on the leased `job` and settles it in `queue`: Complete
// with its result; Release when it failed while `stopping` (a shutdown
// interrupted it); Fail otherwise (retryable per RetryableStepError).
// Logs the lines above, with `worker` (e.g. "reproducer#0") as a field.
// Errors: the queue's (a lost lease: kFailedPrecondition).
Status RunLeasedJob(StepContext& ctx, JobQueue& queue, const Job& job,
                    const StepHandler& handler, const std::string& worker,
                    const std::atomic<bool>& stopping);

}  // namespace trench::orchestrator
