#include "base/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace trench {
namespace {

Json Parse(std::string_view text) {
  auto j = ParseJson(text);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  return j.ok() ? *j : Json();
}

std::string ParseError(std::string_view text,
                       const JsonParseOptions& opts = {}) {
  auto j = ParseJson(text, opts);
  EXPECT_FALSE(j.ok()) << "parsed: " << text;
  return j.ok() ? "" : j.status().message();
}

TEST(JsonTest, ParsesScalars) {
  EXPECT_TRUE(Parse("null").is_null());
  EXPECT_EQ(Parse("true").bool_value(), true);
  EXPECT_EQ(Parse(" false ").bool_value(), false);
  EXPECT_EQ(Parse("-12").int64_value(), -12);
  EXPECT_EQ(Parse("\"a\\nb\"").string_value(), "a\nb");
  EXPECT_DOUBLE_EQ(Parse("1.5e3").number_value(), 1500.0);
  EXPECT_EQ(Parse("1.5e3").type(), Json::Type::kDouble);
  EXPECT_EQ(Parse("0").type(), Json::Type::kInt64);
}

TEST(JsonTest, IntegersAreExactTo64Bits) {
  // 2^53 + 1 is not a double; it must survive.
  EXPECT_EQ(Parse("9007199254740993").int64_value(), 9007199254740993);
  EXPECT_EQ(Parse("-9223372036854775808").int64_value(),
            std::numeric_limits<int64_t>::min());
  Json big = Parse("18446744073709551615");
  ASSERT_EQ(big.type(), Json::Type::kUint64);
  EXPECT_EQ(big.uint64_value(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(big.Dump(), "18446744073709551615");
  EXPECT_FALSE(big.GetInt64().ok());
  EXPECT_EQ(*Parse("5").GetUint64(), 5u);
  EXPECT_FALSE(Parse("-5").GetUint64().ok());
  // Beyond uint64 an integer literal becomes a double.
  EXPECT_EQ(Parse("18446744073709551616").type(), Json::Type::kDouble);
}

TEST(JsonTest, DoublesKeepTheirSourceText) {
  Json d = Parse("0.1000000000000000000001");
  EXPECT_EQ(d.number_text(), "0.1000000000000000000001");
  EXPECT_EQ(d.Dump(), "0.1000000000000000000001");
  EXPECT_EQ(Json(0.1).number_text(), "0.1");
  EXPECT_EQ(Json(3.0).Dump(), "3.0");  // Stays a double on re-parse.
  EXPECT_EQ(Parse(Json(3.0).Dump()).type(), Json::Type::kDouble);
  EXPECT_EQ(Json(1e300).Dump(), "1e+300");
  // Underflow rounds (to a subnormal or zero); overflow is an error.
  EXPECT_EQ(Parse("1e-400").number_value(), 0.0);
  EXPECT_EQ(Parse("4.9e-324").number_value(),
            std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(ParseError("[1e400]"),
            "1:2: expected a number within double range");
}

TEST(JsonTest, ShortestRoundTripDoubles) {
  for (double d :
       {0.1, 1.0 / 3, 123456.789, 5e-324, 1.7976931348623157e308, -2.5, 1e21}) {
    Json back = Parse(Json(d).Dump());
    EXPECT_EQ(back.number_value(), d) << Json(d).Dump();
  }
  EXPECT_EQ(Json(0.30000000000000004).Dump(), "0.30000000000000004");
}

TEST(JsonTest, ObjectsKeepInsertionOrder) {
  Json j = Parse(R"({"z": 1, "a": [1, 2, {"k": null}], "m": "x"})");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.object()[0].first, "z");
  EXPECT_EQ(j.object()[1].first, "a");
  EXPECT_EQ(j.object()[2].first, "m");
  EXPECT_EQ(j.Dump(), R"({"z":1,"a":[1,2,{"k":null}],"m":"x"})");
  EXPECT_EQ(j.Find("a")->size(), 3u);
  EXPECT_EQ(j.Find("nope"), nullptr);
}

TEST(JsonTest, BuildsAndPrintsPretty) {
  Json j;
  j["name"] = "case";
  j["values"].push_back(1);
  j["values"].push_back(2.5);
  j["empty"] = Json::MakeArray();
  EXPECT_EQ(j.DumpPretty(),
            "{\n  \"name\": \"case\",\n  \"values\": [\n    1,\n    2.5\n"
            "  ],\n  \"empty\": []\n}");
}

TEST(JsonTest, StringsEscapesAndUnicode) {
  EXPECT_EQ(Parse(R"("\u00e9\ud83d\ude00\/")").string_value(),
            "\xc3\xa9\xf0\x9f\x98\x80/");
  EXPECT_EQ(Json("tab\there \"q\" \x01").Dump(), R"("tab\there \"q\" \u0001")");
  // UTF-8 passes through; invalid bytes print as U+FFFD.
  EXPECT_EQ(Json("\xc3\xa9").Dump(), "\"\xc3\xa9\"");
  EXPECT_EQ(Json(std::string("a\xff")).Dump(), "\"a\xef\xbf\xbd\"");
}

TEST(JsonTest, ErrorsHaveLineAndColumn) {
  EXPECT_EQ(ParseError("[1, 2"), "1:6: expected ',' or ']'");
  EXPECT_EQ(ParseError("{\n  \"a\" 1}"), "2:7: expected ':'");
  EXPECT_EQ(ParseError("[1] x"), "1:5: expected end of input");
  EXPECT_EQ(ParseError(""), "1:1: expected a value, got end of input");
  EXPECT_EQ(ParseError("01"), "1:2: expected end of input");
  EXPECT_EQ(ParseError("[1.]"), "1:4: expected a digit after '.'");
  EXPECT_EQ(ParseError("tru"), "1:1: expected a value");
  EXPECT_EQ(ParseError(R"({"a":1,"a":2})"),
            "1:8: expected a unique key, \"a\" appears twice");
  EXPECT_EQ(ParseError("\"\\x\""), "1:2: expected a valid escape sequence");
  EXPECT_EQ(ParseError(R"("\ud800")"),
            "1:2: expected a low surrogate after a high one");
  EXPECT_EQ(ParseError(R"("\udc00")"),
            "1:2: expected a high surrogate before a low one");
  EXPECT_EQ(ParseError("\"a\nb\""),
            "1:3: expected an escaped control character in a string");
  EXPECT_EQ(ParseError("\"\xc0\xaf\""),
            "1:2: expected valid UTF-8 (overlong, surrogate or > U+10FFFF)");
  EXPECT_EQ(ParseError("\"\xed\xa0\x80\""),
            "1:2: expected valid UTF-8 (overlong, surrogate or > U+10FFFF)");
  EXPECT_EQ(ParseError("\"\xe2\x82\""), "1:2: expected valid UTF-8");
  EXPECT_EQ(ParseError("[NaN]"), "1:2: expected a value");
}

TEST(JsonTest, LimitsDepthAndSize) {
  std::string deep(600, '[');
  deep += std::string(600, ']');
  EXPECT_EQ(ParseError(deep), "1:513: expected at most 512 levels of nesting");
  JsonParseOptions small;
  small.max_bytes = 4;
  EXPECT_EQ(ParseError("[1,2]", small),
            "1:1: input of 5 bytes exceeds the limit of 4");
  JsonParseOptions shallow;
  shallow.max_depth = 2;
  EXPECT_TRUE(ParseJson("[[1]]", shallow).ok());
  EXPECT_FALSE(ParseJson("[[[1]]]", shallow).ok());
}

TEST(JsonTest, NonFiniteIsTheCallersChoice) {
  Json j;
  j["x"].push_back(std::numeric_limits<double>::infinity());
  auto strict = PrintJson(j);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().message(),
            "non-finite number inf at $.x[0] is not JSON");
  EXPECT_EQ(j.Dump(), R"({"x":[null]})");
}

TEST(JsonTest, CheckedAccessorsReportTypes) {
  EXPECT_EQ(Parse("\"s\"").GetInt64().status().message(),
            "expected an integer, got a string");
  EXPECT_EQ(Parse("1.5").GetInt64().status().message(),
            "expected an integer, got a number");
  EXPECT_EQ(*Parse("7").GetDouble(), 7.0);
  EXPECT_EQ(*Parse("true").GetBool(), true);
  EXPECT_EQ(*Parse("\"s\"").GetString(), "s");
}

TEST(JsonTest, RoundTripIsIdentity) {
  const char* text =
      R"({"a":[1,-2,3.25,"\u0000x",true,false,null,{}],"b":{"c":[]},)"
      R"("u":18446744073709551615,"d":-1.5e-300})";
  Json j = Parse(text);
  EXPECT_EQ(Parse(j.Dump()), j);
  EXPECT_EQ(Parse(j.DumpPretty()), j);
}

TEST(JsonTest, MakeStringArrayKeepsOrderAndEscapes) {
  EXPECT_EQ(Json::MakeStringArray({}).Dump(), "[]");
  EXPECT_EQ(Json::MakeStringArray({"b", "a", "q\"\n"}).Dump(),
            R"(["b","a","q\"\n"])");
}

}  // namespace
}  // namespace trench
