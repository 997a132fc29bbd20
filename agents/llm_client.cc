#include "agents/llm_client.h"

#include <cstdlib>
#include <string>

#include "agents/llm_anthropic.h"
#include "agents/llm_openai.h"

namespace trench::agents {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kSystem:
      return "system";
    case Role::kUser:
      return "user";
    case Role::kAssistant:
      return "assistant";
    case Role::kTool:
      return "tool";
  }
  return "unknown";
}

StatusOr<std::unique_ptr<LlmClient>> MakeLlmClient(const LlmConfig& config) {
  if (config.backend != "openai" && config.backend != "anthropic") {
    return InvalidArgument("unknown LLM backend '" + config.backend +
                           "' (expected openai or anthropic)");
  }
  if (config.base_url.empty()) {
    return InvalidArgument("LLM backend " + config.backend +
                           ": base_url is empty");
  }
  if (config.model.empty()) {
    return InvalidArgument("LLM backend " + config.backend +
                           ": model is empty");
  }
  std::string api_key;
  if (!config.api_key_env.empty()) {
    const char* value = std::getenv(config.api_key_env.c_str());
    if (value == nullptr || *value == '\0') {
      return FailedPrecondition("LLM backend " + config.backend +
                                ": the API key variable " + config.api_key_env +
                                " is not set");
    }
    api_key = value;
  }
  if (config.backend == "openai") {
    return NewOpenAiClient(config, std::move(api_key));
  }
  return NewAnthropicClient(config, std::move(api_key));
}

}  // namespace trench::agents
