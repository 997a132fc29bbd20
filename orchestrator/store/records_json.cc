// The store's records as JSON (records_json.h).
#include "orchestrator/store/records_json.h"

namespace trench::orchestrator {
namespace {

// A record's id field: a positive integer.
StatusOr<int64_t> IdField(const JsonFields& f, std::string_view key) {
  ASSIGN_OR_RETURN(int64_t id, f.Int(key));
  if (id <= 0) {
    return InvalidArgument(f.Name(key) + " must be a positive integer, got " +
                           std::to_string(id));
  }
  return id;
}

StatusOr<BugState> StateField(const JsonFields& f, std::string_view key) {
  ASSIGN_OR_RETURN(std::string name, f.String(key));
  StatusOr<BugState> s = ParseBugState(name);
  if (!s.ok()) return s.status().WithContext(f.Name(key));
  return s;
}

// A base/json member (details, evidence, verification); absent: `def`.
Json JsonMember(const JsonFields& f, std::string_view key, Json def) {
  const JsonDoc* v = f.Find(key);
  return v != nullptr ? FromJsonDoc(*v) : def;
}

}  // namespace

JsonDoc ToJson(const Bug& bug) {
  JsonDoc j = JsonDoc::object();
  j["id"] = bug.id;
  j["state"] = BugStateName(bug.state);
  j["signature"] = bug.signature;
  j["title"] = bug.title;
  j["created_ms"] = bug.created_ms;
  j["updated_ms"] = bug.updated_ms;
  j["duplicate_of"] = JsonDocOrNull(bug.duplicate_of);
  j["flaky_rate"] = JsonDocOrNull(bug.flaky_rate);
  j["case_sha256"] = JsonDocOrNull(bug.case_sha256);
  j["minimized_sha256"] = JsonDocOrNull(bug.minimized_sha256);
  j["culprit_commit"] = JsonDocOrNull(bug.culprit_commit);
  j["fix_commit"] = JsonDocOrNull(bug.fix_commit);
  j["details"] = ToJsonDoc(bug.details);
  return j;
}

StatusOr<Bug> BugFromJson(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  Bug b;
  ASSIGN_OR_RETURN(b.id, IdField(f, "id"));
  ASSIGN_OR_RETURN(b.state, StateField(f, "state"));
  ASSIGN_OR_RETURN(std::optional<std::string> sig,
                   f.OptionalString("signature"));
  b.signature = sig.value_or("");
  ASSIGN_OR_RETURN(std::optional<std::string> title, f.OptionalString("title"));
  b.title = title.value_or("");
  ASSIGN_OR_RETURN(std::optional<int64_t> created, f.OptionalInt("created_ms"));
  b.created_ms = created.value_or(0);
  ASSIGN_OR_RETURN(std::optional<int64_t> updated, f.OptionalInt("updated_ms"));
  b.updated_ms = updated.value_or(0);
  ASSIGN_OR_RETURN(b.duplicate_of, f.OptionalInt("duplicate_of"));
  if (b.duplicate_of && *b.duplicate_of <= 0) {
    return InvalidArgument(f.Name("duplicate_of") +
                           " must be a positive integer");
  }
  ASSIGN_OR_RETURN(b.flaky_rate, f.OptionalDouble("flaky_rate"));
  ASSIGN_OR_RETURN(b.case_sha256, f.OptionalString("case_sha256"));
  ASSIGN_OR_RETURN(b.minimized_sha256, f.OptionalString("minimized_sha256"));
  ASSIGN_OR_RETURN(b.culprit_commit, f.OptionalString("culprit_commit"));
  ASSIGN_OR_RETURN(b.fix_commit, f.OptionalString("fix_commit"));
  ASSIGN_OR_RETURN(const JsonDoc* details, f.OptionalObject("details"));
  if (details != nullptr) b.details = FromJsonDoc(*details);
  return b;
}

JsonDoc ToJson(const Event& event) {
  JsonDoc j = JsonDoc::object();
  j["id"] = event.id;
  j["kind"] = "bug";
  j["bug_id"] = event.bug_id;
  j["from"] = event.from ? JsonDoc(BugStateName(*event.from)) : JsonDoc();
  j["to"] = BugStateName(event.to);
  j["actor"] = event.actor;
  j["evidence"] = ToJsonDoc(event.evidence);
  j["at_ms"] = event.at_ms;
  return j;
}

StatusOr<Event> EventFromJson(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  Event e;
  ASSIGN_OR_RETURN(e.id, IdField(f, "id"));
  ASSIGN_OR_RETURN(e.bug_id, IdField(f, "bug_id"));
  if (f.Find("from") != nullptr) {
    ASSIGN_OR_RETURN(e.from, StateField(f, "from"));
  }
  ASSIGN_OR_RETURN(e.to, StateField(f, "to"));
  ASSIGN_OR_RETURN(std::optional<std::string> actor, f.OptionalString("actor"));
  e.actor = actor.value_or("");
  e.evidence = JsonMember(f, "evidence", Json());
  ASSIGN_OR_RETURN(std::optional<int64_t> at, f.OptionalInt("at_ms"));
  e.at_ms = at.value_or(0);
  return e;
}

JsonDoc ToJson(const CommitEvent& event) {
  JsonDoc j = JsonDoc::object();
  j["id"] = event.id;
  j["kind"] = "commit";
  j["event"] = CommitEventName(event.kind);
  j["commit"] = event.commit_sha;
  j["actor"] = event.actor;
  j["evidence"] = ToJsonDoc(event.evidence);
  j["at_ms"] = event.at_ms;
  return j;
}

StatusOr<CommitEvent> CommitEventFromJson(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  CommitEvent e;
  ASSIGN_OR_RETURN(e.id, IdField(f, "id"));
  ASSIGN_OR_RETURN(std::string kind, f.String("event"));
  bool known = false;
  for (CommitEventKind k :
       {CommitEventKind::kCommitLanded, CommitEventKind::kBuildReady}) {
    if (CommitEventName(k) == kind) e.kind = k, known = true;
  }
  if (!known) {
    return InvalidArgument(f.Name("event") + ": unknown commit event '" + kind +
                           "'");
  }
  ASSIGN_OR_RETURN(e.commit_sha, f.String("commit"));
  ASSIGN_OR_RETURN(std::optional<std::string> actor, f.OptionalString("actor"));
  e.actor = actor.value_or("");
  e.evidence = JsonMember(f, "evidence", Json());
  ASSIGN_OR_RETURN(std::optional<int64_t> at, f.OptionalInt("at_ms"));
  e.at_ms = at.value_or(0);
  return e;
}

JsonDoc ToJson(const Patch& patch) {
  JsonDoc j = JsonDoc::object();
  j["id"] = patch.id;
  j["bug_id"] = patch.bug_id;
  j["branch"] = patch.branch;
  j["diff"] = patch.diff;
  j["verified"] = patch.verified;
  j["verification"] = ToJsonDoc(patch.verification);
  j["created_ms"] = patch.created_ms;
  j["updated_ms"] = patch.updated_ms;
  return j;
}

StatusOr<Patch> PatchFromJson(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  Patch p;
  ASSIGN_OR_RETURN(p.id, IdField(f, "id"));
  ASSIGN_OR_RETURN(p.bug_id, IdField(f, "bug_id"));
  ASSIGN_OR_RETURN(std::optional<std::string> branch,
                   f.OptionalString("branch"));
  p.branch = branch.value_or("");
  ASSIGN_OR_RETURN(std::optional<std::string> diff, f.OptionalString("diff"));
  p.diff = diff.value_or("");
  ASSIGN_OR_RETURN(std::optional<bool> verified, f.OptionalBool("verified"));
  p.verified = verified.value_or(false);
  p.verification = JsonMember(f, "verification", Json::MakeObject());
  ASSIGN_OR_RETURN(std::optional<int64_t> created, f.OptionalInt("created_ms"));
  p.created_ms = created.value_or(0);
  ASSIGN_OR_RETURN(std::optional<int64_t> updated, f.OptionalInt("updated_ms"));
  p.updated_ms = updated.value_or(0);
  return p;
}

}  // namespace trench::orchestrator
