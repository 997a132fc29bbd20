// The HTTP API's endpoints (DESIGN.md "The daemon"), as plain functions of
// an ApiRequest: no HTTP library here (http_server.h carries them). The
// bodies below are the records of api_bodies.h.
//
//   POST /api/v1/reports            {"text"?, "title"?, "hlo"?, "inputs"?}
//        text: free text; hlo: HLO module text (parsed and verified by
//        compiler/ir, as the pipeline loads cases: 400 with the parser's or
//        the verifier's message and LINE:COL);
//        inputs: the entry parameters as JSON literals in the conformance
//        case format (compiler/ir/literal_json.h), one per parameter, only
//        with hlo. At least one of text and hlo. Creates a bug in state
//        new (with its case when hlo is given) -> 201 {"id", "case"?}.
//        The title is stored as one line without controls (the title as
//        given, when that changed it, is kept as details.report.title).
//        An "Idempotency-Key" header (1-255 printable ASCII, no spaces)
//        makes retries safe: the same key with the same report within
//        idempotency_retention_seconds answers the first bug's 201 again,
//        with "Idempotent-Replayed: true" and nothing written; with a
//        different report, 409. A bad key is 400.
//   GET  /api/v1/bugs[?state=&after=&limit=]   -> {"bugs": [...], "next"?}
//        In id order, after= the cursor; "next" (the last id listed) is
//        the after= of the next page, given when the page is full. A
//        state that is not a lifecycle state is 400 listing the valid
//        ones.
//   GET  /api/v1/bugs/{id}          -> {"bug", "events", "patches", "jobs"}
//        jobs: the bug's step runs, newest first (api_bodies.h BugJob):
//        kind, state, attempts, crashes, last error, parked reason.
//   POST /api/v1/bugs/{id}/retry    queues again each of the bug's steps
//        whose newest job is parked or failed -> {"bug", "retried": [job
//        ids]}; 404 for an unknown bug, 409 when there is none to retry.
//   POST /api/v1/patches/{id}/review {"decision": "approve"|"reject",
//        "comment"?}: {id} is the bug whose proposed patch (branch
//        trench/bug-<id>) is reviewed; moves it proposed -> approved or
//        rejected -> {"bug": ...}. An approval queues the push as the
//        triage verb does.
//   POST /api/v1/bugs/{id}/triage {"verb", "comment"?, "hint"?,
//        "duplicate_of"?} -> {"bug", "verb"}: a reviewer's verb
//        (approve, reject, redraft, duplicate, invalid, close, reopen;
//        api_triage.h, orchestrator/pipeline/triage_verbs.h).
//   GET  /api/v1/events[?since=&limit=&bug=|commit=&wait=] -> {"events",
//        "next"}
//        One feed in id order: the bugs' state changes ({"kind": "bug",
//        "bug_id", "from", "to", ...}) and the commits' events ({"kind":
//        "commit", "event": "commit_landed"|"build_ready", "commit", ...});
//        bug= lists only that bug's, commit= only that commit's. "next" is
//        the last id listed (the since= of the next page).
//        wait=SECONDS (0 to max_wait_seconds; more is clamped): a long
//        poll. With no event after since= yet, the answer waits until one
//        is written (woken by the store's event bell, event_bell.h; polled
//        every second as a fallback) or the wait is over (then "events" is
//        empty and "next" is since). No thread or store connection is held
//        per waiter; at most max_waiters wait at once, more get 503 with
//        "Retry-After: 1".
//   GET  /api/v1/events/stream[?since=&bug=|commit=] -> text/event-stream
//        The same feed as server-sent events, as it is written: each event
//        as "id: <id>\nevent: bug|commit\ndata: <its JSON>\n\n". It
//        starts after since=, else after the Last-Event-ID header's id (a
//        reconnecting EventSource), else after the newest event now. The
//        first chunk is "retry: 3000" and a comment naming the start; a
//        ": ping" comment follows every heartbeat interval without events.
//        A store error ends it with "event: error" (the client reconnects
//        and loses nothing). At most max_streams at once (503 with
//        Retry-After past it); no thread or store connection per stream.
//   GET  /api/v1/jobs[?state=&kind=&bug=&limit=&before=] -> {"jobs",
//        "next"?}
//        The job queue, newest first: state is one of queued, running (a
//        worker holds its lease), done, failed, parked; kind a job kind;
//        bug= only that bug's step jobs; before= ids below it (the "next"
//        of the previous page, given when a page is full). Each job as in
//        a bug's page, with "bug" when its payload names one.
//   GET  /api/v1/jobs/{id}          -> the job
//   POST /api/v1/jobs/{id}/retry    queues a failed or parked job again
//        (attempts and crashes reset) -> {"job"}; 404 for an unknown job,
//        409 when it is queued, running or done. Honours Idempotency-Key
//        as reports do: the same key for the same job within the
//        retention answers 200 again with "Idempotent-Replayed: true" and
//        changes nothing; for another job, 409.
//   GET  /metrics                   Prometheus text (metrics.h)
//   GET  /healthz                   -> {"status": "ok"}
//
// Who may do what:
// - Every POST needs "Authorization: Bearer <token>": 401 without it, 403
//   with another token (compared in constant time), 403 for every write
//   when no token is configured.
// - Cross-site request forgery: a POST is refused 403 when it carries an
//   Origin header that is not this server's own origin (http://<Host>) or
//   "Sec-Fetch-Site: cross-site"; a POST with a body from a browser (it
//   sends Origin or Sec-Fetch-Site) needs Content-Type application/json
//   (415 otherwise), which a cross-site form cannot send without a CORS
//   preflight (and the daemon answers no preflight). Other clients (curl
//   -d, libcurl's default form type) are not asked for it.
// - Reads (every GET of /api/ and /metrics) need no token unless
//   ApiOptions::read_token is set; then the read token or the write token
//   as "Authorization: Bearer" (401 / 403 as for writes). /healthz never
//   needs one. Errors are {"error": {"code", "message"}}
// with 400 (bad JSON with line:column, wrong field types naming the field,
// unknown fields, HLO that does not parse or verify, with line:column), 404
// (unknown route or id), 405 (wrong method, with Allow), 409 (illegal lifecycle
// move, with the lifecycle's message), 500/503 (store errors). A failed request
// writes nothing: each write is one store transaction after validation.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/api_request.h"
#include "orchestrator/api/http_metrics.h"
#include "orchestrator/config/daemon_config.h"
#include "orchestrator/store/records_json.h"
#include "orchestrator/store/store.h"

