#include "agents/json_schema.h"

#include <gtest/gtest.h>

namespace trench::agents {
namespace {

Json Schema(std::string_view text) {
  StatusOr<Json> s = ParseSchema(text);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : Json();
}

Json Value(std::string_view text) {
  StatusOr<Json> v = ParseJson(text);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : Json();
}

std::string Error(const Json& schema, std::string_view value) {
  Status s = ValidateJson(schema, Value(value));
  return s.ok() ? "ok" : s.message();
}

constexpr std::string_view kRunCase = R"({
  "type": "object",
  "properties": {
    "case": {"type": "string", "minLength": 2, "maxLength": 4},
    "runs": {"type": "integer", "minimum": 1, "maximum": 20},
    "scale": {"type": "number", "minimum": 0.5},
    "passes": {"type": "array", "maxItems": 2,
               "items": {"type": "string"}},
    "mode": {"enum": ["fast", "slow"]},
    "area": {"type": "object",
             "properties": {"ops": {"type": "array",
                                    "items": {"type": "string"}}},
             "additionalProperties": false}},
  "required": ["case"],
  "additionalProperties": false})";

TEST(JsonSchemaTest, AcceptsValidArguments) {
  const Json s = Schema(kRunCase);
  EXPECT_EQ(Error(s, R"({"case": "ab"})"), "ok");
  EXPECT_EQ(Error(s, R"({"case": "abcd", "runs": 20, "scale": 1,
                         "passes": ["a", "b"], "mode": "slow",
                         "area": {"ops": ["dot"]}})"),
            "ok");
}

TEST(JsonSchemaTest, IntegerIsNotNumberNorString) {
  const Json s = Schema(kRunCase);
  EXPECT_EQ(Error(s, R"({"case": "ab", "runs": "3"})"),
            "runs: expected an integer, got \"3\"");
  EXPECT_EQ(Error(s, R"({"case": "ab", "runs": 3.0})"),
            "runs: expected an integer, got 3.0");
  EXPECT_EQ(Error(s, R"({"case": "ab", "scale": 2})"), "ok");
  EXPECT_EQ(Error(s, R"({"case": "ab", "scale": true})"),
            "scale: expected a number, got true");
}

TEST(JsonSchemaTest, NamesMissingAndUnknownProperties) {
  const Json s = Schema(kRunCase);
  EXPECT_EQ(Error(s, R"({"runs": 2})"), "case: missing required property");
  EXPECT_EQ(Error(s, R"({"case": "ab", "colour": 1})"),
            "colour: unknown property (allowed: case, runs, scale, passes, "
            "mode, area)");
  EXPECT_EQ(Error(s, R"({"case": "ab", "area": {"opz": []}})"),
            "area.opz: unknown property (allowed: ops)");
  EXPECT_EQ(Error(s, R"([1])"), "arguments: expected an object, got [1]");
}

TEST(JsonSchemaTest, Bounds) {
  const Json s = Schema(kRunCase);
  EXPECT_EQ(Error(s, R"({"case": "ab", "runs": 0})"),
            "runs: 0 is below the minimum 1");
  EXPECT_EQ(Error(s, R"({"case": "ab", "runs": 21})"),
            "runs: 21 is above the maximum 20");
  EXPECT_EQ(Error(s, R"({"case": "abcde"})"),
            "case: expected at most 4 characters, got 5");
  EXPECT_EQ(Error(s, R"({"case": "a"})"),
            "case: expected at least 2 characters, got 1");
  // Lengths count code points, not bytes.
  EXPECT_EQ(Error(s, R"({"case": "\u00e9\u00e9\u00e9"})"), "ok");
  EXPECT_EQ(Error(s, R"({"case": "ab", "passes": ["a", "b", "c"]})"),
            "passes: expected at most 2 items, got 3");
  EXPECT_EQ(Error(s, R"({"case": "ab", "passes": ["a", 7]})"),
            "passes[1]: expected a string, got 7");
  EXPECT_EQ(Error(s, R"({"case": "ab", "area": {"ops": [1]}})"),
            "area.ops[0]: expected a string, got 1");
}

TEST(JsonSchemaTest, Enum) {
  const Json s = Schema(kRunCase);
  EXPECT_EQ(Error(s, R"({"case": "ab", "mode": "medium"})"),
            "mode: expected one of \"fast\", \"slow\", got \"medium\"");
}

TEST(JsonSchemaTest, TypeLists) {
  const Json s = Schema(R"({"type": ["string", "null"]})");
  EXPECT_EQ(Error(s, "null"), "ok");
  EXPECT_EQ(Error(s, "\"x\""), "ok");
  EXPECT_EQ(Error(s, "1"), "arguments: expected a string or null, got 1");
}

TEST(JsonSchemaTest, LongValuesAreCutInMessages) {
  const Json s = Schema(R"({"type": "integer"})");
  const std::string long_string = "\"" + std::string(500, 'x') + "\"";
  const std::string msg = Error(s, long_string);
  EXPECT_LT(msg.size(), 120u);
  EXPECT_NE(msg.find("..."), std::string::npos);
}

TEST(JsonSchemaTest, CheckSchemaRefusesWhatItDoesNotUnderstand) {
  EXPECT_EQ(
      ParseSchema(R"({"type": "object", "pattern": "x"})").status().message(),
      "pattern: unsupported keyword");
  EXPECT_EQ(ParseSchema(R"({"type": "integr"})").status().message(),
            "type: unknown type");
  EXPECT_EQ(ParseSchema(R"({"properties": {"a": {"maxLength": -1}}})")
                .status()
                .message(),
            "properties.a.maxLength: expected a non-negative integer");
  EXPECT_EQ(ParseSchema(R"({"additionalProperties": {}})").status().message(),
            "additionalProperties: expected a boolean");
  EXPECT_EQ(ParseSchema(R"({"enum": []})").status().message(),
            "enum: expected a non-empty array");
  EXPECT_EQ(ParseSchema("[]").status().message(), "schema: expected an object");
  EXPECT_NE(ParseSchema("{\"type\": ").status().message().find("schema: 1:"),
            std::string::npos);
}

}  // namespace
}  // namespace trench::agents
