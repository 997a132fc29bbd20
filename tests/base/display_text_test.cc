#include "base/display_text.h"

#include <gtest/gtest.h>

#include <string>

namespace trench {
namespace {

// The title from the field report (issue 18, item 11).
const std::string kHostile =
    "abort\n\nSigned-off-by: Mallory <m@evil>\n\x1b]0;pwned\x07";

TEST(DisplayTextTest, EscapeControlsShowsEveryControlVisibly) {
  EXPECT_EQ(EscapeControls(kHostile),
            "abort\n\nSigned-off-by: Mallory <m@evil>\n\\x1b]0;pwned\\x07");
  EXPECT_EQ(EscapeControls(kHostile, false),
            "abort\\x0a\\x0aSigned-off-by: Mallory "
            "<m@evil>\\x0a\\x1b]0;pwned\\x07");
  EXPECT_EQ(EscapeControls("a\rb\x7f"
                           "c"),
            "a\\x0db\\x7fc");
  EXPECT_EQ(EscapeControls(std::string("nul\0x", 5)), "nul\\x00x");
  // C1 CSI (U+009B), a bidi override, a line separator; invalid UTF-8
  // (a lone continuation byte, an overlong '/', a surrogate, truncation).
  EXPECT_EQ(EscapeControls("\xc2\x9b"
                           "2J \xe2\x80\xae"
                           "txt \xe2\x80\xa8"),
            "\\u{009b}2J \\u{202e}txt \\u{2028}");
  EXPECT_EQ(EscapeControls("\x80 \xc0\xaf \xed\xa0\x80 \xe2\x82"),
            "\\x80 \\xc0\\xaf \\xed\\xa0\\x80 \\xe2\\x82");
  // Printable text, UTF-8 included, is kept as it is.
  EXPECT_EQ(EscapeControls("naïve – 数 \\x1b"), "naïve – 数 \\x1b");
}

TEST(DisplayTextTest, OneLineRemovesControlsAndJoinsLines) {
  EXPECT_EQ(OneLine(kHostile, 120),
            "abort Signed-off-by: Mallory <m@evil> ]0;pwned");
  EXPECT_EQ(OneLine("  a\t\tb\r\n", 120), "a b");
  EXPECT_EQ(OneLine("\x1b[31mred\xc2\x9b\xe2\x80\xae\x80", 120), "[31mred");
  EXPECT_EQ(OneLine("", 120), "");
  EXPECT_EQ(OneLine("\n\x07\n", 120), "");
}

TEST(DisplayTextTest, OneLineCutsAtACharacterBoundary) {
  EXPECT_EQ(OneLine("abcdefghij", 10), "abcdefghij");
  EXPECT_EQ(OneLine("abcdefghijk", 10), "abcdefg...");
  // "数" is 3 bytes: never split.
  EXPECT_EQ(OneLine("ab数数数数", 10), "ab数...");
  EXPECT_EQ(OneLine("abcdef ghijk", 10), "abcdef...");
  for (size_t n = 3; n < 20; ++n) {
    EXPECT_LE(OneLine(std::string(40, 'x') + "数", n).size(), n);
  }
}

}  // namespace
}  // namespace trench
