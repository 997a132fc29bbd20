#include "orchestrator/daemon/logging.h"

#include <spdlog/formatter.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/dup_filter_sink.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>

namespace trench::orchestrator {
namespace {

// Identical lines within this window after the first are counted, not
// printed (logging.h).
constexpr std::chrono::seconds kRepeatWindow{10};

constexpr const char* kLevelNames[] = {"trace", "debug",    "info", "warn",
                                       "error", "critical", "off"};

// "2026-11-30T15:50:00.123Z".
std::string Timestamp(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      t.time_since_epoch())
                      .count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof(out), "%s.%03dZ", buf, static_cast<int>(ms % 1000));
  return out;
}

// Splits a payload into the message and its fields (an object, or null
// when the payload carries none).
void SplitPayload(std::string_view payload, std::string_view* msg,
                  Json* fields) {
  *msg = payload;
  *fields = Json();
  const size_t mark = payload.rfind(kLogFieldsMark);
  if (mark == std::string_view::npos) return;
  StatusOr<Json> parsed = ParseJson(payload.substr(mark + 1));
  if (!parsed.ok() || !parsed->is_object()) return;
  *msg = payload.substr(0, mark);
  *fields = std::move(*parsed);
}

std::string FieldName(const std::string& key) {
  return key == "ts" || key == "level" || key == "msg" ? "field." + key : key;
}

// A field value in human form: strings bare unless they need quotes.
std::string HumanValue(const Json& v) {
  if (v.is_string()) {
    const std::string& s = v.string_value();
    if (!s.empty() && s.find_first_of(" \"=\t\n") == std::string::npos) {
      return s;
    }
  }
  return v.Dump();
}

class LineFormatter : public spdlog::formatter {
 public:
  explicit LineFormatter(bool json) : json_(json) {}

  void format(const spdlog::details::log_msg& m,
              spdlog::memory_buf_t& dest) override {
    std::string_view msg;
    Json fields;
    SplitPayload(std::string_view(m.payload.data(), m.payload.size()), &msg,
                 &fields);
    const std::string line =
        json_ ? JsonLine(m, msg, fields) : HumanLine(m, msg, fields);
    dest.append(line.data(), line.data() + line.size());
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<LineFormatter>(json_);
  }

 private:
  static std::string JsonLine(const spdlog::details::log_msg& m,
                              std::string_view msg, const Json& fields) {
    Json j = Json::MakeObject();
    j["ts"] = Timestamp(m.time);
    j["level"] = kLevelNames[m.level];
    j["msg"] = msg;
    if (fields.is_object()) {
      for (const auto& [k, v] : fields.object()) j[FieldName(k)] = v;
    }
    return j.Dump() + "\n";
  }

  static std::string HumanLine(const spdlog::details::log_msg& m,
                               std::string_view msg, const Json& fields) {
    std::string lvl = kLevelNames[m.level];
    lvl.resize(std::max<size_t>(lvl.size(), 5), ' ');
    std::string line = Timestamp(m.time) + " " + lvl + " ";
    line += msg;
    if (fields.is_object()) {
      for (const auto& [k, v] : fields.object()) {
        line += " " + FieldName(k) + "=" + HumanValue(v);
      }
    }
    return line + "\n";
  }

  bool json_;
};

}  // namespace

StatusOr<spdlog::level::level_enum> ParseLogLevel(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kLevelNames)); ++i) {
    if (name == kLevelNames[i]) {
      return static_cast<spdlog::level::level_enum>(i);
    }
  }
  return InvalidArgument(
      "log.level: expected one of trace, debug, info, warn, error, critical, "
      "off, got \"" +
      std::string(name) + "\"");
}

Status SetUpLogging(std::string_view format, std::string_view level,
                    std::ostream* out) {
  if (format != "human" && format != "json") {
    return InvalidArgument(
        "log.format: expected \"human\" or \"json\", got \"" +
        std::string(format) + "\"");
  }
  ASSIGN_OR_RETURN(spdlog::level::level_enum lvl, ParseLogLevel(level));
  spdlog::sink_ptr sink;
  if (out != nullptr) {
    sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(
        *out, /*force_flush=*/true);
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  }
  sink->set_formatter(std::make_unique<LineFormatter>(format == "json"));
  // A line repeated back to back (an error in a loop) is printed once per
  // kRepeatWindow, then "Skipped N duplicate messages..".
  auto dedup =
      std::make_shared<spdlog::sinks::dup_filter_sink_mt>(kRepeatWindow);
  dedup->add_sink(std::move(sink));
  auto logger = std::make_shared<spdlog::logger>("trench", std::move(dedup));
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
  return Status::Ok();
}

}  // namespace trench::orchestrator
