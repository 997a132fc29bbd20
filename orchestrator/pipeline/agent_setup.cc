#include "orchestrator/pipeline/agent_setup.h"

#include <filesystem>

#include "agents/llm_brain.h"

namespace trench::orchestrator {

StatusOr<LlmSettings> LlmSettingsOf(const DaemonConfig& config,
                                    const std::string& backend) {
  auto it = config.llm.find(backend);
  if (it == config.llm.end()) {
    return InvalidArgument("config: llm." + backend +
                           " is missing (base_url, model, api_key_env)");
  }
  const LlmBackendConfig& b = it->second;
  LlmSettings s;
  s.client.backend = backend;
  s.client.base_url = b.base_url;
  s.client.model = b.model;
  s.client.api_key_env = b.api_key_env;
  s.client.stream = b.stream;
  s.client.timeout_seconds = b.timeout_seconds;
  s.client.max_retries = b.max_retries;
  s.client.max_backoff_seconds = b.max_retry_after_seconds;
  s.prices.input_usd_per_mtok = b.input_usd_per_mtok;
  s.prices.output_usd_per_mtok = b.output_usd_per_mtok;
  return s;
}

Status CheckAgentSetUp(const DaemonConfig& config) {
  if (!config.prompts_dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(config.prompts_dir, ec)) {
      return FailedPrecondition("prompts_dir " + config.prompts_dir +
                                ": not a directory");
    }
  }
  for (const auto& [role, rc] : config.swarm) {
    if (rc.brain == "builtin") continue;
    const std::string who = "swarm." + role + " (brain " + rc.brain + "): ";
    StatusOr<LlmSettings> llm = LlmSettingsOf(config, rc.brain);
    if (!llm.ok()) {
      return Status(llm.status().code(), who + llm.status().message());
    }
    StatusOr<std::unique_ptr<agents::LlmClient>> client =
        agents::MakeLlmClient(llm->client);
    if (!client.ok()) {
      return Status(client.status().code(), who + client.status().message());
    }
    // Rendered with an empty task: the file, its split line and its
    // placeholders are checked now, not at the role's first session.
    agents::Budgets budgets;
    budgets.max_turns = config.budget_turns;
    StatusOr<agents::RenderedPrompt> prompt = agents::RenderPrompt(
        config.prompts_dir, role, Json::MakeObject(), {}, budgets);
    if (!prompt.ok()) {
      return Status(prompt.status().code(),
                    who + "its prompt: " + prompt.status().message());
    }
  }
  return Status::Ok();
}

}  // namespace trench::orchestrator
