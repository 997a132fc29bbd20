// Runs a role's brain for a pipeline step and records the session in the
// store (agent_sessions and their messages), so every agent action can be
// read back with the bug.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "agents/toolbox.h"
#include "base/json.h"
#include "base/status.h"
#include "orchestrator/pipeline/pipeline.h"

namespace trench::orchestrator {

// Runs the brain the config gives `role` (swarm.<role>.brain) on `task`
// with `tools`; an LLM brain falls back to the built-in one when its set-up
// (config, API key), a budget or its backend fails. Records the session
// (backend: the configured brain; messages: the task, the LLM transcript
// with each turn's tokens, "fallback" for a failed set-up, the claim; cost:
// the tokens at llm.<backend>'s prices; status: "done", "fell back to
// builtin: <why>", "interrupted" or "error: <why>", followed by
// " (tokens estimated: the server reported no usage)" when the token counts
// are estimates, agents/runtime.h; fallback_reason: the class of <why>,
// fallback_reason.h). A fallback is logged as a warning with the fields
// role, backend, reason (the class), detail (<why>), bug and session;
// other sessions as "agent done" at info. A session stopped by
// ctx.stopping (the daemon's shutdown, which also cancels the in-flight
// LLM request) is "interrupted" and RunAgent returns kCancelled: the daemon
// gives the job back to the queue (JobQueue::Release, no failure counted)
// and it runs again after the restart. The budgets are the config's, the
// per-bug ones counting the bug's earlier sessions. `bug_id` is absent for
// work on no bug (a landed commit's fuzz campaign). Returns the brain's
// claim. Errors: the brain's.
StatusOr<Json> RunAgent(StepContext& ctx, const std::string& role,
                        std::optional<int64_t> bug_id, const Json& task,
                        agents::ToolBox& tools);

}  // namespace trench::orchestrator
