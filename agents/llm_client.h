// The LLM backends' common contract: one chat turn with tools.
//
// Base URLs end at the API version, as in OpenAI's convention, and the
// backend appends its endpoint after one '/' (ChatUrl):
//   openai     base_url "http://127.0.0.1:8080/v1"
//              -> POST http://127.0.0.1:8080/v1/chat/completions
//   anthropic  base_url "https://api.anthropic.com/v1"
//              -> POST https://api.anthropic.com/v1/messages
// (trailing '/' of base_url ignored). An anthropic base_url whose last
// path segment is not a version ("v1", "v2beta", ...) is refused by
// MakeLlmClient: "https://api.anthropic.com" would POST to /messages, a 404.
//
// Two backends implement it over libcurl (agents/http_client.h):
//   "openai"     Chat Completions with tools, non-streaming, or streaming
//                SSE when `stream` is set. It
//                tolerates the quirks of llama.cpp server, vLLM and Ollama:
//                tool-call arguments given as a JSON string or as an object;
//                missing tool-call ids (made up: "call_<n>"); parallel
//                streamed calls that all carry index 0 (a new id or name
//                starts a new call); a finish_reason that says "stop" while
//                tool calls are present (stop_reason is "tool_calls" then).
//   "anthropic"  The Messages API with tool_use /
//                tool_result blocks, "x-api-key" and "anthropic-version".
// Both retry 408, 409, 429, 500-599 (and 529) with exponential backoff
// that honours Retry-After (seconds or an HTTP date), up to max_retries;
// they never retry quota errors (429 whose error type/code says quota or
// insufficient_quota / billing) nor other 4xx. The API key is read from the
// environment variable named in the config, sent only in its header, and
// never logged nor put into an error message.
//
// Errors:
//   kInvalidArgument    the request was refused (4xx other than the
//                       retried ones), or the reply is malformed (not JSON,
//                       no choices/content, a tool call without a name):
//                       the message names the problem;
//   kResourceExhausted  quota exhausted, or retries used up on 429/529;
//   kDeadlineExceeded   timeouts (after the retries);
//   kIoError            transport failures and 5xx after the retries;
//   kFailedPrecondition a missing API key variable (MakeLlmClient);
//   kCancelled          ChatRequest::cancel became true (the transfer and
//                       any wait between retries stop at once);
//   kDeadlineExceeded   also when ChatRequest::time_limit_seconds ran out
//                       (the message says "time limit").
// A tool call whose arguments are not valid JSON is NOT an error: it comes
// back with `arguments_error` set, so that the runtime can tell the model.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace trench::agents {

// A tool as the model sees it.
struct ToolSpec {
  std::string name;
  std::string description;
  Json parameters;  // A JSON schema (type "object").
};

struct ToolCall {
  std::string id;  // Never empty once returned by a client.
  std::string name;
  Json arguments = Json::MakeObject();  // Parsed; {} when unparseable.
  std::string raw_arguments;            // As the model sent them.
  std::string arguments_error;  // Why raw_arguments did not parse, or "".
};

enum class Role { kSystem, kUser, kAssistant, kTool };
std::string_view RoleName(Role role);  // "system", "user", ...

struct Message {
  Role role = Role::kUser;
  std::string content;               // Text (may be empty with tool calls).
  std::vector<ToolCall> tool_calls;  // kAssistant only.
  std::string tool_call_id;          // kTool only: the call answered.
  std::string tool_name;             // kTool only.
  bool is_error = false;             // kTool only: the call failed.
};

struct ChatRequest {
  std::string system;  // The system prompt (not repeated in messages).
  std::vector<Message> messages;
  std::vector<ToolSpec> tools;
  int max_tokens = 4096;
  double temperature = 0;
  // When set and true (now or during the call), the call stops with
  // kCancelled: the HTTP transfer is dropped and no retry is made. Not
  // owned; must outlive the call. Null: never.
  const std::atomic<bool>* cancel = nullptr;
  // The most the whole call may take, retries and the waits between them
  // included, in seconds: each HTTP request's timeout is the smaller of
  // what is left of it and LlmConfig::timeout_seconds, and no retry starts
  // whose wait would not leave time for it. 0: LlmConfig's limits only.
  double time_limit_seconds = 0;
};

struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
};

struct ChatResponse {
  Message message;          // role kAssistant.
  std::string stop_reason;  // "tool_calls", "stop", "length" (normalized).
  Usage usage;              // Of this turn (0 when the server gave none).
  int attempts = 1;         // HTTP requests made (1 + retries).
};

struct LlmConfig {
  std::string backend;  // "openai" or "anthropic".
  // Up to and including the API version, e.g. "http://127.0.0.1:8080/v1",
  // "https://api.anthropic.com/v1" (see ChatUrl).
  std::string base_url;
  std::string model;
  std::string api_key_env;       // Variable holding the key; "" for none.
  bool stream = false;           // openai: SSE streaming.
  double timeout_seconds = 120;  // Per HTTP request.
  int max_retries = 4;
  double initial_backoff_seconds = 1;
  double max_backoff_seconds = 60;  // Also caps Retry-After.
  // Called instead of sleeping between retries (tests); null: sleep.
  std::function<void(double seconds)> sleep;
};

class LlmClient {
 public:
  virtual ~LlmClient() = default;
  virtual StatusOr<ChatResponse> Chat(const ChatRequest& request) = 0;
  virtual std::string_view backend() const = 0;
};

// The endpoint `backend` POSTs to below the base URL: "chat/completions"
// (openai), "messages" (anthropic); "" for an unknown backend.
std::string_view ChatPath(std::string_view backend);
// The URL a client of `config` POSTs every chat turn to: base_url and
// ChatPath(backend) joined with exactly one '/', e.g.
// "https://api.anthropic.com/v1/messages". No check (MakeLlmClient checks).
std::string ChatUrl(const LlmConfig& config);

// Errors: kInvalidArgument for an unknown backend, an empty base_url /
// model, or an anthropic base_url that does not end at the API version
// (the message names the URL to use); kFailedPrecondition when
// api_key_env names an unset variable.
StatusOr<std::unique_ptr<LlmClient>> MakeLlmClient(const LlmConfig& config);

}  // namespace trench::agents
