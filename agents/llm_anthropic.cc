#include "agents/llm_anthropic.h"

#include <utility>

#include "agents/llm_anthropic_stream.h"
#include "agents/llm_http_client.h"

namespace trench::agents {
namespace {

// The API refuses empty messages; this stands in for an empty one.
constexpr std::string_view kEmptyContent = "(no content)";

Json TextBlock(std::string_view text) {
  return Json(Json::Object{{"type", "text"}, {"text", std::string(text)}});
}

Json AssistantBlocks(const Message& m) {
  Json blocks = Json::MakeArray();
  if (!m.content.empty()) blocks.push_back(TextBlock(m.content));
  for (const ToolCall& c : m.tool_calls) {
    Json b = Json::MakeObject();
    b["type"] = "tool_use";
    b["id"] = c.id;
    b["name"] = c.name;
    b["input"] = c.arguments.is_object() ? c.arguments : Json::MakeObject();
    blocks.push_back(std::move(b));
  }
  if (blocks.size() == 0) blocks.push_back(TextBlock(kEmptyContent));
  return blocks;
}

Json UserBlock(const Message& m) {
  if (m.role == Role::kTool) {
    Json b = Json::MakeObject();
    b["type"] = "tool_result";
    b["tool_use_id"] = m.tool_call_id;
    b["content"] = m.content;
    if (m.is_error) b["is_error"] = true;
    return b;
  }
  return TextBlock(m.content.empty() ? kEmptyContent : m.content);
}

}  // namespace

std::string NormalizeAnthropicStop(std::string_view stop_reason,
                                   bool has_tool_calls) {
  if (has_tool_calls) return "tool_calls";
  if (stop_reason.empty() || stop_reason == "end_turn" ||
      stop_reason == "stop_sequence" || stop_reason == "tool_use") {
    return "stop";
  }
  if (stop_reason == "max_tokens") return "length";
  return std::string(stop_reason);
}

Json BuildAnthropicRequest(const LlmConfig& config,
                           const ChatRequest& request) {
  Json j = Json::MakeObject();
  j["model"] = config.model;
  j["max_tokens"] = request.max_tokens;
  std::string system = request.system;
  std::vector<std::pair<std::string, Json>> turns;  // (role, blocks)
  for (const Message& m : request.messages) {
    if (m.role == Role::kSystem) {
      system += (system.empty() ? "" : "\n\n") + m.content;
      continue;
    }
    const std::string role = m.role == Role::kAssistant ? "assistant" : "user";
    if (role == "assistant") {
      turns.emplace_back(role, AssistantBlocks(m));
    } else if (!turns.empty() && turns.back().first == "user") {
      turns.back().second.push_back(UserBlock(m));  // Merge user turns.
    } else {
      turns.emplace_back(role, Json(Json::Array{UserBlock(m)}));
    }
  }
  if (!system.empty()) j["system"] = system;
  Json messages = Json::MakeArray();
  for (auto& [role, blocks] : turns) {
    messages.push_back(
        Json(Json::Object{{"role", role}, {"content", std::move(blocks)}}));
  }
  j["messages"] = std::move(messages);
  if (!request.tools.empty()) {
    Json tools = Json::MakeArray();
    for (const ToolSpec& t : request.tools) {
      Json tool = Json::MakeObject();
      tool["name"] = t.name;
      tool["description"] = t.description;
      tool["input_schema"] = t.parameters.is_null()
                                 ? Json(Json::Object{{"type", "object"}})
                                 : t.parameters;
      tools.push_back(std::move(tool));
    }
    j["tools"] = std::move(tools);
  }
  j["temperature"] = request.temperature;
  if (config.stream) j["stream"] = true;
  return j;
}

StatusOr<ChatResponse> ParseAnthropicResponse(std::string_view body,
                                              CallIdSource* ids) {
  auto parsed = ParseJson(body);
  if (!parsed.ok()) {
    return InvalidArgument("anthropic reply is not JSON: " +
                           parsed.status().message());
  }
  const Json& j = *parsed;
  if (!j.is_object())
    return InvalidArgument("anthropic reply is not an object");
  const Json* type = j.Find("type");
  if ((type && type->is_string() && type->string_value() == "error") ||
      (j.Find("error") && !j.Find("error")->is_null())) {
    return InvalidArgument("anthropic reply is an error: " +
                           ErrorBodyMessage(body));
  }
  const Json* content = j.Find("content");
  if (content == nullptr || !content->is_array()) {
    return InvalidArgument("anthropic reply has no content array");
  }
  ChatResponse out;
  out.message.role = Role::kAssistant;
  for (size_t i = 0; i < content->size(); ++i) {
    const Json& block = content->array()[i];
    const Json* btype = block.Find("type");
    if (btype == nullptr || !btype->is_string()) {
      return InvalidArgument("anthropic reply: content block " +
                             std::to_string(i) + " has no type");
    }
    if (btype->string_value() == "text") {
      const Json* text = block.Find("text");
      if (text && text->is_string())
        out.message.content += text->string_value();
    } else if (btype->string_value() == "tool_use") {
      const Json* name = block.Find("name");
      if (name == nullptr || !name->is_string() ||
          name->string_value().empty()) {
        return InvalidArgument("anthropic reply: tool_use block " +
                               std::to_string(i) + " has no name");
      }
      ToolCall call;
      call.name = name->string_value();
      const Json* id = block.Find("id");
      call.id = id && id->is_string() && !id->string_value().empty()
                    ? id->string_value()
                    : ids->Next();
      SetToolArguments(block.Find("input"), &call);
      out.message.tool_calls.push_back(std::move(call));
    }  // Other blocks (thinking, ...) are not part of the message.
  }
  const Json* stop = j.Find("stop_reason");
  out.stop_reason = NormalizeAnthropicStop(
      stop && stop->is_string() ? stop->string_value() : "",
      !out.message.tool_calls.empty());
  if (const Json* usage = j.Find("usage"); usage && usage->is_object()) {
    out.usage.input_tokens = IntMember(*usage, "input_tokens") +
                             IntMember(*usage, "cache_creation_input_tokens") +
                             IntMember(*usage, "cache_read_input_tokens");
    out.usage.output_tokens = IntMember(*usage, "output_tokens");
  }
  return out;
}

std::unique_ptr<LlmClient> NewAnthropicClient(LlmConfig config,
                                              std::string api_key) {
  HttpLlmBackend backend;
  backend.name = "anthropic";
  backend.path = std::string(ChatPath(backend.name));
  backend.headers.emplace_back("anthropic-version",
                               std::string(kAnthropicVersion));
  if (!api_key.empty()) backend.headers.emplace_back("x-api-key", api_key);
  backend.build_request = BuildAnthropicRequest;
  backend.parse_reply = ParseAnthropicResponse;
  backend.new_stream = MakeStreamAccumulator<AnthropicStreamAccumulator>;
  backend.stream_end_name = "message_stop";
  return NewHttpLlmClient(std::move(config), std::move(api_key),
                          std::move(backend));
}

}  // namespace trench::agents
