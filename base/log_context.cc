#include "base/log_context.h"

#include <utility>

namespace trench {
namespace {

Json& ThreadFields() {
  thread_local Json fields = Json::MakeObject();
  return fields;
}

void Apply(const std::string& key, const Json& value) {
  Json& fields = ThreadFields();
  if (value.is_null()) {
    Json kept = Json::MakeObject();
    for (const auto& [k, v] : fields.object()) {
      if (k != key) kept[k] = v;
    }
    fields = std::move(kept);
    return;
  }
  fields[key] = value;
}

}  // namespace

LogScope::LogScope(const Json& fields) : saved_(ThreadFields()) {
  if (!fields.is_object()) return;
  for (const auto& [k, v] : fields.object()) Apply(k, v);
}

LogScope::~LogScope() { ThreadFields() = std::move(saved_); }

void LogScope::Set(const std::string& key, const Json& value) {
  Apply(key, value);
}

const Json& CurrentLogFields() { return ThreadFields(); }

}  // namespace trench
