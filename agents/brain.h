// A role's brain (DESIGN.md "Agents"): given a task, it acts through a
// ToolBox and returns its claim. Agents propose; the orchestrator verifies
// every claim with its own tool runs before it moves a bug.
//
// Roles and their tasks / claims (JSON):
//   stress_test_author  task {bug?, area: {ops[], passes[]}, seconds}
//                       claim {findings: [{case, status, signature}]}
//   reproducer          task {bug, case?, report_text?, runs}
//                       claim {case, runs, failures, rate, status,
//                              signature} or {case: null, reason}
//   minimizer           task {bug, case, seconds}
//                       claim {case, before, after}
//   patch_drafter       task {bug, case, localization, culprit: {sha,
//                             summary}, head, culprit_sources?: the
//                             target's source globs of the localized
//                             pass or back end}
//                       claim {candidates: [{candidate, strategy, diff}]}
// A claim is what the brain proposes, as it wrote it (an LLM's may carry
// anything); the orchestrator reads it only through the typed records of
// agents/claims.h, which check its ids and drop what they do not know.
// Brains: "builtin" (deterministic policies, no network) and "openai" /
// "anthropic" (the tool-calling runtime, agents/runtime.h), which fall
// back to builtin when their budget or backend fails.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agents/toolbox.h"
#include "base/json.h"
#include "base/status.h"

namespace trench::agents {

// The roles, in pipeline order: "stress_test_author", "reproducer",
// "minimizer", "patch_drafter".
const std::vector<std::string>& RoleNames();

class Brain {
 public:
  virtual ~Brain() = default;
  // Runs the role on `task`. Errors: kInvalidArgument for a malformed
  // task; a tool's set-up errors. "Could not do it" is a claim with a
  // reason, not an error.
  virtual StatusOr<Json> Run(const Json& task, ToolBox& tools) = 0;
};

// The built-in brain of `role`. kInvalidArgument for an unknown role.
StatusOr<std::unique_ptr<Brain>> MakeBuiltinBrain(const std::string& role);

}  // namespace trench::agents
