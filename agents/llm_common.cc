#include "agents/llm_common.h"

namespace trench::agents {
namespace {

constexpr size_t kMaxErrorText = 500;

std::string Cut(std::string_view s) {
  if (s.size() <= kMaxErrorText) return std::string(s);
  return std::string(s.substr(0, kMaxErrorText)) + "...";
}

const char* TypeName(const Json& j) {
  switch (j.type()) {
    case Json::Type::kNull:
      return "null";
    case Json::Type::kBool:
      return "a boolean";
    case Json::Type::kInt64:
    case Json::Type::kUint64:
    case Json::Type::kDouble:
      return "a number";
    case Json::Type::kString:
      return "a string";
    case Json::Type::kArray:
      return "an array";
    case Json::Type::kObject:
      return "an object";
  }
  return "a value";
}

}  // namespace

void SetToolArgumentsText(std::string raw, ToolCall* call) {
  call->raw_arguments = std::move(raw);
  call->arguments = Json::MakeObject();
  call->arguments_error.clear();
  std::string_view text = call->raw_arguments;
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n' ||
                           text.front() == '\t' || text.front() == '\r')) {
    text.remove_prefix(1);
  }
  if (text.empty()) return;  // No arguments.
  auto parsed = ParseJson(text);
  if (!parsed.ok()) {
    call->arguments_error =
        "arguments are not valid JSON: " + parsed.status().message();
  } else if (!parsed->is_object()) {
    call->arguments_error =
        std::string("arguments must be a JSON object, got ") +
        TypeName(*parsed);
  } else {
    call->arguments = std::move(parsed).value();
  }
}

void SetToolArguments(const Json* arguments, ToolCall* call) {
  if (arguments == nullptr || arguments->is_null()) {
    SetToolArgumentsText("", call);
  } else if (arguments->is_string()) {
    SetToolArgumentsText(arguments->string_value(), call);
  } else if (arguments->is_object()) {
    call->raw_arguments = arguments->Dump();
    call->arguments = *arguments;
    call->arguments_error.clear();
  } else {
    call->raw_arguments = arguments->Dump();
    call->arguments = Json::MakeObject();
    call->arguments_error =
        std::string("arguments must be a JSON object, got ") +
        TypeName(*arguments);
  }
}

std::string ErrorBodyMessage(std::string_view body) {
  auto parsed = ParseJson(body);
  if (parsed.ok() && parsed->is_object()) {
    const Json* error = parsed->Find("error");
    if (error && error->is_object()) {
      const Json* m = error->Find("message");
      if (m && m->is_string()) return Cut(m->string_value());
    }
    if (error && error->is_string()) return Cut(error->string_value());
    for (std::string_view key : {"message", "detail"}) {
      const Json* m = parsed->Find(key);
      if (m && m->is_string()) return Cut(m->string_value());
    }
  }
  if (body.empty()) return "(empty body)";
  return Cut(body);
}

std::string ErrorBodyKind(std::string_view body) {
  auto parsed = ParseJson(body);
  if (!parsed.ok() || !parsed->is_object()) return "";
  std::string kind;
  auto add = [&](const Json* j) {
    if (j && j->is_string()) {
      if (!kind.empty()) kind += ' ';
      kind += j->string_value();
    }
  };
  const Json* error = parsed->Find("error");
  if (error && error->is_object()) {
    add(error->Find("type"));
    add(error->Find("code"));
  }
  const Json* type = parsed->Find("type");
  if (type && type->is_string() && type->string_value() != "error") add(type);
  return kind;
}

std::string Redact(std::string text, std::string_view secret) {
  if (secret.empty()) return text;
  size_t pos = 0;
  while ((pos = text.find(secret, pos)) != std::string::npos) {
    text.replace(pos, secret.size(), "[redacted]");
    pos += 10;
  }
  return text;
}

Status RedactStatus(const Status& status, std::string_view secret) {
  if (status.ok()) return status;
  return Status(status.code(), Redact(status.message(), secret));
}

std::string JoinUrl(std::string_view base_url, std::string_view path) {
  while (base_url.ends_with('/')) base_url.remove_suffix(1);
  while (path.starts_with('/')) path.remove_prefix(1);
  return std::string(base_url) + "/" + std::string(path);
}

int64_t IntMember(const Json& object, std::string_view key) {
  const Json* j = object.Find(key);
  if (j == nullptr) return 0;
  auto v = j->GetInt64();
  return v.ok() ? *v : 0;
}

}  // namespace trench::agents
