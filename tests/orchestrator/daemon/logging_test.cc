// The daemon's log set-up (orchestrator/daemon/logging.h): JSON lines that
// parse, the human form, levels, and errors for bad settings.
#include "orchestrator/daemon/logging.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <thread>
#include <vector>

#include "base/log_context.h"

namespace trench::orchestrator {
namespace {

class LoggingTest : public ::testing::Test {
 protected:
  // Back to stderr, so no logger points at a dead stream.
  void TearDown() override { ASSERT_TRUE(SetUpLogging("human", "info").ok()); }

  std::vector<std::string> Lines() {
    std::vector<std::string> lines;
    std::istringstream in(out_.str());
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }

  std::ostringstream out_;
};

TEST_F(LoggingTest, JsonLinesParse) {
  ASSERT_TRUE(SetUpLogging("json", "info", &out_).ok());
  spdlog::info("daemon started on port {}", 7878);
  spdlog::debug("not shown at info");
  Json fields = Json::MakeObject();
  fields["commit"] = "1a2b3c";
  fields["bug"] = 12;
  fields["msg"] = "a field named msg";
  fields["text"] = "quote \" and newline \n inside";
  LogWithFields(spdlog::level::warn, "build failed", fields);
  spdlog::error("disk {}", "full");

  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 3u) << out_.str();
  std::vector<Json> parsed;
  for (const std::string& l : lines) {
    StatusOr<Json> j = ParseJson(l);
    ASSERT_TRUE(j.ok()) << l << ": " << j.status().ToString();
    ASSERT_TRUE(j->is_object());
    parsed.push_back(*j);
  }
  EXPECT_EQ(parsed[0].Find("level")->string_value(), "info");
  EXPECT_EQ(parsed[0].Find("msg")->string_value(),
            "daemon started on port 7878");
  const std::string ts = parsed[0].Find("ts")->string_value();
  ASSERT_EQ(ts.size(), 24u) << ts;  // 2026-11-30T15:50:00.123Z
  EXPECT_EQ(ts[10], 'T');
  EXPECT_EQ(ts.back(), 'Z');

  const Json& w = parsed[1];
  EXPECT_EQ(w.Find("level")->string_value(), "warn");
  EXPECT_EQ(w.Find("msg")->string_value(), "build failed");
  EXPECT_EQ(w.Find("commit")->string_value(), "1a2b3c");
  EXPECT_EQ(*w.Find("bug")->GetInt64(), 12);
  EXPECT_EQ(w.Find("field.msg")->string_value(), "a field named msg");
  EXPECT_EQ(w.Find("text")->string_value(), "quote \" and newline \n inside");
  EXPECT_EQ(parsed[2].Find("msg")->string_value(), "disk full");
}

TEST_F(LoggingTest, HumanLines) {
  ASSERT_TRUE(SetUpLogging("human", "debug", &out_).ok());
  spdlog::debug("polling");
  Json fields = Json::MakeObject();
  fields["commit"] = "1a2b3c";
  fields["why"] = "two words";
  LogWithFields(spdlog::level::info, "build ready", fields);
  LogWithFields(spdlog::level::info, "odd", Json(5));
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 3u) << out_.str();
  EXPECT_NE(lines[0].find("Z debug polling"), std::string::npos) << lines[0];
  EXPECT_NE(
      lines[1].find("Z info  build ready commit=1a2b3c why=\"two words\""),
      std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find("odd fields=5"), std::string::npos) << lines[2];
}

TEST_F(LoggingTest, LevelFilters) {
  ASSERT_TRUE(SetUpLogging("json", "error", &out_).ok());
  spdlog::warn("hidden");
  spdlog::error("shown");
  ASSERT_EQ(Lines().size(), 1u);
  ASSERT_TRUE(SetUpLogging("json", "off", &out_).ok());
  spdlog::critical("hidden too");
  EXPECT_EQ(Lines().size(), 1u);
}

// An error in a loop (accept failing with EMFILE) prints its first line
// and then a count, not one line per failure.
TEST_F(LoggingTest, RepeatedLinesAreCountedNotPrinted) {
  ASSERT_TRUE(SetUpLogging("human", "info", &out_).ok());
  for (int i = 0; i < 100000; ++i) {
    spdlog::warn("http: accept failed: Too many open files");
  }
  spdlog::info("http: accepting again");
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 3u) << out_.str();
  EXPECT_NE(lines[0].find("warn  http: accept failed: Too many open files"),
            std::string::npos);
  EXPECT_NE(lines[1].find("Skipped 99999 duplicate messages.."),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find("http: accepting again"), std::string::npos);
  // Lines that differ are all printed.
  spdlog::info("a");
  spdlog::info("b");
  spdlog::info("a");
  EXPECT_EQ(Lines().size(), 6u);
}

TEST_F(LoggingTest, BadSettingsAreNamed) {
  Status s = SetUpLogging("xml", "info", &out_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("log.format"), std::string::npos);
  EXPECT_NE(s.message().find("\"xml\""), std::string::npos);
  s = SetUpLogging("json", "loud", &out_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("log.level"), std::string::npos);
  EXPECT_NE(s.message().find("\"loud\""), std::string::npos);
  EXPECT_EQ(*ParseLogLevel("warn"), spdlog::level::warn);
}

