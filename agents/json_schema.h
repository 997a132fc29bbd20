// A JSON Schema validator for the subset the tool registry uses
// (agents/tools.def): enough to check a model's tool arguments before
// anything runs, with messages that name the offending field.
//
// Keywords understood:
//   type                 "object" | "array" | "string" | "integer" |
//                        "number" | "boolean" | "null", or an array of them.
//                        "integer" accepts only integer literals (3, not
//                        3.0 nor "3"); "number" accepts any number.
//   properties, required, additionalProperties (a boolean; absent = true)
//   items (one schema for every element), minItems, maxItems
//   enum (any JSON values, compared structurally)
//   minimum, maximum (inclusive), minLength, maxLength (in code points)
//   description, title, default (annotations, ignored)
// Any other keyword is refused by CheckSchema, so that a typo in the
// registry cannot silently weaken validation.
#pragma once

#include <string>
#include <string_view>

#include "base/json.h"
#include "base/status.h"

namespace trench::agents {

// Checks that `schema` is a well-formed schema of the subset above.
// InvalidArgument naming the schema path ("properties.runs.minimum:
// expected a number") otherwise.
Status CheckSchema(const Json& schema);

// Parses `text` (JSON) and checks it with CheckSchema. InvalidArgument with
// line:column for syntax errors.
StatusOr<Json> ParseSchema(std::string_view text);

// Validates `value` against `schema`. Ok, or InvalidArgument naming the
// path of the first problem found, e.g.
//   "runs: expected an integer, got \"3\""
//   "passes[2]: expected a string, got 7"
//   "hlo: missing required property"
//   "colour: unknown property (allowed: case, runs)"
// A problem at the root is named "arguments".
// REQUIRES: CheckSchema(schema) is ok (an unchecked schema never crashes,
// but unknown keywords are ignored).
Status ValidateJson(const Json& schema, const Json& value);

// A short rendering of `value` for messages: compact JSON, cut to about
// `max_chars` with "..." appended.
std::string ShortJson(const Json& value, size_t max_chars = 60);

}  // namespace trench::agents
