// The store's records as JSON, one mapping each way (nlohmann/json): the
// API's bug, event and patch bodies (api_bodies.h), the CLI's reading of
// them and the triage report's input.
//
// Field names and order are the wire format of the HTTP API:
//   bug          {id, state, signature, title, created_ms, updated_ms,
//                 duplicate_of, flaky_rate, case_sha256, minimized_sha256,
//                 culprit_commit, fix_commit, details}   (absent: null)
//   event        {id, kind: "bug", bug_id, from, to, actor, evidence, at_ms}
//   commit event {id, kind: "commit", event, commit, actor, evidence, at_ms}
//   patch        {id, bug_id, branch, diff, verified, verification,
//                 created_ms, updated_ms}
//
// The FromJson functions read what ToJson writes and ignore fields they do
// not know (a newer daemon's). Errors: InvalidArgument naming the field
// ("field 'state' ...", "field 'id' must be a positive integer").
#pragma once

#include "base/json.h"
#include "base/json_nlohmann.h"
#include "base/status.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

JsonDoc ToJson(const Bug& bug);
JsonDoc ToJson(const Event& event);
JsonDoc ToJson(const CommitEvent& event);
JsonDoc ToJson(const Patch& patch);

StatusOr<Bug> BugFromJson(const JsonDoc& doc);
StatusOr<Event> EventFromJson(const JsonDoc& doc);
StatusOr<CommitEvent> CommitEventFromJson(const JsonDoc& doc);
StatusOr<Patch> PatchFromJson(const JsonDoc& doc);

// The same documents as base/json values, for the triage report
// (triage_report.h), which reads base/json.
inline Json BugToJson(const Bug& bug) { return FromJsonDoc(ToJson(bug)); }
inline Json EventToJson(const Event& e) { return FromJsonDoc(ToJson(e)); }
inline Json CommitEventToJson(const CommitEvent& e) {
  return FromJsonDoc(ToJson(e));
}
inline Json PatchToJson(const Patch& p) { return FromJsonDoc(ToJson(p)); }

}  // namespace trench::orchestrator
