// Runs a role's brain for a pipeline step and records the session in the
// store (agent_sessions and their messages), so every agent action can be
// read back with the bug.
#pragma once

#include <string>

#include "agents/toolbox.h"
#include "base/json.h"
#include "base/status.h"
#include "orchestrator/pipeline.h"

namespace trench::orchestrator {

// Runs the brain the config gives `role` (swarm.<role>.brain) on `task`
// with `tools`; an LLM brain falls back to the built-in one when its
// budget or backend fails. Records the session (task, claim or error,
// tokens). Returns the brain's claim. Errors: the brain's.
StatusOr<Json> RunAgent(StepContext& ctx, const std::string& role,
                        int64_t bug_id, const Json& task,
                        agents::ToolBox& tools);

}  // namespace trench::orchestrator
