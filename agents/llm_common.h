// Helpers shared by the LLM backends (agents/llm_openai.h,
// agents/llm_anthropic.h): tool-call argument parsing, made-up call ids,
// error-body messages and API key redaction. Pure functions over text and
// Json; no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "agents/llm_client.h"
#include "base/json.h"

namespace trench::agents {

// Makes ids for tool calls that came without one: "call_0", "call_1", ...
// One per client, so ids stay unique across the turns of a conversation.
class CallIdSource {
 public:
  std::string Next() { return "call_" + std::to_string(next_++); }

 private:
  int64_t next_ = 0;
};

// Fills call->arguments / raw_arguments / arguments_error from the
// arguments as the model sent them: a JSON string holding an object (the
// OpenAI form), an object (llama.cpp, Ollama), or absent/null/"" (no
// arguments: {}). Text that is not JSON, or JSON that is not an object,
// sets arguments_error (and arguments {}); it is never an error.
void SetToolArguments(const Json* arguments, ToolCall* call);
// Same, from raw text (streamed arguments).
void SetToolArgumentsText(std::string raw, ToolCall* call);

// The text of the server's error reply, for error messages: error.message
// (OpenAI, Anthropic), else message / detail / error as a string, else the
// body itself; cut to 500 bytes.
std::string ErrorBodyMessage(std::string_view body);
// The error's machine-readable kind: error.type and error.code (and a
// top-level type), joined with ' '; "" when none.
std::string ErrorBodyKind(std::string_view body);

// `text` with every occurrence of `secret` replaced by "[redacted]".
// REQUIRES: nothing; an empty secret leaves text unchanged.
std::string Redact(std::string text, std::string_view secret);
Status RedactStatus(const Status& status, std::string_view secret);

// "", "" -> ""; joins base_url and path with exactly one '/'.
std::string JoinUrl(std::string_view base_url, std::string_view path);

// Reads an integer member (usage counts); 0 when absent or not an integer.
int64_t IntMember(const Json& object, std::string_view key);

}  // namespace trench::agents
