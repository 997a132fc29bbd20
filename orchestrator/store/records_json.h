// The store's records as JSON: the bodies of the API's bug, event and
// patch responses, the CLI's output and the triage report's input.
#pragma once

#include "base/json.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

Json BugToJson(const Bug& bug);
Json EventToJson(const Event& event);
Json CommitEventToJson(const CommitEvent& event);
Json PatchToJson(const Patch& patch);

}  // namespace trench::orchestrator
