#include "agents/sse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trench::agents {
namespace {

// Feeds `text` in pieces of `step` bytes, then finishes.
std::vector<SseEvent> ParseAll(std::string_view text, size_t step) {
  SseParser parser;
  std::vector<SseEvent> out;
  for (size_t i = 0; i < text.size(); i += step) {
    EXPECT_TRUE(parser.Feed(text.substr(i, step), &out).ok());
  }
  EXPECT_TRUE(parser.Finish(&out).ok());
  return out;
}

TEST(SseTest, DataEventsAndFieldsAtEveryChunking) {
  const std::string text =
      ": a comment\n"
      "event: message_start\n"
      "id: 7\n"
      "data: {\"a\":1}\n"
      "\n"
      "data:no-space\n"
      "data:  two spaces\n"
      "retry: 100\n"
      "unknown: x\n"
      "\n"
      "data: [DONE]\n\n";
  for (size_t step : {1, 2, 3, 5, 7, 1000}) {
    auto events = ParseAll(text, step);
    ASSERT_EQ(events.size(), 3u) << "step " << step;
    EXPECT_EQ(events[0].event, "message_start");
    EXPECT_EQ(events[0].id, "7");
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[1].event, "");  // The type does not carry over.
    EXPECT_EQ(events[1].id, "7");    // The last event id does.
    EXPECT_EQ(events[1].data, "no-space\n two spaces");
    EXPECT_FALSE(IsDone(events[1]));
    EXPECT_TRUE(IsDone(events[2]));
  }
}

TEST(SseTest, CrLfAndCrLineEndsSplitAnywhere) {
  const std::string text = "data: a\r\ndata: b\r\n\r\ndata: c\r\rdata: d\n\n";
  for (size_t step = 1; step <= text.size(); ++step) {
    auto events = ParseAll(text, step);
    ASSERT_EQ(events.size(), 3u) << "step " << step;
    EXPECT_EQ(events[0].data, "a\nb");
    EXPECT_EQ(events[1].data, "c");
    EXPECT_EQ(events[2].data, "d");
  }
}

TEST(SseTest, BlankLinesWithoutDataDispatchNothing) {
  auto events = ParseAll("\n\n: ping\n\nevent: ping\n\n", 1);
  EXPECT_TRUE(events.empty());
}

TEST(SseTest, EmptyDataLineIsAnEvent) {
  auto events = ParseAll("data\n\ndata:\ndata:\n\n", 4);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "");
  EXPECT_EQ(events[1].data, "\n");
}

TEST(SseTest, FinishDispatchesAnUnterminatedEvent) {
  auto events = ParseAll("data: last", 3);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "last");
}

TEST(SseTest, LeadingBomIsSkippedEvenWhenSplit) {
  const std::string text =
      "\xEF\xBB\xBF"
      "data: x\n\n";
  for (size_t step : {1, 2, 4}) {
    auto events = ParseAll(text, step);
    ASSERT_EQ(events.size(), 1u) << step;
    EXPECT_EQ(events[0].data, "x");
  }
}

TEST(SseTest, OversizedEventIsResourceExhausted) {
  SseParser parser(16);
  std::vector<SseEvent> out;
  Status s = parser.Feed("data: 0123456789\ndata: 0123456789\n", &out);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  SseParser line_parser(16);
  s = line_parser.Feed("data: 0123456789abcdefghij", &out);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
}

TEST(SseTest, DoneToleratesTrailingSpace) {
  EXPECT_TRUE(IsDone(SseEvent{"", "[DONE] ", ""}));
  EXPECT_FALSE(IsDone(SseEvent{"", "[DONE]x", ""}));
}

}  // namespace
}  // namespace trench::agents
