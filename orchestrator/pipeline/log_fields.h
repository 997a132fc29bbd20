// Log lines with fields, for every room of the service that logs (the
// pipeline and the daemon): the message and its fields travel in one
// spdlog payload, and the daemon's formatter (orchestrator/daemon/
// logging.h) prints them as JSON members or key=value pairs. Without that
// formatter (tools, tests without SetUpLogging) the fields follow the
// message after kLogFieldsMark.
#pragma once

#include <spdlog/common.h>

#include <string_view>

#include "base/json.h"

namespace trench::orchestrator {

// Separates the message from its fields' JSON in a log payload.
inline constexpr char kLogFieldsMark = '\x1f';

// Logs `msg` with `fields` (a JSON object; any other value is logged as
// the single field "fields") on the default logger.
void LogWithFields(spdlog::level::level_enum level, std::string_view msg,
                   const Json& fields);

}  // namespace trench::orchestrator
