// The daemon's Prometheus metrics (text exposition format 0.0.4). The
// families, their types and their documentation are listed once, in
// metrics.def. Counts of the store (bugs, jobs, target runs, fuzzing,
// tokens) are read from it on each scrape, so they survive restarts and
// agree with the API; the sandboxed tool runs are the ToolRunner's own
// counters, those of this process.
#pragma once

#include <string>

#include "base/status.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

class ToolRunner;

// The exposition text for the store's current counts and `runner`'s.
// `store` is not owned and is used on the calling thread only; `runner`
// (not owned, may be null: its series read 0) is only read. Errors: the
// store's.
StatusOr<std::string> RenderMetrics(Store* store, const ToolRunner* runner);

}  // namespace trench::orchestrator
