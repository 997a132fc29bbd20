// Lines and trimming (base/lines.h).
#include "base/lines.h"

#include <gtest/gtest.h>

namespace trench {
namespace {

TEST(LinesTest, SplitKeepsAFinalLineWithoutNewline) {
  EXPECT_TRUE(SplitLineViews("").empty());
  std::vector<std::string_view> l = SplitLineViews("a\n\nb");
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0], "a");
  EXPECT_EQ(l[1], "");
  EXPECT_EQ(l[2], "b");
  EXPECT_EQ(SplitLineViews("a\n").size(), 1u);
}

TEST(LinesTest, TrimWhitespaceCutsBothEnds) {
  EXPECT_EQ(TrimWhitespace(" \t42;cluster\r\n"), "42;cluster");
  EXPECT_EQ(TrimWhitespace("a b"), "a b");
  EXPECT_EQ(TrimWhitespace(" \n "), "");
  EXPECT_EQ(TrimWhitespace(""), "");
}

}  // namespace
}  // namespace trench
