// The agents' claims as records (brain.h lists the roles' claim shapes).
// A brain answers with a JSON claim; the orchestrator reads it only through
// these records, each with one mapping to and from JSON. A claim is
// untrusted input (a model wrote it): parsing checks every field it keeps,
// refuses ids that are not ids (a case id is a stored case's sha256, never a
// path) and ignores fields it does not know.
//
// Parse errors are InvalidArgument naming the field: "field 'case' is
// missing", "field 'runs' must be an integer, got string", "field 'case'
// must be a case id (64 lowercase hex digits), got \"../x\"".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_nlohmann.h"
#include "base/status.h"

namespace trench::agents {

// A stored case's id: exactly 64 lowercase hex digits.
bool IsCaseId(std::string_view s);

// Who made a claim, as the brain's runner records it (llm_brain.h).
struct ClaimSource {
  std::string brain;                   // "openai", "anthropic"; "" builtin.
  std::optional<std::string> summary;  // The model's finish summary.
  struct Fallback {
    std::string from, reason;  // The LLM backend and why it was left.
  };
  std::optional<Fallback> fallback;  // Set when the built-in brain answered.
};

// A case's size, as hlo-reduce reports it; each part optional.
struct CaseSize {
  std::optional<int64_t> instructions, elements, text_bytes;
};

// reproducer: {case, runs, failures, rate, status, signature} or
// {case: null, reason}.
struct ReproducerClaim {
  std::optional<std::string> case_id;  // Absent or null: no case made.
  std::optional<std::string> outcome;  // reproduced | flaky | ...
  std::optional<int64_t> runs, failures;
  std::optional<double> rate;
  std::optional<std::string> status;  // The most frequent verdict status.
  JsonDoc signature;                  // The verdict's signature, or null.
  std::vector<std::string> statuses;
  std::optional<std::string> reason;
  // A report described in words: the campaign aimed at the ops it names.
  struct Described {
    std::vector<std::string> ops, dropped;
    std::optional<int64_t> seconds, programs;
  };
  std::optional<Described> described;
  std::vector<std::string> notes;
  ClaimSource source;
};

// minimizer: {case, before, after}; `case` is the input case when nothing
// smaller was found.
struct MinimizerClaim {
  std::optional<std::string> case_id;
  std::optional<CaseSize> before, after;
  std::optional<std::string> status;  // How the input case fails.
  std::optional<bool> verified;
  struct Round {
    std::string case_id;
    std::optional<CaseSize> before, after;
    std::optional<double> gain_percent, seconds;
  };
  std::vector<Round> rounds;
  std::optional<std::string> reason;
  std::vector<std::string> notes;
  ClaimSource source;
};

// patch_drafter: {candidates: [{candidate, strategy, diff}]}.
struct DrafterClaim {
  struct Candidate {
    int64_t candidate = 0;  // submit_patch's number, positive.
    std::string strategy;
    std::string diff;
    std::optional<int64_t> changed_lines;
    std::optional<std::string> rationale, detail;
  };
  std::vector<Candidate> candidates;
  std::optional<std::string> pass;  // The localized pass drafted for.
  std::optional<std::string> reason;
  std::vector<std::string> notes;
  ClaimSource source;
};

// stress_test_author: {findings: [{case, status, signature}]}.
struct StressAuthorClaim {
  struct Finding {
    std::string case_id;
    std::string status;
    std::string sig;    // signature.sig: the dedup hash, never empty.
    JsonDoc signature;  // The whole verdict signature (an object).
  };
  std::vector<Finding> findings;
  // The entries of `findings` that were refused (a path for a case, no
  // signature), each as its parse error; a refused finding is not filed.
  std::vector<std::string> refused;
  std::optional<int64_t> programs;
  // The built-in author's campaigns, one per focus ("ops", "passes",
  // "none").
  struct Round {
    std::string focus;
    std::vector<std::string> names;
    std::optional<int64_t> seconds, programs, findings;
    std::optional<std::string> error;  // The fuzz tool's, when it failed.
  };
  std::vector<Round> rounds;
  std::optional<std::string> reason;
  std::vector<std::string> notes;
  ClaimSource source;
};

// The records from a claim. Errors: InvalidArgument naming the field (see
// above); a claim that is not an object is "the document must be an
// object, got <type>".
StatusOr<ReproducerClaim> ParseReproducerClaim(const JsonDoc& claim);
StatusOr<MinimizerClaim> ParseMinimizerClaim(const JsonDoc& claim);
StatusOr<DrafterClaim> ParseDrafterClaim(const JsonDoc& claim);
StatusOr<StressAuthorClaim> ParseStressAuthorClaim(const JsonDoc& claim);

// The author's failed campaigns in one line for a log or a terminal:
// "N of the author's campaigns failed; the first (FOCUS: ERROR)", the
// whole cut to `max_bytes` (OneLine: controls gone, one line); "" when
// none failed. The errors may be a model's text of any size.
std::string FailedRoundsLine(const StressAuthorClaim& claim,
                             size_t max_bytes = 300);

// The records as JSON: brain.h's field names; absent optional fields are
// left out, except that `case` (reproducer, minimizer) and `before` /
// `after` (minimizer) are null when absent. `refused` findings are listed
// under "refused".
JsonDoc ToJson(const ReproducerClaim& claim);
JsonDoc ToJson(const MinimizerClaim& claim);
JsonDoc ToJson(const DrafterClaim& claim);
JsonDoc ToJson(const StressAuthorClaim& claim);
JsonDoc ToJson(const CaseSize& size);

}  // namespace trench::agents
