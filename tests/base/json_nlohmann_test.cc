// The service side's JSON (base/json_nlohmann.h): text in and out as
// base/json writes it, the bridge both ways, and the field reader's
// messages.
#include "base/json_nlohmann.h"

#include <gtest/gtest.h>

namespace trench {
namespace {

TEST(JsonNlohmannTest, ParseErrorsGiveLineAndColumn) {
  struct Case {
    std::string text, prefix;
  } cases[] = {
      {"{\"text\": \"x\",\n  oops}", "2:3: "},
      {"{", "1:2: "},
      {"", "1:1: "},
      {"[1,\n 2,]", "2:4: "},
      {"{\"a\": \"\xff\"}", "1:8: "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    StatusOr<JsonDoc> d = ParseJsonDoc(c.text);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(d.status().message().rfind(c.prefix, 0), 0u)
        << d.status().message();
    EXPECT_EQ(d.status().message().find("json.exception"), std::string::npos)
        << d.status().message();
  }
}

// A key an object repeats is an error at the repeat, as base/json's parser
// says; the same key in different objects is fine.
TEST(JsonNlohmannTest, DuplicateKeysAreRefused) {
  struct Case {
    std::string text, message;
  } cases[] = {
      {R"({"text": "a", "text": "b"})", R"(1:15: duplicate key "text")"},
      {"{\"a\": {\"x\": 1,\n  \"x\": [\"x\", \"x\"]}}",
       R"(2:3: duplicate key "x")"},
      {R"([{"k": 1}, {"k": 2, "\u006b": 3}])", R"(1:21: duplicate key "k")"},
      {R"({"a": {"b": 1}, "c": {"b": 2}, "a": 0})",
       R"(1:32: duplicate key "a")"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    StatusOr<JsonDoc> d = ParseJsonDoc(c.text);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(d.status().message(), c.message);
    // base/json refuses the same documents.
    EXPECT_FALSE(ParseJson(c.text).ok());
  }
  EXPECT_TRUE(
      ParseJsonDoc(R"({"a": {"a": {"a": "a"}}, "b": ["a", "a"]})").ok());
  EXPECT_TRUE(ParseJsonDoc(R"({"a\"b": 1, "a": 2, "b": {}, "{": "}"})").ok());
}

TEST(JsonNlohmannTest, NestingIsLimited) {
  const std::string deep = std::string(600, '[') + std::string(600, ']');
  StatusOr<JsonDoc> d = ParseJsonDoc(deep);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "1:513: expected at most 512 levels of nested arrays and objects");
  // Brackets in strings do not count; 512 levels do.
  EXPECT_TRUE(ParseJsonDoc(R"(["[[[[", "\"[[[["])", 2).ok());
  EXPECT_FALSE(ParseJsonDoc("[[[]]]", 2).ok());
  EXPECT_TRUE(ParseJsonDoc(std::string(512, '[') + std::string(512, ']')).ok());
}

// The same document prints the same bytes on both sides (the API's wire
// format did not change when it moved to nlohmann).
TEST(JsonNlohmannTest, DumpMatchesBaseJson) {
  const std::string text =
      R"({"b":1.0,"a":0.25,"big":18446744073709551615,"neg":-3,)"
      R"("e":1e+20,"s":"tab\tnl\nq\"\u0001é","l":[],"o":{},"n":null,)"
      R"("t":true})";
  StatusOr<Json> base = ParseJson(text);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  StatusOr<JsonDoc> doc = ParseJsonDoc(text);
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(DumpJsonDoc(*doc), base->Dump());
  EXPECT_EQ(DumpJsonDocPretty(*doc), base->DumpPretty());
  EXPECT_EQ(DumpJsonDoc(ToJsonDoc(*base)), base->Dump());
  EXPECT_EQ(FromJsonDoc(*doc), *base);
  EXPECT_EQ(FromJsonDoc(ToJsonDoc(*base)), *base);
  // Invalid UTF-8 prints as U+FFFD instead of throwing.
  Json bad(std::string("a\xff"));
  EXPECT_EQ(DumpJsonDoc(ToJsonDoc(bad)), bad.Dump());
}

TEST(JsonNlohmannTest, FieldsNameTheField) {
  StatusOr<JsonDoc> doc = ParseJsonDoc(
      R"({"s": "x", "i": 3, "d": 1.5, "b": true, "n": null, "o": {"k": 1},
          "a": [1], "big": 18446744073709551615})");
  ASSERT_TRUE(doc.ok());
  StatusOr<JsonFields> f = JsonFields::Of(*doc, "root");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f->String("s"), "x");
  EXPECT_EQ(*f->Int("i"), 3);
  EXPECT_EQ(**f->OptionalDouble("i"), 3.0);
  EXPECT_EQ(**f->OptionalBool("b"), true);
  EXPECT_FALSE(f->OptionalString("n")->has_value());  // Null is absent.
  EXPECT_EQ(f->String("n").status().message(), "field 'root.n' is missing");
  EXPECT_EQ(f->Int("d").status().message(),
            "field 'root.d' must be an integer, got number");
  EXPECT_EQ(f->Int("big").status().message(),
            "field 'root.big' is out of range");
  EXPECT_EQ(f->String("o").status().message(),
            "field 'root.o' must be a string, got object");
  EXPECT_EQ(f->OptionalArray("o").status().message(),
            "field 'root.o' must be an array, got object");
  EXPECT_EQ(f->OnlyFields({"s", "i"}).message(),
            "unknown field 'root.d' (expected one of s, i)");
  StatusOr<JsonFields> strict =
      JsonFields::Of(*doc, "", JsonFields::Null::kWrongType);
  ASSERT_TRUE(strict.ok());
  EXPECT_EQ(strict->OptionalString("n").status().message(),
            "field 'n' must be a string, got null");
  EXPECT_EQ(JsonFields::Of(JsonDoc::array()).status().message(),
            "the document must be an object, got array");
}

}  // namespace
}  // namespace trench
