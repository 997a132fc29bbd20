#include "agents/llm_openai_stream.h"

#include <utility>

#include "agents/llm_openai.h"

namespace trench::agents {

Status OpenAiStreamAccumulator::OnEvent(const SseEvent& event) {
  ++events_;
  if (IsDone(event)) {
    done_ = true;
    return Status::Ok();
  }
  const std::string where = "openai stream event " + std::to_string(events_);
  auto parsed = ParseJson(event.data);
  if (!parsed.ok()) {
    return InvalidArgument(where +
                           " is not JSON: " + parsed.status().message());
  }
  const Json& j = *parsed;
  if (!j.is_object()) return InvalidArgument(where + " is not an object");
  if (const Json* error = j.Find("error"); error && !error->is_null()) {
    return IoError(where + " is an error: " + ErrorBodyMessage(event.data));
  }
  if (const Json* usage = j.Find("usage"); usage && usage->is_object()) {
    usage_.input_tokens = IntMember(*usage, "prompt_tokens");
    usage_.output_tokens = IntMember(*usage, "completion_tokens");
  }
  const Json* choices = j.Find("choices");
  if (choices == nullptr || !choices->is_array()) return Status::Ok();
  for (const Json& choice : choices->array()) {
    const Json* index = choice.Find("index");
    if (index && index->is_integer() && !(*index == Json(0))) continue;
    if (const Json* delta = choice.Find("delta"); delta && delta->is_object()) {
      if (const Json* c = delta->Find("content"); c && c->is_string()) {
        content_ += c->string_value();
      }
      if (const Json* calls = delta->Find("tool_calls");
          calls && calls->is_array()) {
        for (const Json& call : calls->array()) OnToolCallDelta(call);
      }
    }
    if (const Json* f = choice.Find("finish_reason"); f && f->is_string()) {
      finished_ = true;
      finish_reason_ = f->string_value();
    }
  }
  return Status::Ok();
}

void OpenAiStreamAccumulator::OnToolCallDelta(const Json& delta) {
  if (!delta.is_object()) return;
  const Json* index_json = delta.Find("index");
  const bool has_index =
      index_json && index_json->is_integer() && index_json->GetInt64().ok();
  const int64_t index = has_index ? *index_json->GetInt64() : -1;
  const Json* fn = delta.Find("function");
  if (fn == nullptr || !fn->is_object()) fn = &delta;
  const Json* id_json = delta.Find("id");
  const Json* name_json = fn->Find("name");
  const std::string id =
      id_json && id_json->is_string() ? id_json->string_value() : "";
  const std::string name =
      name_json && name_json->is_string() ? name_json->string_value() : "";

  PartialCall* current = nullptr;
  if (auto it = slot_.find(index); it != slot_.end()) {
    current = &calls_[it->second];
  } else if (!has_index && !calls_.empty()) {
    current = &calls_.back();
  }
  bool start_new = current == nullptr;
  if (current != nullptr) {
    if (!id.empty() && !current->id.empty()) {
      start_new = id != current->id;  // A new id: a new (parallel) call.
    } else if (!name.empty() && !current->name.empty()) {
      start_new = true;  // A second name without ids: a new call.
    }
  }
  if (start_new) {
    calls_.emplace_back();
    slot_[index] = calls_.size() - 1;
    current = &calls_.back();
  }
  if (current->id.empty()) current->id = id;
  if (current->name.empty()) current->name = name;
  if (const Json* args = fn->Find("arguments"); args != nullptr) {
    if (args->is_string()) {
      current->arguments += args->string_value();
    } else if (!args->is_null()) {
      current->arguments = args->Dump();  // Sent whole, as an object.
    }
  }
}

StatusOr<ChatResponse> OpenAiStreamAccumulator::Finish() {
  if (!complete()) {
    return IoError("openai stream ended before a finish_reason or [DONE]");
  }
  ChatResponse out;
  out.message.role = Role::kAssistant;
  out.message.content = content_;
  for (size_t i = 0; i < calls_.size(); ++i) {
    const PartialCall& p = calls_[i];
    if (p.name.empty()) {
      return InvalidArgument("openai stream: tool call " + std::to_string(i) +
                             " has no function name");
    }
    ToolCall call;
    call.id = p.id.empty() ? ids_->Next() : p.id;
    call.name = p.name;
    SetToolArgumentsText(p.arguments, &call);
    out.message.tool_calls.push_back(std::move(call));
  }
  out.stop_reason =
      NormalizeOpenAiFinish(finish_reason_, !out.message.tool_calls.empty());
  out.usage = usage_;
  return out;
}

}  // namespace trench::agents
