#include "agents/llm_anthropic_stream.h"

#include <utility>

#include "agents/llm_anthropic.h"

namespace trench::agents {
namespace {

std::string StringMember(const Json& j, std::string_view key) {
  const Json* v = j.Find(key);
  return v && v->is_string() ? v->string_value() : "";
}

}  // namespace

Status AnthropicStreamAccumulator::OnEvent(const SseEvent& event) {
  ++events_;
  const std::string where = "anthropic stream event " + std::to_string(events_);
  auto parsed = ParseJson(event.data);
  if (!parsed.ok()) {
    return InvalidArgument(where +
                           " is not JSON: " + parsed.status().message());
  }
  const Json& j = *parsed;
  if (!j.is_object()) return InvalidArgument(where + " is not an object");
  std::string type = StringMember(j, "type");
  if (type.empty()) type = event.event;
  if (type == "error") {
    return IoError(where + " is an error: " + ErrorBodyMessage(event.data));
  }
  const Json* index_json = j.Find("index");
  const int64_t index =
      index_json && index_json->is_integer() && index_json->GetInt64().ok()
          ? *index_json->GetInt64()
          : 0;
  if (type == "message_start") {
    const Json* message = j.Find("message");
    const Json* usage = message ? message->Find("usage") : nullptr;
    if (usage && usage->is_object()) {
      usage_.input_tokens = IntMember(*usage, "input_tokens") +
                            IntMember(*usage, "cache_creation_input_tokens") +
                            IntMember(*usage, "cache_read_input_tokens");
      usage_.output_tokens = IntMember(*usage, "output_tokens");
    }
  } else if (type == "content_block_start") {
    const Json* cb = j.Find("content_block");
    if (cb == nullptr || !cb->is_object()) {
      return InvalidArgument(where + ": content_block_start without a block");
    }
    Block block;
    block.type = StringMember(*cb, "type");
    block.text = StringMember(*cb, "text");
    block.id = StringMember(*cb, "id");
    block.name = StringMember(*cb, "name");
    if (const Json* input = cb->Find("input")) block.initial_input = *input;
    blocks_[index] = std::move(block);
  } else if (type == "content_block_delta") {
    const Json* delta = j.Find("delta");
    if (delta == nullptr || !delta->is_object()) return Status::Ok();
    Block& block = blocks_[index];  // Lenient: a delta without its start.
    const std::string dtype = StringMember(*delta, "type");
    if (dtype == "text_delta") {
      if (block.type.empty()) block.type = "text";
      block.text += StringMember(*delta, "text");
    } else if (dtype == "input_json_delta") {
      if (block.type.empty()) block.type = "tool_use";
      block.input_json += StringMember(*delta, "partial_json");
    }
  } else if (type == "message_delta") {
    const Json* delta = j.Find("delta");
    if (delta && delta->is_object()) {
      const std::string stop = StringMember(*delta, "stop_reason");
      if (!stop.empty()) {
        stop_reason_ = stop;
        stopped_ = true;
      }
    }
    if (const Json* usage = j.Find("usage"); usage && usage->is_object()) {
      if (usage->Find("output_tokens")) {
        usage_.output_tokens = IntMember(*usage, "output_tokens");
      }
    }
  } else if (type == "message_stop") {
    stopped_ = true;
  }  // ping, content_block_stop and unknown events carry nothing we need.
  return Status::Ok();
}

StatusOr<ChatResponse> AnthropicStreamAccumulator::Finish() {
  if (!stopped_) {
    return IoError("anthropic stream ended before message_stop");
  }
  ChatResponse out;
  out.message.role = Role::kAssistant;
  for (auto& [index, block] : blocks_) {
    if (block.type == "text") {
      out.message.content += block.text;
    } else if (block.type == "tool_use") {
      if (block.name.empty()) {
        return InvalidArgument("anthropic stream: tool_use block " +
                               std::to_string(index) + " has no name");
      }
      ToolCall call;
      call.id = block.id.empty() ? ids_->Next() : block.id;
      call.name = block.name;
      if (!block.input_json.empty()) {
        SetToolArgumentsText(block.input_json, &call);
      } else {
        SetToolArguments(&block.initial_input, &call);
      }
      out.message.tool_calls.push_back(std::move(call));
    }
  }
  out.stop_reason =
      NormalizeAnthropicStop(stop_reason_, !out.message.tool_calls.empty());
  out.usage = usage_;
  return out;
}

}  // namespace trench::agents
