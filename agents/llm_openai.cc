#include "agents/llm_openai.h"

#include <utility>

#include "agents/llm_http_client.h"
#include "agents/llm_openai_stream.h"

namespace trench::agents {
namespace {

Json ToolCallJson(const ToolCall& call) {
  Json fn = Json::MakeObject();
  fn["name"] = call.name;
  // Send back exactly what the model wrote, so that it sees its own error.
  fn["arguments"] = call.raw_arguments.empty() && call.arguments_error.empty()
                        ? call.arguments.Dump()
                        : call.raw_arguments;
  Json j = Json::MakeObject();
  j["id"] = call.id;
  j["type"] = "function";
  j["function"] = std::move(fn);
  return j;
}

Json MessageJson(const Message& m) {
  Json j = Json::MakeObject();
  j["role"] = std::string(RoleName(m.role));
  if (m.role == Role::kTool) {
    j["tool_call_id"] = m.tool_call_id;
    j["content"] = m.is_error ? "ERROR: " + m.content : m.content;
    return j;
  }
  j["content"] = m.content;
  if (m.role == Role::kAssistant && !m.tool_calls.empty()) {
    Json calls = Json::MakeArray();
    for (const ToolCall& c : m.tool_calls) calls.push_back(ToolCallJson(c));
    j["tool_calls"] = std::move(calls);
  }
  return j;
}

// Message content: a string, null, or an array of {"type":"text"} parts.
StatusOr<std::string> ContentText(const Json* content) {
  if (content == nullptr || content->is_null()) return std::string();
  if (content->is_string()) return content->string_value();
  if (content->is_array()) {
    std::string text;
    for (const Json& part : content->array()) {
      const Json* t = part.Find("text");
      if (t && t->is_string()) text += t->string_value();
    }
    return text;
  }
  return InvalidArgument(
      "openai reply: message content is neither a string "
      "nor an array of parts");
}

StatusOr<ToolCall> ParseToolCall(const Json& j, size_t i, CallIdSource* ids) {
  const std::string where = "openai reply: tool call " + std::to_string(i);
  if (!j.is_object()) return InvalidArgument(where + " is not an object");
  // {"function": {"name", "arguments"}}, or the legacy flat form.
  const Json* fn = j.Find("function");
  if (fn == nullptr || !fn->is_object()) fn = &j;
  const Json* name = fn->Find("name");
  if (name == nullptr || !name->is_string() || name->string_value().empty()) {
    return InvalidArgument(where + " has no function name");
  }
  ToolCall call;
  call.name = name->string_value();
  const Json* id = j.Find("id");
  call.id = id && id->is_string() && !id->string_value().empty()
                ? id->string_value()
                : ids->Next();
  SetToolArguments(fn->Find("arguments"), &call);
  return call;
}

}  // namespace

std::string NormalizeOpenAiFinish(std::string_view finish_reason,
                                  bool has_tool_calls) {
  if (has_tool_calls) return "tool_calls";
  if (finish_reason.empty() || finish_reason == "stop" ||
      finish_reason == "eos" || finish_reason == "tool_calls" ||
      finish_reason == "function_call") {
    return "stop";
  }
  if (finish_reason == "length" || finish_reason == "max_tokens") {
    return "length";
  }
  return std::string(finish_reason);
}

Json BuildOpenAiRequest(const LlmConfig& config, const ChatRequest& request) {
  Json j = Json::MakeObject();
  j["model"] = config.model;
  Json messages = Json::MakeArray();
  if (!request.system.empty()) {
    Message system;
    system.role = Role::kSystem;
    system.content = request.system;
    messages.push_back(MessageJson(system));
  }
  for (const Message& m : request.messages) messages.push_back(MessageJson(m));
  j["messages"] = std::move(messages);
  if (!request.tools.empty()) {
    Json tools = Json::MakeArray();
    for (const ToolSpec& t : request.tools) {
      Json fn = Json::MakeObject();
      fn["name"] = t.name;
      fn["description"] = t.description;
      fn["parameters"] = t.parameters.is_null()
                             ? Json(Json::Object{{"type", "object"}})
                             : t.parameters;
      Json tool = Json::MakeObject();
      tool["type"] = "function";
      tool["function"] = std::move(fn);
      tools.push_back(std::move(tool));
    }
    j["tools"] = std::move(tools);
  }
  j["max_tokens"] = request.max_tokens;
  j["temperature"] = request.temperature;
  if (config.stream) {
    j["stream"] = true;
    j["stream_options"] = Json(Json::Object{{"include_usage", true}});
  }
  return j;
}

StatusOr<ChatResponse> ParseOpenAiResponse(std::string_view body,
                                           CallIdSource* ids) {
  auto parsed = ParseJson(body);
  if (!parsed.ok()) {
    return InvalidArgument("openai reply is not JSON: " +
                           parsed.status().message());
  }
  const Json& j = *parsed;
  if (!j.is_object()) return InvalidArgument("openai reply is not an object");
  if (const Json* error = j.Find("error"); error && !error->is_null()) {
    return InvalidArgument("openai reply is an error: " +
                           ErrorBodyMessage(body));
  }
  const Json* choices = j.Find("choices");
  if (choices == nullptr || !choices->is_array() || choices->size() == 0) {
    return InvalidArgument("openai reply has no choices");
  }
  const Json& choice = choices->array()[0];
  const Json* message = choice.Find("message");
  if (message == nullptr || !message->is_object()) {
    return InvalidArgument("openai reply: choice 0 has no message");
  }
  ChatResponse out;
  out.message.role = Role::kAssistant;
  ASSIGN_OR_RETURN(out.message.content, ContentText(message->Find("content")));
  const Json* calls = message->Find("tool_calls");
  if (calls != nullptr && !calls->is_null() && !calls->is_array()) {
    return InvalidArgument("openai reply: tool_calls is not an array");
  }
  if (calls != nullptr && calls->is_array()) {
    for (size_t i = 0; i < calls->size(); ++i) {
      ASSIGN_OR_RETURN(ToolCall call, ParseToolCall(calls->array()[i], i, ids));
      out.message.tool_calls.push_back(std::move(call));
    }
  } else if (const Json* fc = message->Find("function_call");
             fc && fc->is_object()) {
    ASSIGN_OR_RETURN(ToolCall call, ParseToolCall(*fc, 0, ids));
    out.message.tool_calls.push_back(std::move(call));
  }
  if (message->Find("content") == nullptr && out.message.tool_calls.empty()) {
    return InvalidArgument(
        "openai reply: message has neither content nor tool_calls");
  }
  const Json* finish = choice.Find("finish_reason");
  out.stop_reason = NormalizeOpenAiFinish(
      finish && finish->is_string() ? finish->string_value() : "",
      !out.message.tool_calls.empty());
  if (const Json* usage = j.Find("usage"); usage && usage->is_object()) {
    out.usage.input_tokens = IntMember(*usage, "prompt_tokens");
    out.usage.output_tokens = IntMember(*usage, "completion_tokens");
  }
  return out;
}

std::unique_ptr<LlmClient> NewOpenAiClient(LlmConfig config,
                                           std::string api_key) {
  HttpLlmBackend backend;
  backend.name = "openai";
  backend.path = std::string(ChatPath(backend.name));
  if (!api_key.empty()) {
    backend.headers.emplace_back("Authorization", "Bearer " + api_key);
  }
  backend.build_request = BuildOpenAiRequest;
  backend.parse_reply = ParseOpenAiResponse;
  backend.new_stream = MakeStreamAccumulator<OpenAiStreamAccumulator>;
  backend.stream_end_name = "a finish_reason or [DONE]";
  return NewHttpLlmClient(std::move(config), std::move(api_key),
                          std::move(backend));
}

}  // namespace trench::agents
