// The "openai" backend: Chat Completions with tools (see agents/llm_client.h
// for the contract and the server quirks it tolerates). The wire-format
// functions are exposed so that tests and fuzzers reach them without HTTP.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "agents/llm_client.h"
#include "agents/llm_common.h"
#include "base/json.h"
#include "base/status.h"

namespace trench::agents {

// The request body for POST {base_url}/chat/completions: the system prompt
// first, then the messages (assistant tool calls with their arguments as a
// JSON string, tool results as role "tool" with tool_call_id; a failed
// call's content is prefixed "ERROR: "), the tools as "function" tools,
// and "stream"/"stream_options" when config.stream.
Json BuildOpenAiRequest(const LlmConfig& config, const ChatRequest& request);

// Parses a non-streaming reply body. Tool calls without an id get one from
// `ids`. Errors: kInvalidArgument naming the problem (not JSON, an "error"
// member, no choices, no message, a tool call without a function name).
StatusOr<ChatResponse> ParseOpenAiResponse(std::string_view body,
                                           CallIdSource* ids);

// The normalized stop reason from a finish_reason ("" for null/absent):
// "tool_calls" whenever tool calls are present, "stop" for ""/"stop"/
// "eos", "length" for "length"/"max_tokens", anything else as given.
std::string NormalizeOpenAiFinish(std::string_view finish_reason,
                                  bool has_tool_calls);

// A client for `config` sending `api_key` (may be empty) as a Bearer token.
std::unique_ptr<LlmClient> NewOpenAiClient(LlmConfig config,
                                           std::string api_key);

}  // namespace trench::agents
