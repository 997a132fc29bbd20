// The triage verbs' API (api_triage.cc): the body records of
//   POST /api/v1/bugs/{id}/triage {"verb", "comment"?, "hint"?,
//        "duplicate_of"?} -> 200 {"bug", "verb"}
// The verbs are lifecycle.def's TRENCH_TRIAGE_VERB (approve, reject,
// redraft, duplicate, invalid, close, reopen); ApplyTriage
// (orchestrator/pipeline/triage_verbs.h) says what each does. Errors: 400
// for a bad body (malformed JSON, an unknown field, a field of the wrong
// type, an unknown verb, "hint" missing or empty for redraft,
// "duplicate_of" missing for duplicate, either given for another verb:
// each names the field), 404 for an unknown bug, 409 with the lifecycle's
// message for a verb that does not apply to the bug's state (or a
// duplicate of itself or of a missing bug).
#pragma once

#include <string_view>

#include "base/json_nlohmann.h"
#include "base/status.h"
#include "orchestrator/pipeline/triage_verbs.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

// 200 {"bug": Bug, "verb": V}.
struct TriageResult {
  Bug bug;
  TriageVerb verb = TriageVerb::kApprove;
};

// Strict, as api_bodies.h's requests.
StatusOr<TriageAction> ParseTriageRequest(std::string_view body);
JsonDoc ToJson(const TriageAction& r);
StatusOr<TriageResult> ParseTriageResult(const JsonDoc& doc);
JsonDoc ToJson(const TriageResult& r);

}  // namespace trench::orchestrator
