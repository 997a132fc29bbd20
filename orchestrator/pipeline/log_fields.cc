#include "orchestrator/pipeline/log_fields.h"

#include <spdlog/spdlog.h>

#include <string>

namespace trench::orchestrator {

void LogWithFields(spdlog::level::level_enum level, std::string_view msg,
                   const Json& fields) {
  Json f = fields;
  if (!f.is_object()) {
    Json wrapped = Json::MakeObject();
    wrapped["fields"] = std::move(f);
    f = std::move(wrapped);
  }
  std::string payload(msg);
  payload += kLogFieldsMark;
  payload += f.Dump();
  spdlog::default_logger_raw()->log(level, "{}", payload);
}

}  // namespace trench::orchestrator
