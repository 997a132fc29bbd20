// The API client commands: report, bugs, show, review, retry, events. They
// talk to the daemon's HTTP API (api_handlers.h) through
// agents/http_client.h.
#include <cctype>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "agents/http_client.h"
#include "base/display_text.h"
#include "base/json_nlohmann.h"
#include "orchestrator/api/api_bodies.h"
#include "orchestrator/cli/cli.h"
#include "orchestrator/pipeline/triage_report.h"

namespace trench::cli {
namespace {

constexpr char kDefaultServer[] = "http://127.0.0.1:7878";
constexpr int kPageSize = 1000;

// The daemon at --server URL, $TRENCH_SERVER or the default.
class ApiClient {
 public:
  // `server`: --server's value ("" when not given).
  ApiClient(const Context& ctx, const std::string& server)
      : server_(!server.empty()
                    ? server
                    : ctx.Env("TRENCH_SERVER").value_or(kDefaultServer)),
        token_(ctx.Env("TRENCH_TOKEN").value_or("")) {
    while (server_.size() > 1 && server_.back() == '/') server_.pop_back();
  }

  // GET `path`: the response's JSON object. Errors carry the message to
  // print (see Call).
  StatusOr<JsonDoc> Get(const std::string& path) {
    return Call("GET", path, "");
  }
  StatusOr<JsonDoc> Post(const std::string& path, const JsonDoc& body) {
    return Call("POST", path, DumpJsonDoc(body));
  }

 private:
  // Errors: "no daemon at URL (curl's message)" when nothing answers;
  // "<error.message> (HTTP 409)" for API errors; "unexpected reply ..."
  // for a reply that is not a JSON object.
  StatusOr<JsonDoc> Call(const std::string& method, const std::string& path,
                         const std::string& body) {
    agents::HttpRequest req;
    req.method = method;
    req.url = server_ + path;
    req.body = body;
    req.timeout_seconds = 120;
    req.connect_timeout_seconds = 10;
    if (!body.empty())
      req.headers.emplace_back("Content-Type", "application/json");
    if (method != "GET" && !token_.empty()) {
      req.headers.emplace_back("Authorization", "Bearer " + token_);
    }
    StatusOr<agents::HttpResponse> resp = agents::HttpFetch(req);
    if (!resp.ok()) {
      if (resp.status().code() == StatusCode::kIoError) {
        return IoError("no daemon at " + server_ + " (" +
                       resp.status().message() + ")");
      }
      return resp.status();
    }
    StatusOr<JsonDoc> json = ParseJsonDoc(resp->body);
    if (resp->status < 200 || resp->status >= 300) {
      std::string msg;
      if (json.ok()) {
        StatusOr<orchestrator::ErrorBody> e =
            orchestrator::ParseErrorBody(*json);
        if (e.ok()) msg = e->message;
      }
      if (msg.empty()) {
        msg =
            "unexpected reply: " +
            resp->body.substr(0, std::min<size_t>(resp->body.find('\n'), 200));
      }
      if (resp->status == 401 && token_.empty()) {
        msg += "; set TRENCH_TOKEN to the daemon's API token";
      }
      return Status(resp->status == 404 ? StatusCode::kNotFound
                                        : StatusCode::kFailedPrecondition,
                    msg + " (HTTP " + std::to_string(resp->status) + ")");
    }
    if (!json.ok() || !json->is_object()) {
      return Internal("unexpected reply from " + req.url + " (HTTP " +
                      std::to_string(resp->status) + "): not a JSON object" +
                      (json.ok() ? "" : ": " + json.status().message()));
    }
    return std::move(*json);
  }

  std::string server_;
  std::string token_;
};

std::optional<int64_t> PositiveId(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v <= 0) {
    return std::nullopt;
  }
  return v;
}

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return IoError("cannot read " + path);
  return s.str();
}

// A record's time (ms since the epoch) as "YYYY-MM-DD HH:MM" UTC.
std::string Time(int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M", &tm);
  return buf;
}

// `s` percent-encoded for a query value.
std::string QueryValue(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
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
  if (stuck) o << "\nRetry with: trench retry " << bug << "\n";
  return o.str();
}

// The message for a reply that is not the record it should be.
std::string Unexpected(const Status& s) {
  return "unexpected reply: " + s.message();
}

using orchestrator::Bug;
using orchestrator::BugStateName;

// Prints an API error (or another failure) and returns kExitFailure.
int ApiFail(const Context& ctx, const Status& s) {
  return Fail(ctx, EscapeControls(s.message()));
}

