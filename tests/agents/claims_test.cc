// The agents' claims as records (agents/claims.h): each kind's JSON round
// trip, what a claim from a model may not carry (a path for a case id, a
// field of the wrong type), and the fields that are ignored.
#include "agents/claims.h"

#include <gtest/gtest.h>

namespace trench::agents {
namespace {

const std::string kCase(64, 'a');
const std::string kOther = std::string(63, 'b') + "0";

JsonDoc Doc(std::string_view text) {
  StatusOr<JsonDoc> d = ParseJsonDoc(text);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? *d : JsonDoc();
}

// `text` with CASE replaced by kCase.
std::string WithCase(std::string text) {
  for (size_t p; (p = text.find("CASE")) != std::string::npos;) {
    text.replace(p, 4, kCase);
  }
  return text;
}

template <typename Claim>
void ExpectRoundTrip(StatusOr<Claim> (*parse)(const JsonDoc&),
                     const std::string& text) {
  SCOPED_TRACE(text);
  StatusOr<Claim> c = parse(Doc(text));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const JsonDoc once = ToJson(*c);
  EXPECT_EQ(once, Doc(text));  // Every field of `text` is known.
  StatusOr<Claim> again = parse(once);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(DumpJsonDoc(ToJson(*again)), DumpJsonDoc(once));
}

template <typename Claim>
void ExpectError(StatusOr<Claim> (*parse)(const JsonDoc&),
                 const std::string& text, const std::string& message) {
  SCOPED_TRACE(text);
  StatusOr<Claim> c = parse(Doc(text));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find(message), std::string::npos)
      << c.status().message();
}

TEST(ClaimsTest, CaseIds) {
  EXPECT_TRUE(IsCaseId(kCase));
  EXPECT_TRUE(
      IsCaseId("0123456789abcdef0123456789abcdef"
               "0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsCaseId(std::string(64, 'A')));  // Lowercase only.
  EXPECT_FALSE(IsCaseId(std::string(63, 'a')));
  EXPECT_FALSE(IsCaseId(std::string(65, 'a')));
  EXPECT_FALSE(IsCaseId("../../tmp/x"));
  EXPECT_FALSE(IsCaseId(std::string(61, 'a') + "/.."));
  EXPECT_FALSE(IsCaseId(""));
}

TEST(ClaimsTest, ReproducerRoundTrip) {
  ExpectRoundTrip(&ParseReproducerClaim,
                  WithCase(R"({"case": "CASE", "outcome": "flaky",
                     "runs": 8, "failures": 2, "rate": 0.25,
                     "status": "mismatch",
                     "signature": {"sig": "abc", "dtype": "f32"},
                     "statuses": ["pass", "mismatch"],
                     "described": {"ops": ["sort"], "seconds": 30,
                                   "programs": 212, "dropped": ["all-reduce"]},
                     "reason": "failed 2 of 8 runs", "notes": ["n"],
                     "summary": "s", "brain": "openai",
                     "fallback": {"from": "openai", "reason": "budget"}})"));
  ExpectRoundTrip(
      &ParseReproducerClaim,
      R"({"case": null, "outcome": "no_case", "reason": "no HLO"})");
}

TEST(ClaimsTest, ReproducerFields) {
  StatusOr<ReproducerClaim> c = ParseReproducerClaim(Doc(WithCase(
      R"({"case": "CASE", "runs": 3, "failures": 3, "rate": 1,
          "status": "mismatch", "signature": {}, "mood": "happy"})")));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->case_id, kCase);
  EXPECT_EQ(c->runs, 3);
  EXPECT_EQ(c->failures, 3);
  EXPECT_EQ(c->rate, 1.0);  // An integer is a number too.
  EXPECT_EQ(c->status, "mismatch");
  EXPECT_FALSE(ToJson(*c).contains("mood"));  // Unknown: ignored.
  // A claim without a case (a null one, or none) made no case.
  c = ParseReproducerClaim(Doc(R"({"reason": "gave up"})"));
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->case_id.has_value());
  EXPECT_EQ(c->reason, "gave up");
}

TEST(ClaimsTest, ReproducerErrorsNameTheField) {
  ExpectError(&ParseReproducerClaim, R"({"case": "../../tmp/x"})",
              "field 'case' must be a case id (64 lowercase hex digits), "
              "got \"../../tmp/x\"");
  ExpectError(&ParseReproducerClaim, R"({"case": 5})",
              "field 'case' must be a string, got number");
  ExpectError(&ParseReproducerClaim, WithCase(R"({"case": "CASE",
              "runs": "3"})"),
              "field 'runs' must be an integer, got string");
  ExpectError(&ParseReproducerClaim, R"({"runs": 2.5})",
              "field 'runs' must be an integer, got number");
  ExpectError(&ParseReproducerClaim, R"({"statuses": ["pass", 1]})",
              "field 'statuses[1]' must be a string, got number");
  ExpectError(&ParseReproducerClaim, R"({"described": {"ops": "dot"}})",
              "field 'described.ops' must be an array, got string");
  ExpectError(&ParseReproducerClaim, R"({"fallback": {"from": "openai"}})",
              "field 'fallback.reason' is missing");
  ExpectError(&ParseReproducerClaim, R"([1])",
              "the document must be an object, got array");
}

TEST(ClaimsTest, MinimizerRoundTrip) {
  ExpectRoundTrip(&ParseMinimizerClaim, WithCase(R"({"case": "CASE",
          "before": {"instructions": 100, "elements": 4000, "text_bytes": 900},
          "after": {"instructions": 38},
          "status": "mismatch", "verified": true,
          "rounds": [{"case": "CASE", "before": {"instructions": 100},
                      "after": {"instructions": 38}, "gain_percent": 62.0,
                      "seconds": 1.5}],
          "reason": "converged", "notes": ["converged: round 1"]})"));
  // The built-in minimizer's "nothing found": before and after null.
  ExpectRoundTrip(&ParseMinimizerClaim,
                  WithCase(R"({"case": "CASE", "before": null, "after": null,
                               "verified": false})"));
}

TEST(ClaimsTest, MinimizerErrorsNameTheField) {
  ExpectError(&ParseMinimizerClaim, R"({"case": "../../tmp/x"})",
              "field 'case' must be a case id");
  ExpectError(&ParseMinimizerClaim, R"({"after": {"instructions": "3"}})",
              "field 'after.instructions' must be an integer, got string");
  ExpectError(&ParseMinimizerClaim, R"({"after": [3]})",
              "field 'after' must be an object, got array");
  ExpectError(&ParseMinimizerClaim, R"({"rounds": [{"case": "/etc/passwd"}]})",
              "field 'rounds[0].case' must be a case id");
  ExpectError(&ParseMinimizerClaim, R"({"rounds": [{"after": {}}]})",
              "field 'rounds[0].case' is missing");
  ExpectError(&ParseMinimizerClaim, R"({"verified": "yes"})",
              "field 'verified' must be a boolean, got string");
}

TEST(ClaimsTest, DrafterRoundTrip) {
  ExpectRoundTrip(&ParseDrafterClaim,
                  R"({"candidates": [
                        {"candidate": 2, "strategy": "revert",
                         "diff": "--- a/x\n+++ b/x\n", "changed_lines": 4,
                         "rationale": "r", "detail": "d"},
                        {"candidate": 1, "strategy": "llm", "diff": "x"}],
                      "pass": "cse", "notes": ["budget spent"],
                      "brain": "anthropic"})");
  ExpectRoundTrip(&ParseDrafterClaim,
                  R"({"candidates": [], "reason": "none of 5 candidates"})");
}