// A LogScope's fields are on every line of its thread (plain spdlog calls
// included) until it ends; inner scopes add and replace; other threads do
// not see them; a line's own fields win.
TEST_F(LoggingTest, ScopeFieldsAreOnEveryLineOfTheThread) {
  ASSERT_TRUE(SetUpLogging("json", "info", &out_).ok());
  {
    LogScope job(*ParseJson(R"({"job": 7, "step": "reproduce", "bug": 3})"));
    spdlog::info("inside the step");
    {
      LogScope agent(*ParseJson(R"({"role": "reproducer", "bug": 4})"));
      LogWithFields(spdlog::level::warn, "agent line",
                    *ParseJson(R"({"attempt": 2, "step": "own"})"));
    }
    std::thread([] { spdlog::info("another thread"); }).join();
    spdlog::info("after the inner scope");
  }
  spdlog::info("outside");
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 5u) << out_.str();
  std::vector<Json> j;
  for (const std::string& l : lines) j.push_back(*ParseJson(l));
  EXPECT_EQ(*j[0].Find("job")->GetInt64(), 7);
  EXPECT_EQ(j[0].Find("step")->string_value(), "reproduce");
  EXPECT_EQ(*j[0].Find("bug")->GetInt64(), 3);
  EXPECT_EQ(*j[1].Find("job")->GetInt64(), 7);
  EXPECT_EQ(*j[1].Find("bug")->GetInt64(), 4);
  EXPECT_EQ(j[1].Find("role")->string_value(), "reproducer");
  EXPECT_EQ(*j[1].Find("attempt")->GetInt64(), 2);
  EXPECT_EQ(j[1].Find("step")->string_value(), "own");
  EXPECT_EQ(j[2].Find("msg")->string_value(), "another thread");
  EXPECT_EQ(j[2].Find("job"), nullptr);
  EXPECT_EQ(*j[3].Find("bug")->GetInt64(), 3);
  EXPECT_EQ(j[3].Find("role"), nullptr);
  EXPECT_EQ(j[4].Find("job"), nullptr);
  EXPECT_EQ(j[4].Find("bug"), nullptr);
}

// What a stranger wrote (an error message, a title, a field's value) with
// quotes, newlines, CR, ESC or the payload's field separator cannot make a
// second line, nor add or change fields, in either format.
TEST_F(LoggingTest, HostileTextCannotForgeLinesOrFields) {
  const std::string evil =
      "x\"\n2026-01-01T00:00:00.000Z error forged job=1\r\x1b[2K"
      "\x1f{\"job\": 666}";
  for (const char* format : {"json", "human"}) {
    SCOPED_TRACE(format);
    out_.str("");
    ASSERT_TRUE(SetUpLogging(format, "info", &out_).ok());
    {
      Json scope = Json::MakeObject();
      scope["job"] = 5;
      scope["title"] = evil;
      LogScope s(scope);
      spdlog::warn("step failed: {}", evil);
      Json f = Json::MakeObject();
      f["error"] = evil;
      f[evil] = "key";
      LogWithFields(spdlog::level::warn, evil, f);
    }
    const std::string text = out_.str();
    std::vector<std::string> lines = Lines();
    ASSERT_EQ(lines.size(), 2u) << text;
    EXPECT_EQ(text.find('\r'), std::string::npos) << text;
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\x1f'), std::string::npos) << text;
    for (const std::string& l : lines) {
      if (std::string(format) == "json") {
        StatusOr<Json> j = ParseJson(l);
        ASSERT_TRUE(j.ok()) << l;
        EXPECT_EQ(*j->Find("job")->GetInt64(), 5) << l;
        EXPECT_EQ(j->Find("title")->string_value(), evil);
      } else {
        EXPECT_EQ(l.find("job=666"), std::string::npos) << l;
        EXPECT_NE(l.find(" job=5"), std::string::npos) << l;
        EXPECT_NE(l.find("title=\"x\\\"\\n2026"), std::string::npos) << l;
      }
    }
    if (std::string(format) == "json") {
      Json first = *ParseJson(lines[0]);
      EXPECT_EQ(first.Find("msg")->string_value(), "step failed: " + evil);
      Json second = *ParseJson(lines[1]);
      EXPECT_EQ(second.Find("msg")->string_value(), evil);
      EXPECT_EQ(second.Find("error")->string_value(), evil);
    }
  }
}

// The repeat filter compares the fields too: the same text in two jobs
// is two lines.
TEST_F(LoggingTest, SameTextInAnotherScopeIsPrinted) {
  ASSERT_TRUE(SetUpLogging("human", "info", &out_).ok());
  for (int job : {1, 2}) {
    Json f = Json::MakeObject();
    f["job"] = job;
    LogScope s(f);
    spdlog::info("build_ready: abc");
  }
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 2u) << out_.str();
  EXPECT_NE(lines[0].find("build_ready: abc job=1"), std::string::npos);
  EXPECT_NE(lines[1].find("build_ready: abc job=2"), std::string::npos);
}

}  // namespace
}  // namespace trench::orchestrator
