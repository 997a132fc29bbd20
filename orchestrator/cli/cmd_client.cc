// The API client commands: report, bugs, show, review (every triage verb),
// retry, events (jobs are in cmd_jobs.cc). They talk to the daemon's HTTP
// API (api_handlers.h) through agents/http_client.h.
#include <cctype>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <thread>
#include <variant>

#include "base/display_text.h"
#include "base/json_nlohmann.h"
#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/api_triage.h"
#include "orchestrator/cli/api_client.h"
#include "orchestrator/cli/cli.h"
#include "orchestrator/pipeline/triage_report.h"
#include "orchestrator/store/lifecycle.h"

namespace trench::cli {
namespace {

constexpr int kPageSize = 1000;

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return IoError("cannot read " + path);
  return s.str();
}

// The "## Jobs" section of `trench show`: each run of the bug's steps,
// newest first; a parked or failed one says why and how to retry it.
std::string JobsText(const std::vector<orchestrator::BugJob>& jobs,
                     int64_t bug) {
  if (jobs.empty()) return "";
  std::ostringstream o;
  o << "\n## Jobs\n\n";
  bool stuck = false;
  for (const orchestrator::BugJob& j : jobs) {
    o << "- job " << j.id << " " << j.kind << ": " << j.state << ", "
      << (j.attempts - j.crashes) << " of " << j.max_attempts
      << " attempts used";
    if (j.crashes > 0) o << ", " << j.crashes << " lost to crashes";
    o << "\n";
    if (!j.parked_reason.empty()) {
      o << "  parked: " << EscapeControls(j.parked_reason, false) << "\n";
    } else if (!j.last_error.empty() && j.state != "done") {
      o << "  last error: " << EscapeControls(j.last_error, false) << "\n";
    }
    stuck |= j.state == "parked" || j.state == "failed";
  }
  if (stuck) {
    o << "\nRetry with: trench retry " << bug
      << " (every stuck step), or trench jobs retry JOB\n";
  }
  return o.str();
}

using orchestrator::Bug;
using orchestrator::BugStateName;

// A bug id argument: a positive integer.
StatusOr<int64_t> BugId(const std::string& text) {
  std::optional<int64_t> id = PositiveId(text);
  if (!id) {
    return InvalidArgument("bug id must be a positive integer, got '" + text +
                           "'");
  }
  return *id;
}

}  // namespace

std::string ExtractInlineHlo(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos <= text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    lines.push_back(text.substr(pos, eol - pos));
    pos = eol + 1;
  }
  auto trimmed = [](std::string_view l) {
    const size_t b = l.find_first_not_of(" \t\r");
    return b == std::string_view::npos ? std::string_view() : l.substr(b);
  };
  bool in_fence = false;
  size_t start = lines.size();
  bool fenced = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = trimmed(lines[i]);
    if (t.starts_with("```")) {
      in_fence = !in_fence;
      continue;
    }
    if (t.starts_with("HloModule ")) {
      start = i;
      fenced = in_fence;
      break;
    }
  }
  if (start == lines.size()) return "";
  std::string out;
  int depth = 0;
  bool in_entry = false;
  for (size_t i = start; i < lines.size(); ++i) {
    std::string_view t = trimmed(lines[i]);
    if (fenced && t.starts_with("```")) break;
    out.append(lines[i]);
    out += '\n';
    if (fenced) continue;
    if (depth == 0 && t.starts_with("ENTRY")) in_entry = true;
    bool quoted = false;
    for (size_t k = 0; k < t.size(); ++k) {
      const char c = t[k];
      if (c == '\\' && quoted) {
        ++k;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (!quoted && c == '{') {
        ++depth;
      } else if (!quoted && c == '}') {
        depth = std::max(0, depth - 1);
      }
    }
    if (in_entry && depth == 0 && t.find('}') != std::string_view::npos) break;
  }
  return out;
}