TEST(ClaimsTest, DrafterErrorsNameTheField) {
  ExpectError(&ParseDrafterClaim, R"({"candidates": [{"candidate": 1}]})",
              "field 'candidates[0].diff' is missing");
  ExpectError(&ParseDrafterClaim,
              R"({"candidates": [{"candidate": 0, "diff": "x"}]})",
              "field 'candidates[0].candidate' must be positive");
  ExpectError(&ParseDrafterClaim,
              R"({"candidates": [{"candidate": "1", "diff": "x"}]})",
              "field 'candidates[0].candidate' must be an integer, got "
              "string");
  ExpectError(&ParseDrafterClaim, R"({"candidates": {}})",
              "field 'candidates' must be an array, got object");
}

TEST(ClaimsTest, StressAuthorRoundTrip) {
  ExpectRoundTrip(&ParseStressAuthorClaim, WithCase(R"({"findings": [
                    {"case": "CASE", "status": "mismatch",
                     "signature": {"sig": "s1", "pass": "cse"}}],
                    "programs": 150,
                    "rounds": [{"focus": "passes", "names": ["cse"],
                                "seconds": 5, "programs": 150, "findings": 1},
                               {"focus": "ops", "names": ["dot"],
                                "seconds": 5, "error": "fuzz failed"}],
                    "reason": "r", "notes": ["fuzz failed"],
                    "brain": "openai"})"));
}

