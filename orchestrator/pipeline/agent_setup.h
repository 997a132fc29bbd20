// What the swarm's LLM brains need from the daemon's config: the client
// settings of a backend, and the start-up check that every role with an
// LLM brain can run (so a broken set-up stops the daemon at start instead
// of falling back to the built-in brain at every session).
#pragma once

#include <string>

#include "agents/llm_client.h"
#include "agents/runtime.h"
#include "base/status.h"
#include "orchestrator/config/daemon_config.h"

namespace trench::orchestrator {

struct LlmSettings {
  agents::LlmConfig client;
  agents::Prices prices;
};

// config.llm.<backend> as the client's settings and the backend's prices.
// kInvalidArgument when the config has no such section.
StatusOr<LlmSettings> LlmSettingsOf(const DaemonConfig& config,
                                    const std::string& backend);

// For each role whose brain is an LLM backend: the backend's client can
// be made (kFailedPrecondition when its API key variable is unset: the
// operator asked for that brain, so the key must be there), and the role's
// prompt loads and renders (config.prompts_dir/<role>.md when prompts_dir
// is set, else the built-in one). A prompts_dir that is set must be a
// directory. Errors name the role and the variable or file:
//   "swarm.reproducer (brain openai): LLM backend openai: the API key
//    variable OPENAI_API_KEY is not set"
//   "swarm.minimizer (brain openai): its prompt: cannot read the prompt
//    file /etc/trench/prompts/minimizer.md"
Status CheckAgentSetUp(const DaemonConfig& config);

}  // namespace trench::orchestrator