int CmdReport(const Context& ctx) {
  std::string file, title, hlo_path, inputs_path, server;
  std::vector<std::string> extra;
  FlagParser p = CommandParser("report");
  p.AllowNoArguments();  // The report's text on stdin.
  p.Positional("FILE", &file, "the report's text; - or none: stdin");
  p.Rest("", &extra, "");
  p.String("title", "T", &title, "the bug's title");
  p.String("hlo", "F.hlo", &hlo_path,
           "the HLO module (else: inline in the text)");
  p.String("inputs", "F.json", &inputs_path, "the module's inputs (JSON)");
  ServerFlag(&p, &server);
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  if (!extra.empty()) {
    return UsageError(ctx, "report", "at most one FILE (or - for stdin)");
  }
  std::string text;
  if (file == "-" || (file.empty() && !p.Given("hlo"))) {
    std::ostringstream s;
    s << ctx.in->rdbuf();
    text = s.str();
  } else if (!file.empty()) {
    StatusOr<std::string> t = ReadFile(file);
    if (!t.ok()) return ApiFail(ctx, t.status());
    text = std::move(*t);
  }
  orchestrator::ReportRequest body;
  if (!text.empty()) body.text = text;
  if (p.Given("title")) body.title = title;
  std::string hlo;
  if (p.Given("hlo")) {
    StatusOr<std::string> h = ReadFile(hlo_path);
    if (!h.ok()) return ApiFail(ctx, h.status());
    hlo = std::move(*h);
  } else {
    hlo = ExtractInlineHlo(text);
  }
  if (!hlo.empty()) body.hlo = hlo;
  if (p.Given("inputs")) {
    const std::string& path = inputs_path;
    StatusOr<std::string> raw = ReadFile(path);
    if (!raw.ok()) return ApiFail(ctx, raw.status());
    StatusOr<JsonDoc> inputs = ParseJsonDoc(*raw);
    if (!inputs.ok()) return Fail(ctx, path + ":" + inputs.status().message());
    if (hlo.empty()) {
      return UsageError(ctx, "report",
                        "--inputs needs an HLO module (--hlo, or inline)");
    }
    body.inputs = std::move(*inputs);
  }
  if (text.empty() && hlo.empty()) {
    return UsageError(ctx, "report", "the report is empty: give text or --hlo");
  }
  ApiClient api(ctx, server);
  StatusOr<JsonDoc> r = api.Post("/api/v1/reports", ToJson(body));
  if (!r.ok()) return ApiFail(ctx, r.status());
  StatusOr<orchestrator::ReportCreated> created =
      orchestrator::ParseReportCreated(*r);
  if (!created.ok()) return Fail(ctx, Unexpected(created.status()));
  *ctx.out << created->id << "\n";
  const std::string c = created->case_sha256.value_or("");
  *ctx.err << "trench: bug " << created->id << " created"
           << (c.empty() ? "" : " with case " + c.substr(0, 12)) << "\n";
  return kExitOk;
}

int CmdBugs(const Context& ctx) {
  std::string state, server, page_cursor;
  int limit = 0;
  bool json = false;
  FlagParser p = CommandParser("bugs");
  p.AllowNoArguments();  // Lists every bug.
  const std::string state_help =
      "only the bugs in state S, one of:\n" + orchestrator::BugStateNames();
  p.String("state", "S", &state, state_help);
  p.Number("limit", "N", &limit,
           "one page of at most N bugs (default: every bug); a full page\n"
           "says the --page of the next one");
  p.String("page", "CURSOR", &page_cursor,
           "the page after CURSOR (the bug id a previous page gave as\n"
           "next)");
  p.Bool("json", &json, "the bugs as JSON");
  ServerFlag(&p, &server);
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  if (p.Given("state")) {
    StatusOr<orchestrator::BugState> s = orchestrator::ParseBugState(state);
    if (!s.ok()) return UsageError(ctx, "bugs", s.status().message());
  }
  if (p.Given("limit") && limit < 1) {
    return UsageError(ctx, "bugs", "--limit must be at least 1");
  }
  int64_t after = 0;
  if (p.Given("page")) {
    std::optional<int64_t> cursor = PositiveId(page_cursor);
    if (!cursor) {
      return UsageError(ctx, "bugs",
                        "--page must be a cursor (a bug id) from a previous "
                        "page, got '" +
                            page_cursor + "'");
    }
    after = *cursor;
  }
  const bool one_page = p.Given("limit");
  const int page_size = one_page ? limit : kPageSize;
  ApiClient api(ctx, server);
  orchestrator::BugList all;
  while (true) {
    std::string path = "/api/v1/bugs?limit=" + std::to_string(page_size) +
                       "&after=" + std::to_string(after);
    if (p.Given("state")) path += "&state=" + QueryValue(state);
    StatusOr<JsonDoc> reply = api.Get(path);
    if (!reply.ok()) return ApiFail(ctx, reply.status());
    StatusOr<orchestrator::BugList> page = orchestrator::ParseBugList(*reply);
    if (!page.ok()) return Fail(ctx, Unexpected(page.status()));
    for (Bug& b : page->bugs) all.bugs.push_back(std::move(b));
    all.next = page->next;
    if (one_page || page->next == 0 || page->bugs.empty()) break;
    after = page->next;
  }
  if (json) {
    *ctx.out << DumpJsonDocPretty(ToJson(all)) << "\n";
    return kExitOk;
  }
  if (all.bugs.empty()) {
    *ctx.out << "no bugs\n";
  } else {
    std::ostringstream o;
    o << std::left << std::setw(6) << "ID" << std::setw(17) << "STATE"
      << std::setw(18) << "UPDATED" << std::setw(14) << "CULPRIT"
      << "TITLE\n";
    for (const Bug& b : all.bugs) {
      o << std::setw(6) << b.id << std::setw(17) << BugStateName(b.state)
        << std::setw(18) << Time(b.updated_ms) << std::setw(14)
        << b.culprit_commit.value_or("").substr(0, 12)
        << EscapeControls(b.title, false) << "\n";
    }
    *ctx.out << o.str();
  }
  if (one_page && all.next > 0) {
    *ctx.err << "trench: more bugs: trench bugs --limit " << limit << " --page "
             << all.next
             << (p.Given("state") ? " --state " + state : std::string())
             << "\n";
  }
  return kExitOk;
}