// Declares --server URL on `p`.
void ServerFlag(FlagParser* p, std::string* server) {
  p->String("server", "URL", server,
            "the daemon (default: $TRENCH_SERVER, else\n" +
                std::string(kDefaultServer) + ")");
}

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
  std::string state, server;
  bool json = false;
  FlagParser p = CommandParser("bugs");
  p.AllowNoArguments();  // Lists every bug.
  p.String("state", "S", &state, "only the bugs in state S");
  p.Bool("json", &json, "the bugs as JSON");
  ServerFlag(&p, &server);
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  ApiClient api(ctx, server);
  orchestrator::BugList all;
  for (int64_t after = 0;;) {
    std::string path = "/api/v1/bugs?limit=" + std::to_string(kPageSize) +
                       "&after=" + std::to_string(after);
    if (p.Given("state")) path += "&state=" + QueryValue(state);
    StatusOr<JsonDoc> reply = api.Get(path);
    if (!reply.ok()) return ApiFail(ctx, reply.status());
    StatusOr<orchestrator::BugList> page = orchestrator::ParseBugList(*reply);
    if (!page.ok()) return Fail(ctx, Unexpected(page.status()));
    for (Bug& b : page->bugs) all.bugs.push_back(std::move(b));
    if (page->bugs.size() < static_cast<size_t>(kPageSize)) break;
    after = all.bugs.back().id;
  }
  if (json) {
    *ctx.out << DumpJsonDocPretty(ToJson(all)) << "\n";
    return kExitOk;
  }
  if (all.bugs.empty()) {
    *ctx.out << "no bugs\n";
    return kExitOk;
  }
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
  std::string id_text, comment, server;
  std::vector<std::string> extra;
  bool approve = false, reject = false;
  FlagParser p = CommandParser("review");
  p.Positional("N", &id_text, "the bug id");
  p.Rest("", &extra, "");
  p.Bool("approve", &approve, "approve the proposed patch");
  p.Bool("reject", &reject, "reject it");
  p.String("comment", "C", &comment, "the review's comment");
  ServerFlag(&p, &server);
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  if (id_text.empty() || !extra.empty()) {
    return UsageError(ctx, "review", "give one bug id");
  }
  StatusOr<int64_t> id = BugId(id_text);
  if (!id.ok()) return UsageError(ctx, "review", id.status().message());
  if (approve == reject) {
    return UsageError(ctx, "review", "give exactly one of --approve, --reject");
  }
  orchestrator::ReviewRequest body;
  body.decision = approve ? orchestrator::ReviewRequest::Decision::kApprove
                          : orchestrator::ReviewRequest::Decision::kReject;
  if (p.Given("comment")) body.comment = comment;
  ApiClient api(ctx, server);
  StatusOr<JsonDoc> r = api.Post(
      "/api/v1/patches/" + std::to_string(*id) + "/review", ToJson(body));
  if (!r.ok()) return ApiFail(ctx, r.status());
  StatusOr<orchestrator::ReviewResult> result =
      orchestrator::ParseReviewResult(*r);
  *ctx.out << "bug " << *id << ": "
           << (result.ok() ? std::string(BugStateName(result->bug.state))
                           : std::string("?"))
           << "\n";
  return kExitOk;
}

int CmdEvents(const Context& ctx) {
  std::string bug, commit, since = "0", limit = "100", server;
  bool json = false;
  FlagParser p = CommandParser("events");
  p.AllowNoArguments();  // The latest events.
  // The daemon checks the numbers (HTTP 400 names the bad one).
  p.String("bug", "N", &bug, "only bug N's events");
  p.String("commit", "SHA", &commit, "only this commit's events");
  p.String("since", "ID", &since, "events after event ID (default 0)");
  p.String("limit", "N", &limit, "at most N events (default 100)");
  p.Bool("json", &json, "the events as JSON");
  ServerFlag(&p, &server);
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  std::string path = "/api/v1/events?since=" + QueryValue(since) +
                     "&limit=" + QueryValue(limit);
  if (p.Given("bug")) path += "&bug=" + QueryValue(bug);
  if (p.Given("commit")) path += "&commit=" + QueryValue(commit);
  ApiClient api(ctx, server);
  StatusOr<JsonDoc> r = api.Get(path);
  if (!r.ok()) return ApiFail(ctx, r.status());
  StatusOr<orchestrator::EventFeed> feed = orchestrator::ParseEventFeed(*r);
  if (!feed.ok()) return Fail(ctx, Unexpected(feed.status()));
  if (json) {
    *ctx.out << DumpJsonDocPretty(ToJson(*feed)) << "\n";
    return kExitOk;
  }
  for (const orchestrator::EventFeed::Entry& entry : feed->events) {
    if (const auto* c = std::get_if<orchestrator::CommitEvent>(&entry)) {
      *ctx.out << "#" << c->id << "  " << Time(c->at_ms) << "  "
               << "commit " << c->commit_sha.substr(0, 12) << ": "
               << orchestrator::CommitEventName(c->kind) << "  by "
               << EscapeControls(c->actor, false) << "\n";
      continue;
    }
    const auto& e = std::get<orchestrator::Event>(entry);
    *ctx.out << "#" << e.id << "  " << Time(e.at_ms) << "  "
             << "bug " << e.bug_id << ": "
             << (e.from ? BugStateName(*e.from) : "(created)") << " -> "
             << BugStateName(e.to) << "  by " << EscapeControls(e.actor, false)
             << "\n";
  }
  return kExitOk;
}

}  // namespace trench::cli