// One bad finding (a path for a case, no signature) is refused on its own;
// the claim's other findings stand.
// The author's failed campaigns as one log line: a model's errors of any
// size, with terminal escapes and forged log lines, come out bounded and
// on one line without controls; no failed campaign, no line.
TEST(ClaimsTest, FailedRoundsLineIsOneBoundedLine) {
  StressAuthorClaim none;
  none.rounds.push_back({.focus = "ops", .programs = 3});
  EXPECT_EQ(FailedRoundsLine(none), "");

  StressAuthorClaim hostile;
  hostile.rounds.push_back({.focus = "ops", .programs = 3});
  const std::string forged =
      "\x1b[2J\r\n2026-01-01T00:00:00Z error forged job=1\n" +
      std::string(1 << 20, 'x');
  hostile.rounds.push_back({.focus = "passes\x1b[31m", .error = forged});
  for (int i = 1; i < 1000; ++i) {
    hostile.rounds.push_back({.focus = "ops", .error = "e"});
  }
  const std::string line = FailedRoundsLine(hostile, 300);
  EXPECT_LE(line.size(), 300u);
  EXPECT_EQ(line.rfind("1000 of the author's campaigns failed; the first "
                       "(passes",
                       0),
            0u)
      << line;
  for (char c : line) {
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        << static_cast<int>(c);
  }
  EXPECT_NE(line.find("error forged job=1"), std::string::npos) << line;
}

TEST(ClaimsTest, StressAuthorRefusesBadFindingsOneByOne) {
  const std::string text = R"({"findings": [
      {"case": "CASE", "status": "mismatch", "signature": {"sig": "s1"}},
      {"case": "../../tmp/x", "status": "mismatch", "signature": {"sig": "s2"}},
      {"case": "OTHER", "status": "mismatch"},
      {"case": "OTHER", "signature": {"sig": ""}},
      {"case": "OTHER", "signature": {"sig": 7}},
      "CASE"], "programs": 9, "rounds": [{"focus": "ops"}]})";
  std::string t = WithCase(text);
  for (size_t p; (p = t.find("OTHER")) != std::string::npos;) {
    t.replace(p, 5, kOther);
  }
  StatusOr<StressAuthorClaim> c = ParseStressAuthorClaim(Doc(t));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->findings.size(), 1u);
  EXPECT_EQ(c->findings[0].case_id, kCase);
  EXPECT_EQ(c->findings[0].sig, "s1");
  EXPECT_EQ(c->findings[0].signature, Doc(R"({"sig": "s1"})"));
  EXPECT_EQ(c->programs, 9);
  ASSERT_EQ(c->refused.size(), 5u);
  EXPECT_NE(c->refused[0].find("field 'findings[1].case' must be a case id"),
            std::string::npos)
      << c->refused[0];
  EXPECT_NE(c->refused[1].find("field 'findings[2].signature' is missing"),
            std::string::npos)
      << c->refused[1];
  EXPECT_NE(c->refused[2].find("field 'findings[3].signature.sig' is empty"),
            std::string::npos)
      << c->refused[2];
  EXPECT_NE(c->refused[3].find("field 'findings[4].signature.sig' must be a "
                               "string, got number"),
            std::string::npos)
      << c->refused[3];
  EXPECT_NE(c->refused[4].find("field 'findings[5]' must be an object, got "
                               "string"),
            std::string::npos)
      << c->refused[4];
  // The refusals travel with the record.
  StatusOr<StressAuthorClaim> again = ParseStressAuthorClaim(ToJson(*c));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->refused, c->refused);
  EXPECT_EQ(again->findings.size(), 1u);
  // Structural errors still refuse the whole claim.
  ExpectError(&ParseStressAuthorClaim, R"({"findings": "many"})",
              "field 'findings' must be an array, got string");
  ExpectError(&ParseStressAuthorClaim, R"({"programs": "9"})",
              "field 'programs' must be an integer, got string");
  ExpectError(&ParseStressAuthorClaim, R"({"rounds": [{"names": []}]})",
              "field 'rounds[0].focus' is missing");
}

TEST(ClaimsTest, CaseSizeJson) {
  CaseSize s;
  EXPECT_EQ(DumpJsonDoc(ToJson(s)), "{}");
  s.instructions = 3;
  s.text_bytes = 120;
  EXPECT_EQ(DumpJsonDoc(ToJson(s)), R"({"instructions":3,"text_bytes":120})");
}

}  // namespace
}  // namespace trench::agents
