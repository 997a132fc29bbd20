#include "agents/llm_client.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include "agents/llm_anthropic.h"
#include "agents/llm_common.h"
#include "agents/llm_openai.h"

namespace trench::agents {
namespace {

// True when the last path segment of `url` is an API version: 'v', a
// digit, then letters or digits ("v1", "v1beta").
bool EndsAtVersion(std::string_view url) {
  while (url.ends_with('/')) url.remove_suffix(1);
  const size_t query = url.find_first_of("?#");
  if (query != std::string_view::npos) url = url.substr(0, query);
  const size_t slash = url.rfind('/');
  if (slash == std::string_view::npos) return false;
  const std::string_view last = url.substr(slash + 1);
  if (last.size() < 2 || last[0] != 'v' || last[1] < '0' || last[1] > '9') {
    return false;
  }
  for (char c : last) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

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

std::string_view ChatPath(std::string_view backend) {
  if (backend == "openai") return "chat/completions";
  if (backend == "anthropic") return "messages";
  return "";
}

std::string ChatUrl(const LlmConfig& config) {
  return JoinUrl(config.base_url, ChatPath(config.backend));
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
  if (config.backend == "anthropic" && !EndsAtVersion(config.base_url)) {
    std::string_view base = config.base_url;
    while (base.ends_with('/')) base.remove_suffix(1);
    return InvalidArgument(
        "LLM backend anthropic: base_url '" + config.base_url +
        "' must end at the API version (e.g. '" + std::string(base) +
        "/v1'): requests go to " + ChatUrl(config));
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
