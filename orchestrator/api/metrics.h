// The daemon's Prometheus metrics (text exposition format 0.0.4). The
// families, their types and their documentation are listed once, in
// metrics.def. Counts of the store (bugs, jobs, target runs, fuzzing,
// tokens, job kinds, pipeline and build durations) are read from it on
// each scrape, so they survive restarts and agree with the API; the
// sandboxed tool runs and the HTTP requests are counters of this process
// (the executor's and HttpMetrics').
#pragma once

#include <string>

#include "base/status.h"
#include "orchestrator/api/http_metrics.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

class Executor;

// The exposition text for the store's current counts, `runner`'s and
// `http`'s. `store` is not owned and is used on the calling thread only;
// `runner` (not owned, may be null: its series read 0) and `http` (not
// owned, may be null: no HTTP series) are only read. Label values are
// escaped (\\, \", \n). Errors: the store's.
StatusOr<std::string> RenderMetrics(Store* store, const Executor* runner,
                                    const HttpMetrics* http = nullptr);

}  // namespace trench::orchestrator
