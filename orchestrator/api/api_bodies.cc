// The HTTP API's bodies as records (api_bodies.h).
#include "orchestrator/api/api_bodies.h"

namespace trench::orchestrator {

StatusOr<JsonDoc> ParseRequestBody(std::string_view body) {
  StatusOr<JsonDoc> doc = ParseJsonDoc(body);
  if (!doc.ok()) {
    return InvalidArgument("malformed JSON in request body: " +
                           doc.status().message());
  }
  if (!doc->is_object()) {
    return InvalidArgument("request body must be a JSON object, got " +
                           std::string(doc->type_name()));
  }
  return doc;
}

namespace {

// The records of the array member `key` (absent: none).
template <typename T>
StatusOr<std::vector<T>> List(const JsonFields& f, std::string_view key,
                              StatusOr<T> (*parse)(const JsonDoc&)) {
  ASSIGN_OR_RETURN(const JsonDoc* a, f.OptionalArray(key));
  std::vector<T> out;
  for (size_t i = 0; a != nullptr && i < a->size(); ++i) {
    StatusOr<T> one = parse((*a)[i]);
    if (!one.ok()) {
      return one.status().WithContext(
          f.Name(std::string(key) + "[" + std::to_string(i) + "]"));
    }
    out.push_back(std::move(*one));
  }
  return out;
}

template <typename T>
JsonDoc ListJson(const std::vector<T>& v) {
  JsonDoc a = JsonDoc::array();
  for (const T& x : v) a.push_back(ToJson(x));
  return a;
}

StatusOr<Bug> BugMember(const JsonFields& f) {
  ASSIGN_OR_RETURN(const JsonDoc* bug, f.Required("bug"));
  StatusOr<Bug> b = BugFromJson(*bug);
  if (!b.ok()) return b.status().WithContext(f.Name("bug"));
  return b;
}

StatusOr<EventFeed::Entry> FeedEntry(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  ASSIGN_OR_RETURN(std::string kind, f.String("kind"));
  if (kind == "bug") {
    ASSIGN_OR_RETURN(Event e, EventFromJson(doc));
    return EventFeed::Entry(std::move(e));
  }
  if (kind == "commit") {
    ASSIGN_OR_RETURN(CommitEvent e, CommitEventFromJson(doc));
    return EventFeed::Entry(std::move(e));
  }
  return InvalidArgument(f.Name("kind") + " must be \"bug\" or \"commit\"");
}

StatusOr<BugJob> BugJobFromJson(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  BugJob j;
  ASSIGN_OR_RETURN(j.id, f.Int("id"));
  ASSIGN_OR_RETURN(j.kind, f.String("kind"));
  ASSIGN_OR_RETURN(j.state, f.String("state"));
  ASSIGN_OR_RETURN(int64_t attempts, f.Int("attempts"));
  ASSIGN_OR_RETURN(int64_t crashes, f.Int("crashes"));
  ASSIGN_OR_RETURN(int64_t max_attempts, f.Int("max_attempts"));
  j.attempts = static_cast<int>(attempts);
  j.crashes = static_cast<int>(crashes);
  j.max_attempts = static_cast<int>(max_attempts);
  ASSIGN_OR_RETURN(std::optional<std::string> error,
                   f.OptionalString("last_error"));
  j.last_error = error.value_or("");
  ASSIGN_OR_RETURN(std::optional<std::string> reason,
                   f.OptionalString("parked_reason"));
  j.parked_reason = reason.value_or("");
  ASSIGN_OR_RETURN(std::optional<std::string> note, f.OptionalString("note"));
  j.note = note.value_or("");
  ASSIGN_OR_RETURN(j.updated_ms, f.Int("updated_ms"));
  ASSIGN_OR_RETURN(j.bug, f.OptionalInt("bug"));
  ASSIGN_OR_RETURN(std::optional<int64_t> created, f.OptionalInt("created_ms"));
  j.created_ms = created.value_or(0);
  return j;
}

}  // namespace

BugJob BugJobOf(const Job& job) {
  BugJob j;
  j.id = job.id;
  j.kind = job.kind;
  j.state = std::string(JobStateShownName(job.state));
  j.attempts = job.attempts;
  j.crashes = job.crashes;
  j.max_attempts = job.max_attempts;
  j.last_error = job.last_error;
  j.parked_reason = ParkedReason(job);
  if (const Json* note = job.result.Find("note");
      job.state == JobState::kDone && note != nullptr && note->is_string()) {
    j.note = note->string_value();
  }
  j.updated_ms = job.updated_ms;
  if (const Json* bug = job.payload.Find("bug");
      bug != nullptr && bug->GetInt64().ok()) {
    j.bug = *bug->GetInt64();
  }
  j.created_ms = job.created_ms;
  return j;
}

StatusOr<BugJob> ParseJob(const JsonDoc& doc) { return BugJobFromJson(doc); }

StatusOr<JobList> ParseJobList(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  RETURN_IF_ERROR(f.Required("jobs").status());
  JobList r;
  ASSIGN_OR_RETURN(r.jobs, List<BugJob>(f, "jobs", &BugJobFromJson));
  ASSIGN_OR_RETURN(std::optional<int64_t> next, f.OptionalInt("next"));
  r.next = next.value_or(0);
  return r;
}

JsonDoc ToJson(const JobList& r) {
  JsonDoc j = JsonDoc::object();
  j["jobs"] = ListJson(r.jobs);
  if (r.next > 0) j["next"] = r.next;
  return j;
}

StatusOr<JobRetried> ParseJobRetried(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  ASSIGN_OR_RETURN(const JsonDoc* job, f.Required("job"));
  ASSIGN_OR_RETURN(BugJob j, BugJobFromJson(*job));
  return JobRetried{std::move(j)};
}

JsonDoc ToJson(const JobRetried& r) {
  JsonDoc j = JsonDoc::object();
  j["job"] = ToJson(r.job);
  return j;
}

JsonDoc ToJson(const BugJob& r) {
  JsonDoc j = JsonDoc::object();
  j["id"] = r.id;
  j["kind"] = r.kind;
  j["state"] = r.state;
  j["attempts"] = r.attempts;
  j["crashes"] = r.crashes;
  j["max_attempts"] = r.max_attempts;
  j["last_error"] = r.last_error;
  if (!r.parked_reason.empty()) j["parked_reason"] = r.parked_reason;
  if (!r.note.empty()) j["note"] = r.note;
  j["updated_ms"] = r.updated_ms;
  if (r.bug) j["bug"] = *r.bug;
  if (r.created_ms > 0) j["created_ms"] = r.created_ms;
  return j;
}

StatusOr<RetryResult> ParseRetryResult(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  RetryResult r;
  ASSIGN_OR_RETURN(r.bug, f.Int("bug"));
  ASSIGN_OR_RETURN(const JsonDoc* ids, f.OptionalArray("retried"));
  for (size_t i = 0; ids != nullptr && i < ids->size(); ++i) {
    if (!(*ids)[i].is_number_integer()) {
      return InvalidArgument(f.Name("retried[" + std::to_string(i) + "]") +
                             " must be an integer");
    }
    r.retried.push_back((*ids)[i].get<int64_t>());
  }
  return r;
}

JsonDoc ToJson(const RetryResult& r) {
  JsonDoc j = JsonDoc::object();
  j["bug"] = r.bug;
  j["retried"] = JsonDoc::array();
  for (int64_t id : r.retried) j["retried"].push_back(id);
  return j;
}

std::string_view DecisionName(ReviewRequest::Decision d) {
  return d == ReviewRequest::Decision::kApprove ? "approve" : "reject";
}

StatusOr<ReportRequest> ParseReportRequest(std::string_view body) {
  ASSIGN_OR_RETURN(JsonDoc doc, ParseRequestBody(body));
  ASSIGN_OR_RETURN(JsonFields f,
                   JsonFields::Of(doc, "", JsonFields::Null::kWrongType));
  RETURN_IF_ERROR(f.OnlyFields({"text", "title", "hlo", "inputs"}));
  ReportRequest r;
  ASSIGN_OR_RETURN(r.text, f.OptionalString("text"));
  ASSIGN_OR_RETURN(r.title, f.OptionalString("title"));
  ASSIGN_OR_RETURN(r.hlo, f.OptionalString("hlo"));
  if (f.Find("inputs") != nullptr) {
    if (!r.hlo) return InvalidArgument("field 'inputs' needs 'hlo'");
    ASSIGN_OR_RETURN(const JsonDoc* a, f.OptionalArray("inputs"));
    r.inputs = *a;
  }
  return r;
}

JsonDoc ToJson(const ReportRequest& r) {
  JsonDoc j = JsonDoc::object();
  if (r.text) j["text"] = *r.text;
  if (r.title) j["title"] = *r.title;
  if (r.hlo) j["hlo"] = *r.hlo;
  if (!r.inputs.is_null()) j["inputs"] = r.inputs;
  return j;
}

StatusOr<ReviewRequest> ParseReviewRequest(std::string_view body) {
  ASSIGN_OR_RETURN(JsonDoc doc, ParseRequestBody(body));
  ASSIGN_OR_RETURN(JsonFields f,
                   JsonFields::Of(doc, "", JsonFields::Null::kWrongType));
  RETURN_IF_ERROR(f.OnlyFields({"decision", "comment"}));
  ReviewRequest r;
  ASSIGN_OR_RETURN(std::optional<std::string> decision,
                   f.OptionalString("decision"));
  ASSIGN_OR_RETURN(r.comment, f.OptionalString("comment"));
  if (decision == "approve") {
    r.decision = ReviewRequest::Decision::kApprove;
  } else if (decision == "reject") {
    r.decision = ReviewRequest::Decision::kReject;
  } else {
    return InvalidArgument(
        "field 'decision' must be \"approve\" or \"reject\"");
  }
  return r;
}

JsonDoc ToJson(const ReviewRequest& r) {
  JsonDoc j = JsonDoc::object();
  j["decision"] = DecisionName(r.decision);
  if (r.comment) j["comment"] = *r.comment;
  return j;
}

StatusOr<ReportCreated> ParseReportCreated(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  ReportCreated r;
  ASSIGN_OR_RETURN(r.id, f.Int("id"));
  if (r.id <= 0) return InvalidArgument("field 'id' must be positive");
  ASSIGN_OR_RETURN(r.case_sha256, f.OptionalString("case"));
  return r;
}

JsonDoc ToJson(const ReportCreated& r) {
  JsonDoc j = JsonDoc::object();
  j["id"] = r.id;
  if (r.case_sha256) j["case"] = *r.case_sha256;
  return j;
}

StatusOr<BugList> ParseBugList(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  RETURN_IF_ERROR(f.Required("bugs").status());
  BugList r;
  ASSIGN_OR_RETURN(r.bugs, List<Bug>(f, "bugs", &BugFromJson));
  ASSIGN_OR_RETURN(std::optional<int64_t> next, f.OptionalInt("next"));
  r.next = next.value_or(0);
  return r;
}

JsonDoc ToJson(const BugList& r) {
  JsonDoc j = JsonDoc::object();
  j["bugs"] = ListJson(r.bugs);
  if (r.next > 0) j["next"] = r.next;
  return j;
}

StatusOr<BugPage> ParseBugPage(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  BugPage r;
  ASSIGN_OR_RETURN(r.bug, BugMember(f));
  ASSIGN_OR_RETURN(r.events, List<Event>(f, "events", &EventFromJson));
  ASSIGN_OR_RETURN(r.patches, List<Patch>(f, "patches", &PatchFromJson));
  ASSIGN_OR_RETURN(r.jobs, List<BugJob>(f, "jobs", &BugJobFromJson));
  return r;
}

JsonDoc ToJson(const BugPage& r) {
  JsonDoc j = JsonDoc::object();
  j["bug"] = ToJson(r.bug);
  j["events"] = ListJson(r.events);
  j["patches"] = ListJson(r.patches);
  j["jobs"] = ListJson(r.jobs);
  return j;
}

StatusOr<ReviewResult> ParseReviewResult(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  ReviewResult r;
  ASSIGN_OR_RETURN(r.bug, BugMember(f));
  return r;
}

JsonDoc ToJson(const ReviewResult& r) {
  JsonDoc j = JsonDoc::object();
  j["bug"] = ToJson(r.bug);
  return j;
}

StatusOr<EventFeed> ParseEventFeed(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  EventFeed r;
  RETURN_IF_ERROR(f.Required("events").status());
  ASSIGN_OR_RETURN(r.events, List<EventFeed::Entry>(f, "events", &FeedEntry));
  ASSIGN_OR_RETURN(std::optional<int64_t> next, f.OptionalInt("next"));
  r.next = next.value_or(0);
  return r;
}

JsonDoc ToJson(const EventFeed& r) {
  JsonDoc j = JsonDoc::object();
  JsonDoc list = JsonDoc::array();
  for (const EventFeed::Entry& e : r.events) {
    list.push_back(std::visit([](const auto& x) { return ToJson(x); }, e));
  }
  j["events"] = std::move(list);
  j["next"] = r.next;
  return j;
}

StatusOr<ErrorBody> ParseErrorBody(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  ASSIGN_OR_RETURN(const JsonDoc* error, f.Required("error"));
  ASSIGN_OR_RETURN(JsonFields ef, JsonFields::Of(*error, "error"));
  ErrorBody r;
  ASSIGN_OR_RETURN(r.code, ef.String("code"));
  ASSIGN_OR_RETURN(r.message, ef.String("message"));
  return r;
}

JsonDoc ToJson(const ErrorBody& r) {
  JsonDoc j = JsonDoc::object();
  j["error"] = {{"code", r.code}, {"message", r.message}};
  return j;
}

}  // namespace trench::orchestrator