namespace trench::sandbox {
struct Options;
}  // namespace trench::sandbox

namespace trench::orchestrator {

class Executor;

struct ApiOptions {
  std::string token;  // Bearer token for writes; empty: writes refused.
  // When not empty, a reported HLO module is also written to
  // <cases_dir>/<sha256>/module.hlo (the case row's path).
  std::string cases_dir;
  int default_limit = 100;  // List size when ?limit= is absent.
  int max_limit = 1000;     // Larger ?limit= values are clamped.
  // How long POST /api/v1/reports (and .../retry of a job) remembers an
  // Idempotency-Key: a retry with the same key and request within it gets
  // the first answer back.
  int64_t idempotency_retention_seconds = 24 * 3600;
  // GET /api/v1/events?wait=: the longest wait, and how many clients may
  // wait at once.
  int max_wait_seconds = 60;
  int max_waiters = 32;
  // GET /api/v1/events/stream: how many streams may be open at once.
  int max_streams = 256;
  // When not empty, reads need it (or `token`); see "Who may do what".
  std::string read_token;
  // config review.on_approve "push": an approval queues the push job.
  bool push_on_approve = false;
  // The web dashboard's data (web_data.h): the watched repository as
  // configured, the git directory read with libgit2 for commit summaries
  // and the culprit's diff (the daemon's mirror; "": `repo`), its branch,
  // the configured known-good commit, the swarm as configured, and the
  // Graphviz program drawing a bug's module.
  std::string repo;
  std::string git_dir;
  std::string branch;
  std::string good_commit;
  std::map<std::string, RoleConfig> swarm;
  std::string dot_program = "dot";  // A path, or a name looked up in PATH.
  // Where dot runs (bug_graph.h's RenderSvg): the daemon's sandbox
  // options, with work_dir the directory each render makes its own below;
  // null: a plain child process (tests of the pages only).
  std::shared_ptr<const sandbox::Options> graph_sandbox;
};

// Which events a feed lists: bug= only that bug's, commit= only that
// commit's (not both).
struct EventFilter {
  std::optional<int64_t> bug;
  std::optional<std::string> commit;
};
// The filter of a request's bug= / commit=; InvalidArgument for a bad id
// or both given.
StatusOr<EventFilter> ParseEventFilter(const ApiRequest& request);

// The long polls of GET /api/v1/events?wait= (api_events.cc).
struct EventWaiters;

class ApiHandlers {
 public:
  // `store` is not owned and must outlive the handlers.
  ApiHandlers(Store* store, ApiOptions options);
  // Waiting long polls answer empty from then on.
  ~ApiHandlers();

  // Answers one request. Thread-safe: calls are serialised (the store is
  // one connection). Never fails: errors are error responses. Each one is
  // counted in the HTTP metrics (by route pattern, method and status).
  ApiResponse Handle(const ApiRequest& request);
  // The runner whose counters /metrics reports (null, the default: they
  // read 0). Not owned; must outlive the handlers or be unset first.
  // Thread-safe.
  void SetExecutor(const Executor* runner);

 private:
  ApiResponse Route(const ApiRequest& request);
  // The 401/403/415 response, or nullopt when the request may write.
  std::optional<ApiResponse> CheckToken(const ApiRequest& request) const;
  // The 401/403 response, or nullopt when the request may read.
  std::optional<ApiResponse> CheckRead(const ApiRequest& request) const;
  ApiResponse PostReport(const ApiRequest& request);
  ApiResponse GetBug(std::string_view id);
  ApiResponse Review(std::string_view id, const ApiRequest& request);
  // POST /api/v1/bugs/{id}/triage (api_triage.cc), or nullopt for another
  // path.
  std::optional<ApiResponse> RouteTriage(const ApiRequest& request);
  ApiResponse Retry(std::string_view id);
  ApiResponse ListEvents(const ApiRequest& request);
  // The events now (ListEvents without wait=); `any` tells whether the
  // feed has one.
  ApiResponse EventsNow(const ApiRequest& request, bool* any);
  // The feed after `since`, at most `limit` events.
  StatusOr<EventFeed> FeedAfter(int64_t since, int limit,
                                const EventFilter& filter);
  ApiResponse StreamEvents(const ApiRequest& request);
  // The /api/v1/jobs routes (api_jobs.cc), or nullopt for another path.
  std::optional<ApiResponse> RouteJobs(const ApiRequest& request);
  ApiResponse ListJobs(const ApiRequest& request);
  ApiResponse GetJob(std::string_view id);
  ApiResponse RetryJob(std::string_view id, const ApiRequest& request);
  ApiResponse Metrics();

  friend class EventsPending;
  friend class EventStream;

  std::mutex mu_;
  Store* store_;                      // Used under mu_.
  const Executor* runner_ = nullptr;  // GUARDED_BY(mu_)
  ApiOptions options_;
  HttpMetrics http_metrics_;  // Thread-safe itself.
  std::shared_ptr<EventWaiters> waiters_;
};

}  // namespace trench::orchestrator
