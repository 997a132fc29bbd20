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
#include <utility>

#include "base/display_text.h"
#include "base/log_context.h"

namespace trench::orchestrator {
namespace {

// Identical lines within this window after the first are counted, not
// printed (logging.h).
constexpr std::chrono::seconds kRepeatWindow{10};
// Separates the message from its fields' JSON in a log payload. The
// context sink always appends one (and JSON text never holds a raw
// 0x1f), so the last one is always the sink's own, whatever the message
// says.
constexpr char kFieldsMark = '\x1f';

constexpr const char* kLevelNames[] = {"trace", "debug",    "info", "warn",
                                       "error", "critical", "off"};

// The fields LogWithFields passes to the context sink, on its own thread
// (the logger is synchronous: sinks run on the logging thread).
thread_local const Json* pending_fields = nullptr;

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
  const size_t mark = payload.rfind(kFieldsMark);
  if (mark == std::string_view::npos) return;
  StatusOr<Json> parsed = ParseJson(payload.substr(mark + 1));
  if (!parsed.ok() || !parsed->is_object()) return;
  *msg = payload.substr(0, mark);
  *fields = std::move(*parsed);
}

// A field name as printed: the line's own names are renamed (field.msg),
// and characters other than [A-Za-z0-9_.-] become '_' so that a key
// cannot break the key=value form.
std::string FieldName(const std::string& key) {
  if (key == "ts" || key == "level" || key == "msg") return "field." + key;
  std::string out = key.empty() ? "_" : key;
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

// A field value in human form: strings bare when they hold only
// printable ASCII without space, quote, backslash or '=', JSON text
// (quoted, escaped) otherwise; so no value spans lines or fakes a field.
std::string HumanValue(const Json& v) {
  if (v.is_string()) {
    const std::string& s = v.string_value();
    const bool bare = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return c > ' ' && c < 0x7f && c != '"' && c != '\\' && c != '=';
    });
    if (bare) return s;
  }
  return EscapeControls(v.Dump(), /*keep_newlines=*/false);
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
    // The message may quote a stranger's text (an error, a title): its
    // controls are shown escaped, so it stays one line.
    line += EscapeControls(msg, /*keep_newlines=*/false);
    if (fields.is_object()) {
      for (const auto& [k, v] : fields.object()) {
        line += " " + FieldName(k) + "=" + HumanValue(v);
      }
    }
    return line + "\n";
  }

  bool json_;
};

// First sink of the logger, on the logging thread: appends the thread's
// context fields (base/log_context.h) and the line's own (LogWithFields,
// which win on a name clash) to the payload, then passes the line on.
// The repeat filter behind it thus compares fields too.
class ContextSink : public spdlog::sinks::sink {
 public:
  explicit ContextSink(spdlog::sink_ptr next) : next_(std::move(next)) {}

  void log(const spdlog::details::log_msg& m) override {
    Json fields = CurrentLogFields();
    if (pending_fields != nullptr) {
      for (const auto& [k, v] : pending_fields->object()) fields[k] = v;
    }
    std::string payload(m.payload.data(), m.payload.size());
    payload += kFieldsMark;
    payload += fields.Dump();
    spdlog::details::log_msg out = m;
    out.payload = spdlog::string_view_t(payload.data(), payload.size());
    next_->log(out);
  }
  void flush() override { next_->flush(); }
  void set_pattern(const std::string&) override {}
  void set_formatter(std::unique_ptr<spdlog::formatter>) override {}

 private:
  spdlog::sink_ptr next_;
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
  auto logger = std::make_shared<spdlog::logger>(
      "trench", std::make_shared<ContextSink>(std::move(dedup)));
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
  return Status::Ok();
}

void LogWithFields(spdlog::level::level_enum level, std::string_view msg,
                   const Json& fields) {
  Json f = fields;
  if (!f.is_object()) {
    Json wrapped = Json::MakeObject();
    wrapped["fields"] = std::move(f);
    f = std::move(wrapped);
  }
  const Json* before = pending_fields;
  pending_fields = &f;
  spdlog::default_logger_raw()->log(level, "{}", msg);
  pending_fields = before;
}

}  // namespace trench::orchestrator
