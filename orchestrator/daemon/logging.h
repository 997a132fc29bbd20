// Structured logs for `trench serve` and the daemon (spdlog).
//
// SetUpLogging installs spdlog's default logger, so plain spdlog::info(...)
// calls anywhere in the daemon go through it. Two formats:
//   human  "2026-11-30T15:50:00.123Z info  build ready commit=1a2b3c4d"
//   json   one object per line: {"ts": "2026-11-30T15:50:00.123Z",
//          "level": "info", "msg": "build ready", "commit": "1a2b3c4d"}
// LogWithFields (orchestrator/pipeline/log_fields.h, so that the pipeline
// can log with fields too) adds fields (members of a JSON object) to one
// message: JSON members in json format, key=value pairs (strings unquoted when
// they hold no space or quote) in human format. Fields named ts, level or msg
// are renamed field.ts, field.level, field.msg so they cannot overwrite
// the line's own.
//
// Repeated lines are rate-limited: a message identical to the one before
// (same text and fields) within 10 s is not printed but counted; the next
// printed line is preceded by "Skipped N duplicate messages..". An error
// that repeats in a loop thus costs one line per 10 s, not one per try.
#pragma once

#include <spdlog/common.h>

#include <ostream>
#include <string>
#include <string_view>

#include "base/json.h"
#include "base/status.h"
#include "orchestrator/pipeline/log_fields.h"

namespace trench::orchestrator {

// Levels by name: trace, debug, info, warn, error, critical, off.
// InvalidArgument naming the value otherwise:
//   "log.level: expected one of trace, debug, info, warn, error, critical,
//   off, got \"loud\"".
StatusOr<spdlog::level::level_enum> ParseLogLevel(std::string_view name);

// Installs the default logger with `format` ("human" or "json") at
// `level`, writing to stderr, or to `*out` when given (tests; `out` must
// outlive the logger, i.e. until the next SetUpLogging). Errors:
// InvalidArgument for an unknown format ("log.format: expected \"human\"
// or \"json\", got \"xml\"") or level; the previous logger then stays.
Status SetUpLogging(std::string_view format, std::string_view level,
                    std::ostream* out = nullptr);

}  // namespace trench::orchestrator