int CmdShow(const Context& ctx) {
  std::string id_text, server;
  std::vector<std::string> extra;
  bool json = false;
  FlagParser p = CommandParser("show");
  p.Positional("N", &id_text, "the bug id");
  p.Rest("", &extra, "");
  p.Bool("json", &json, "the bug as JSON");
  ServerFlag(&p, &server);
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  if (id_text.empty() || !extra.empty()) {
    return UsageError(ctx, "show", "give one bug id");
  }
  StatusOr<int64_t> id = BugId(id_text);
  if (!id.ok()) return UsageError(ctx, "show", id.status().message());
  ApiClient api(ctx, server);
  StatusOr<JsonDoc> reply = api.Get("/api/v1/bugs/" + std::to_string(*id));
  if (!reply.ok()) return ApiFail(ctx, reply.status());
  StatusOr<orchestrator::BugPage> page = orchestrator::ParseBugPage(*reply);
  if (!page.ok()) return Fail(ctx, Unexpected(page.status()));
  const JsonDoc doc = ToJson(*page);
  if (json) {
    *ctx.out << DumpJsonDocPretty(doc) << "\n";
    return kExitOk;
  }
  // The triage report reads base/json (triage_report.h).
  StatusOr<std::string> text = orchestrator::BugReportText(FromJsonDoc(doc));
  if (!text.ok())
    return Fail(ctx, "unexpected reply: " + text.status().message());
  // Stranger text: never raw.
  *ctx.out << EscapeControls(*text) << JobsText(page->jobs, *id);
  return kExitOk;
}

int CmdRetry(const Context& ctx) {
  std::string id_text, server;
  std::vector<std::string> extra;
  FlagParser p = CommandParser("retry");
  p.Positional("N", &id_text, "the bug id");
  p.Rest("", &extra, "");
  ServerFlag(&p, &server);
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  if (id_text.empty() || !extra.empty()) {
    return UsageError(ctx, "retry", "give one bug id");
  }
  StatusOr<int64_t> id = BugId(id_text);
  if (!id.ok()) return UsageError(ctx, "retry", id.status().message());
  ApiClient api(ctx, server);
  StatusOr<JsonDoc> r = api.Post(
      "/api/v1/bugs/" + std::to_string(*id) + "/retry", JsonDoc::object());
  if (!r.ok()) return ApiFail(ctx, r.status());
  StatusOr<orchestrator::RetryResult> result =
      orchestrator::ParseRetryResult(*r);
  if (!result.ok()) return Fail(ctx, Unexpected(result.status()));
  for (int64_t job : result->retried) {
    *ctx.out << "bug " << *id << ": job " << job << " queued again\n";
  }
  return kExitOk;
}

