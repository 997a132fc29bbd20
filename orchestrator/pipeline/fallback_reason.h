// Why an agent session fell back to the built-in brain, as one short
// class of fallback_reasons.def (for the log line, the store and the
// metrics); the full text stays in the session's status.
#pragma once

#include <span>
#include <string_view>

namespace trench::orchestrator {

enum class FallbackReason {
#define TRENCH_FALLBACK_REASON(e, name, backend_error, meaning) e,
#include "orchestrator/pipeline/fallback_reasons.def"
};

// Every class, in fallback_reasons.def's order.
std::span<const FallbackReason> AllFallbackReasons();
std::string_view FallbackReasonName(FallbackReason reason);  // "timeout"
// True for the classes where the backend failed (an LLM error).
bool IsBackendError(FallbackReason reason);

// The class of an LLM brain's fallback reason (llm_brain.h: "<stop>:
// <detail>", the stop a runtime.h StopReasonName; for "backend_error" the
// detail is the client's Status::ToString(), "<CODE>: <what>: HTTP <n>
// ..."). kOther for anything it does not recognize.
FallbackReason ClassifyFallback(std::string_view brain_reason);

}  // namespace trench::orchestrator
