// The store's records as JSON (records_json.h).
#include "orchestrator/store/records_json.h"

namespace trench::orchestrator {
namespace {

Json OptionalJson(const std::optional<std::string>& s) {
  return s ? Json(*s) : Json();
}

}  // namespace

Json BugToJson(const Bug& bug) {
  Json j = Json::MakeObject();
  j["id"] = bug.id;
  j["state"] = BugStateName(bug.state);
  j["signature"] = bug.signature;
  j["title"] = bug.title;
  j["created_ms"] = bug.created_ms;
  j["updated_ms"] = bug.updated_ms;
  j["duplicate_of"] = bug.duplicate_of ? Json(*bug.duplicate_of) : Json();
  j["flaky_rate"] = bug.flaky_rate ? Json(*bug.flaky_rate) : Json();
  j["case_sha256"] = OptionalJson(bug.case_sha256);
  j["minimized_sha256"] = OptionalJson(bug.minimized_sha256);
  j["culprit_commit"] = OptionalJson(bug.culprit_commit);
  j["fix_commit"] = OptionalJson(bug.fix_commit);
  j["details"] = bug.details;
  return j;
}

Json EventToJson(const Event& event) {
  Json j = Json::MakeObject();
  j["id"] = event.id;
  j["kind"] = "bug";
  j["bug_id"] = event.bug_id;
  j["from"] = event.from ? Json(BugStateName(*event.from)) : Json();
  j["to"] = BugStateName(event.to);
  j["actor"] = event.actor;
  j["evidence"] = event.evidence;
  j["at_ms"] = event.at_ms;
  return j;
}

Json CommitEventToJson(const CommitEvent& event) {
  Json j = Json::MakeObject();
  j["id"] = event.id;
  j["kind"] = "commit";
  j["event"] = CommitEventName(event.kind);
  j["commit"] = event.commit_sha;
  j["actor"] = event.actor;
  j["evidence"] = event.evidence;
  j["at_ms"] = event.at_ms;
  return j;
}

Json PatchToJson(const Patch& patch) {
  Json j = Json::MakeObject();
  j["id"] = patch.id;
  j["bug_id"] = patch.bug_id;
  j["branch"] = patch.branch;
  j["diff"] = patch.diff;
  j["verified"] = patch.verified;
  j["verification"] = patch.verification;
  j["created_ms"] = patch.created_ms;
  j["updated_ms"] = patch.updated_ms;
  return j;
}

}  // namespace trench::orchestrator
