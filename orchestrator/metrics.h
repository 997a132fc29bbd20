// The daemon's Prometheus metrics (text exposition format 0.0.4), read
// from the store on each scrape, so they survive restarts and agree with
// the API. The metric list lives in one table in metrics.cc:
//   trench_bugs{state="..."}          gauge, one series per lifecycle state
//   trench_jobs{state="..."}          gauge, one series per job state
//   trench_target_runs_total          counter, target runs recorded
//   trench_fuzz_programs_total        counter, programs fuzzed
//   trench_fuzz_seconds_total         counter, seconds fuzzed (the rate)
//   trench_fuzz_rate                  gauge, programs/s of the newest
//                                     finished campaign
//   trench_agent_tokens_total         counter, LLM tokens (input + output)
#pragma once

#include <string>

#include "base/status.h"
#include "orchestrator/store.h"

namespace trench::orchestrator {

// The exposition text for the store's current counts. `store` is not
// owned and is used on the calling thread only. Errors: the store's.
StatusOr<std::string> RenderMetrics(Store* store);

}  // namespace trench::orchestrator
