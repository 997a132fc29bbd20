// The "anthropic" backend: the Messages API with tool_use / tool_result
// blocks (see agents/llm_client.h for the contract). Non-streaming by
// default; streaming SSE when config.stream. The wire-format functions are
// exposed so that tests and fuzzers reach them without HTTP.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "agents/llm_client.h"
#include "agents/llm_common.h"
#include "base/json.h"
#include "base/status.h"

namespace trench::agents {

inline constexpr std::string_view kAnthropicVersion = "2023-06-01";

// The request body for POST {base_url}/messages. The system prompt (and
// any kSystem messages, joined by blank lines) goes to "system"; an
// assistant message becomes text + tool_use blocks; consecutive tool
// results (and a user message right after them) are merged into one user
// message of tool_result blocks (is_error set for failed calls), since the
// API wants every result of a turn in the next user message.
Json BuildAnthropicRequest(const LlmConfig& config, const ChatRequest& request);

// Parses a non-streaming reply. Errors: kInvalidArgument naming the
// problem (not JSON, an error object, no content array, a tool_use block
// without a name). tool_use blocks without an id get one from `ids`.
StatusOr<ChatResponse> ParseAnthropicResponse(std::string_view body,
                                              CallIdSource* ids);

// "tool_use" -> "tool_calls", "end_turn"/"stop_sequence"/"" -> "stop",
// "max_tokens" -> "length", others as given; "tool_calls" whenever tool
// calls are present.
std::string NormalizeAnthropicStop(std::string_view stop_reason,
                                   bool has_tool_calls);

// A client for `config` sending `api_key` (may be empty) as x-api-key.
std::unique_ptr<LlmClient> NewAnthropicClient(LlmConfig config,
                                              std::string api_key);

}  // namespace trench::agents
