// The HTTP API's request and response bodies as records (api_handlers.h
// lists the endpoints), each with one mapping to and from JSON. The
// daemon writes and parses them here; the CLI (cmd_client.cc) reads the
// responses back through the same functions.
//
// Requests are strict: a field the endpoint does not take is refused
// ("unknown field 'x' (expected one of ...)"), and so is a field of the
// wrong type, null included ("field 'text' must be a string, got
// number"). Responses are read leniently: fields a client does not know
// are ignored. Every parse error is InvalidArgument naming the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/json_nlohmann.h"
#include "base/status.h"
#include "orchestrator/store/job_queue.h"
#include "orchestrator/store/records_json.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

// POST /api/v1/reports {"text"?, "title"?, "hlo"?, "inputs"?}.
struct ReportRequest {
  std::optional<std::string> text, title, hlo;
  // The entry parameters as JSON literals (compiler/ir/literal_json.h):
  // an array, or null when absent. Checked against the HLO by the handler.
  JsonDoc inputs;
};

// POST /api/v1/patches/{id}/review {"decision", "comment"?}.
struct ReviewRequest {
  enum class Decision { kApprove, kReject };
  Decision decision = Decision::kApprove;
  std::optional<std::string> comment;
};

// 201 {"id", "case"?}: the bug a report created, and its case.
struct ReportCreated {
  int64_t id = 0;
  std::optional<std::string> case_sha256;
};

// GET /api/v1/bugs -> {"bugs": [bug...], "next"?}.
struct BugList {
  std::vector<Bug> bugs;
  // When the page is full: the after= of the next page (the last id
  // listed); absent (0) when there is no more.
  int64_t next = 0;
};

// One job (a run of one of a bug's steps, or any other job of the queue):
// where it is, and why it stopped. A parked or failed one waits for POST
// /api/v1/jobs/{id}/retry (or the bug's retry).
struct BugJob {
  int64_t id = 0;
  std::string kind;
  std::string state;  // JobStateShownName: "running" for a leased job.
  int attempts = 0;   // Leases, lost ones included.
  int crashes = 0;    // Leases lost to a daemon crash (not failures).
  int max_attempts = 0;
  std::string last_error;     // In full.
  std::string parked_reason;  // ParkedReason: "" unless parked.
  int64_t updated_ms = 0;
  std::optional<int64_t> bug;  // The payload's "bug", when it names one.
  int64_t created_ms = 0;
  // A done job's result "note" (e.g. a finding waiting for an older bug's
  // culprit, pipeline/root_cause.h); "" when it has none.
  std::string note;
};
BugJob BugJobOf(const Job& job);

// GET /api/v1/jobs -> {"jobs": [job...], "next"?}: newest first; next is
// the before= of the next page (the last id listed) when the page is full.
struct JobList {
  std::vector<BugJob> jobs;
  int64_t next = 0;  // 0: no more.
};

// POST /api/v1/jobs/{id}/retry -> {"job"}: the job, queued again.
struct JobRetried {
  BugJob job;
};

// GET /api/v1/bugs/{id} -> {"bug", "events", "patches", "jobs"}.
struct BugPage {
  Bug bug;
  std::vector<Event> events;
  std::vector<Patch> patches;
  std::vector<BugJob> jobs;  // Newest first.
};

// POST /api/v1/bugs/{id}/retry -> {"bug": id, "retried": [job id...]}.
struct RetryResult {
  int64_t bug = 0;
  std::vector<int64_t> retried;
};

// POST .../review -> {"bug"}.
struct ReviewResult {
  Bug bug;
};

// GET /api/v1/events -> {"events": [bug or commit event...], "next"}.
struct EventFeed {
  using Entry = std::variant<Event, CommitEvent>;
  std::vector<Entry> events;
  int64_t next = 0;  // The last id listed: the since= of the next page.
};

// Every error response: {"error": {"code", "message"}}.
struct ErrorBody {
  std::string code;
  std::string message;
};

// Requests from a body's text. Errors: InvalidArgument "malformed JSON in
// request body: LINE:COL: ...", "request body must be a JSON object, got
// array", an unknown field, a field of the wrong type, a decision other
// than "approve" or "reject".
StatusOr<ReportRequest> ParseReportRequest(std::string_view body);
// A request body: one JSON object ("malformed JSON in request body: ...",
// "request body must be a JSON object, got array").
StatusOr<JsonDoc> ParseRequestBody(std::string_view body);
StatusOr<ReviewRequest> ParseReviewRequest(std::string_view body);

// Responses from a parsed body (what the CLI reads).
StatusOr<ReportCreated> ParseReportCreated(const JsonDoc& doc);
StatusOr<BugList> ParseBugList(const JsonDoc& doc);
StatusOr<BugPage> ParseBugPage(const JsonDoc& doc);
StatusOr<ReviewResult> ParseReviewResult(const JsonDoc& doc);
StatusOr<RetryResult> ParseRetryResult(const JsonDoc& doc);
StatusOr<EventFeed> ParseEventFeed(const JsonDoc& doc);
StatusOr<BugJob> ParseJob(const JsonDoc& doc);
StatusOr<JobList> ParseJobList(const JsonDoc& doc);
StatusOr<JobRetried> ParseJobRetried(const JsonDoc& doc);
StatusOr<ErrorBody> ParseErrorBody(const JsonDoc& doc);

JsonDoc ToJson(const ReportRequest& r);
JsonDoc ToJson(const ReviewRequest& r);
JsonDoc ToJson(const ReportCreated& r);
JsonDoc ToJson(const BugList& r);
JsonDoc ToJson(const BugPage& r);
JsonDoc ToJson(const ReviewResult& r);
JsonDoc ToJson(const BugJob& r);
JsonDoc ToJson(const RetryResult& r);
JsonDoc ToJson(const EventFeed& r);
JsonDoc ToJson(const JobList& r);
JsonDoc ToJson(const JobRetried& r);
JsonDoc ToJson(const ErrorBody& r);

// "approve", "reject".
std::string_view DecisionName(ReviewRequest::Decision d);

}  // namespace trench::orchestrator