int CmdReview(const Context& ctx) {
  std::string id_text, comment, hint, server;
  std::vector<std::string> extra;
  int64_t duplicate_of = 0;
  bool approve = false, reject = false, redraft = false, invalid = false,
       close = false, reopen = false;
  FlagParser p = CommandParser("review");
  p.Positional("N", &id_text, "the bug id");
  p.Rest("", &extra, "");
  p.Bool("approve", &approve, "approve the proposed patch");
  p.Bool("reject", &reject, "reject it (the drafter tries again)");
  p.Bool("redraft", &redraft,
         "draft the patch again, guided by --hint (from proposed, rejected, "
         "patch_verified, patch_drafted)");
  p.String("hint", "H", &hint, "the redraft's guidance for the drafter");
  p.Number("duplicate-of", "M", &duplicate_of,
           "mark bug N a duplicate of bug M");
  p.Bool("invalid", &invalid, "mark it not a bug");
  p.Bool("close", &close, "close it");
  p.Bool("reopen", &reopen,
         "reopen a closed, invalid, duplicate, not reproducible or fixed bug "
         "(it is reproduced again)");
  p.String("comment", "C", &comment, "the reviewer's comment");
  ServerFlag(&p, &server);
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  if (id_text.empty() || !extra.empty()) {
    return UsageError(ctx, "review", "give one bug id");
  }
  StatusOr<int64_t> id = BugId(id_text);
  if (!id.ok()) return UsageError(ctx, "review", id.status().message());
  using orchestrator::TriageVerb;
  const std::pair<bool, TriageVerb> verbs[] = {
      {approve, TriageVerb::kApprove},
      {reject, TriageVerb::kReject},
      {redraft, TriageVerb::kRedraft},
      {p.Given("duplicate-of"), TriageVerb::kDuplicate},
      {invalid, TriageVerb::kInvalid},
      {close, TriageVerb::kClose},
      {reopen, TriageVerb::kReopen}};
  int given = 0;
  orchestrator::TriageAction body;
  for (const auto& [on, verb] : verbs) {
    if (!on) continue;
    ++given;
    body.verb = verb;
  }
  if (given != 1) {
    return UsageError(ctx, "review",
                      "give exactly one of --approve, --reject, --redraft, "
                      "--duplicate-of, --invalid, --close, --reopen");
  }
  if (p.Given("comment")) body.comment = comment;
  if (p.Given("hint")) body.hint = hint;
  if (p.Given("duplicate-of")) body.duplicate_of = duplicate_of;
  if (Status s = orchestrator::CheckTriageAction(body); !s.ok()) {
    std::string why = s.message();  // Named as the flags are.
    for (auto [field, flag] :
         {std::pair<std::string, std::string>{"field 'hint'", "--hint"},
          {"field 'duplicate_of'", "--duplicate-of"}}) {
      if (why.starts_with(field)) why = flag + why.substr(field.size());
    }
    return UsageError(ctx, "review", why);
  }
  ApiClient api(ctx, server);
  StatusOr<JsonDoc> r =
      api.Post("/api/v1/bugs/" + std::to_string(*id) + "/triage", ToJson(body));
  if (!r.ok()) return ApiFail(ctx, r.status());
  StatusOr<orchestrator::TriageResult> result =
      orchestrator::ParseTriageResult(*r);
  *ctx.out << "bug " << *id << ": "
           << (result.ok() ? std::string(BugStateName(result->bug.state))
                           : std::string("?"))
           << "\n";
  return kExitOk;
}

namespace {

// One event as `trench events` prints it.
std::string EventLine(const orchestrator::EventFeed::Entry& entry) {
  std::ostringstream o;
  if (const auto* c = std::get_if<orchestrator::CommitEvent>(&entry)) {
    o << "#" << c->id << "  " << Time(c->at_ms) << "  "
      << "commit " << EscapeControls(c->commit_sha.substr(0, 12), false) << ": "
      << orchestrator::CommitEventName(c->kind) << "  by "
      << EscapeControls(c->actor, false) << "\n";
    return o.str();
  }
  const auto& e = std::get<orchestrator::Event>(entry);
  o << "#" << e.id << "  " << Time(e.at_ms) << "  "
    << "bug " << e.bug_id << ": "
    << (e.from ? BugStateName(*e.from) : "(created)") << " -> "
    << BugStateName(e.to) << "  by " << EscapeControls(e.actor, false) << "\n";
  return o.str();
}

// --follow: long polls (GET /api/v1/events?wait=) from `since` on,
// printing each event as it comes, until interrupted (or `count` events
// when > 0). A daemon that is away or busy is tried again.
int FollowEvents(const Context& ctx, ApiClient& api, const std::string& query,
                 int64_t since, int wait, int64_t count, bool json) {
  int64_t printed = 0;
  bool warned = false;
  while (count == 0 || printed < count) {
    const std::string path = "/api/v1/events?since=" + std::to_string(since) +
                             "&wait=" + std::to_string(wait) + query;
    StatusOr<JsonDoc> r = api.Get(path, wait + 30);
    if (!r.ok()) {
      const StatusCode code = r.status().code();
      if (code != StatusCode::kIoError &&
          code != StatusCode::kResourceExhausted &&
          code != StatusCode::kDeadlineExceeded) {
        return ApiFail(ctx, r.status());
      }
      if (!warned) {
        *ctx.err << "trench: " << EscapeControls(r.status().message())
                 << "; trying again\n"
                 << std::flush;
        warned = true;
      }
      std::this_thread::sleep_for(std::chrono::seconds(2));
      continue;
    }
    warned = false;
    StatusOr<orchestrator::EventFeed> feed = orchestrator::ParseEventFeed(*r);
    if (!feed.ok()) return Fail(ctx, Unexpected(feed.status()));
    for (const orchestrator::EventFeed::Entry& entry : feed->events) {
      if (json) {
        *ctx.out << DumpJsonDoc(std::visit(
                        [](const auto& x) { return ToJson(x); }, entry))
                 << "\n";
      } else {
        *ctx.out << EventLine(entry);
      }
      ctx.out->flush();
      if (count > 0 && ++printed >= count) break;
    }
    since = std::max(since, feed->next);
  }
  return kExitOk;
}

}  // namespace

int CmdEvents(const Context& ctx) {
  std::string bug, commit, since = "0", limit = "100", server;
  bool json = false, follow = false;
  int wait = 30;
  int64_t count = 0;
  FlagParser p = CommandParser("events");
  p.AllowNoArguments();  // The latest events.
  // The daemon checks the numbers (HTTP 400 names the bad one).
  p.String("bug", "N", &bug, "only bug N's events");
  p.String("commit", "SHA", &commit, "only this commit's events");
  p.String("since", "ID", &since, "events after event ID (default 0)");
  p.String("limit", "N", &limit, "at most N events (default 100)");
  p.Bool("follow", &follow,
         "keep printing new events as they are written, until\n"
         "interrupted (long polls of the API)");
  p.Number("wait", "S", &wait,
           "with --follow: how long one poll waits (1 to 60, default 30)");
  p.Number("count", "N", &count,
           "with --follow: stop after N events (default: never)");
  p.Bool("json", &json,
         "the events as JSON (with --follow: one object per line)");
  ServerFlag(&p, &server);
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  if (!follow && (p.Given("wait") || p.Given("count"))) {
    return UsageError(ctx, "events", "--wait and --count need --follow");
  }
  if (wait < 1 || wait > 60) {
    return UsageError(ctx, "events", "--wait must be 1 to 60 seconds");
  }
  if (count < 0) return UsageError(ctx, "events", "--count must be >= 0");
  std::string query = "&limit=" + QueryValue(limit);
  if (p.Given("bug")) query += "&bug=" + QueryValue(bug);
  if (p.Given("commit")) query += "&commit=" + QueryValue(commit);
  ApiClient api(ctx, server);
  if (follow) {
    std::optional<int64_t> from =
        since == "0" ? std::optional<int64_t>(0) : PositiveId(since);
    if (!from) {
      return UsageError(
          ctx, "events",
          "--since must be an event id (>= 0), got '" + since + "'");
    }
    return FollowEvents(ctx, api, query, *from, wait, count, json);
  }
  StatusOr<JsonDoc> r =
      api.Get("/api/v1/events?since=" + QueryValue(since) + query);
  if (!r.ok()) return ApiFail(ctx, r.status());
  StatusOr<orchestrator::EventFeed> feed = orchestrator::ParseEventFeed(*r);
  if (!feed.ok()) return Fail(ctx, Unexpected(feed.status()));
  if (json) {
    *ctx.out << DumpJsonDocPretty(ToJson(*feed)) << "\n";
    return kExitOk;
  }
  for (const orchestrator::EventFeed::Entry& entry : feed->events) {
    *ctx.out << EventLine(entry);
  }
  return kExitOk;
}

}  // namespace trench::cli
