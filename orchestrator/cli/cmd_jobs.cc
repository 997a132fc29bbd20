// `trench jobs`: the daemon's job queue (GET /api/v1/jobs), and `trench
// jobs retry N` (POST /api/v1/jobs/{id}/retry).
#include <iomanip>
#include <sstream>

#include "base/display_text.h"
#include "orchestrator/api/api_bodies.h"
#include "orchestrator/cli/api_client.h"
#include "orchestrator/cli/cli.h"
#include "orchestrator/store/job_queue.h"

namespace trench::cli {
namespace {

using orchestrator::BugJob;

// One job per line; a failed or parked one's reason (in full, escaped) on
// the next, or a done one's note (a finding that waits for another bug).
std::string JobsTable(const std::vector<BugJob>& jobs) {
  std::ostringstream o;
  o << std::left << std::setw(7) << "ID" << std::setw(9) << "STATE"
    << std::setw(14) << "KIND" << std::setw(6) << "BUG" << std::setw(10)
    << "ATTEMPTS"
    << "UPDATED\n";
  for (const BugJob& j : jobs) {
    o << std::setw(7) << j.id << std::setw(9) << j.state << std::setw(14)
      << EscapeControls(j.kind, false) << std::setw(6)
      << (j.bug ? std::to_string(*j.bug) : "-") << std::setw(10)
      << (std::to_string(j.attempts - j.crashes) + "/" +
          std::to_string(j.max_attempts))
      << Time(j.updated_ms) << "\n";
    const std::string& why =
        !j.parked_reason.empty() ? j.parked_reason : j.last_error;
    if (!why.empty() && j.state != "done") {
      o << "       " << (j.parked_reason.empty() ? "last error: " : "parked: ")
        << EscapeControls(why, false) << "\n";
    } else if (!j.note.empty() && j.state == "done") {
      o << "       note: " << EscapeControls(j.note, false) << "\n";
    }
  }
  return o.str();
}

int RetryJob(const Context& ctx, const std::string& id_text,
             const std::string& server) {
  std::optional<int64_t> id = PositiveId(id_text);
  if (!id) {
    return UsageError(
        ctx, "jobs",
        "job id must be a positive integer, got '" + id_text + "'");
  }
  ApiClient api(ctx, server);
  StatusOr<JsonDoc> r = api.Post(
      "/api/v1/jobs/" + std::to_string(*id) + "/retry", JsonDoc::object());
  if (!r.ok()) return ApiFail(ctx, r.status());
  StatusOr<orchestrator::JobRetried> result = orchestrator::ParseJobRetried(*r);
  if (!result.ok()) return Fail(ctx, Unexpected(result.status()));
  *ctx.out << "job " << result->job.id << " ("
           << EscapeControls(result->job.kind, false)
           << "): " << result->job.state << " again\n";
  return kExitOk;
}

}  // namespace

int CmdJobs(const Context& ctx) {
  std::string action, id_text, state, kind, bug, limit = "50", before, server;
  std::vector<std::string> extra;
  bool json = false;
  FlagParser p = CommandParser("jobs");
  p.AllowNoArguments();  // The newest jobs.
  p.Positional("retry", &action, "queue job N again (failed or parked)");
  p.Positional("N", &id_text, "the job id (with retry)");
  p.Rest("", &extra, "");
  const std::string state_help = "only the jobs in state S, one of:\n" +
                                 orchestrator::JobStateShownNames() +
                                 " (running: a worker holds it)";
  p.String("state", "S", &state, state_help);
  p.String("kind", "K", &kind,
           "only the jobs of kind K (a step: reproduce, ...)");
  p.String("bug", "N", &bug, "only bug N's step jobs");
  p.String("limit", "N", &limit, "at most N jobs, newest first (default 50)");
  p.String("before", "ID", &before,
           "the jobs older than job ID (the next page: a full page says\n"
           "its --before)");
  p.Bool("json", &json, "the jobs as JSON");
  ServerFlag(&p, &server);
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  if (!extra.empty()) return UsageError(ctx, "jobs", "too many arguments");
  if (!action.empty()) {
    if (action != "retry") {
      return UsageError(ctx, "jobs",
                        "unknown action '" + EscapeControls(action, false) +
                            "' (the one action is: retry N)");
    }
    if (id_text.empty()) return UsageError(ctx, "jobs", "retry needs a job id");
    for (std::string_view flag : {"state", "kind", "bug", "limit", "before"}) {
      if (p.Given(flag)) {
        return UsageError(
            ctx, "jobs",
            "--" + std::string(flag) + " lists jobs; not with retry");
      }
    }
    return RetryJob(ctx, id_text, server);
  }
  if (p.Given("state")) {
    StatusOr<orchestrator::JobState> s =
        orchestrator::ParseJobStateShownName(state);
    if (!s.ok()) return UsageError(ctx, "jobs", s.status().message());
  }
  // The daemon checks the numbers too (HTTP 400 names the bad one).
  for (const auto& [flag, value] :
       {std::pair<std::string, std::string*>{"bug", &bug},
        {"limit", &limit},
        {"before", &before}}) {
    if (p.Given(flag) && !PositiveId(*value)) {
      return UsageError(ctx, "jobs",
                        "--" + flag + " must be a positive integer, got '" +
                            EscapeControls(*value, false) + "'");
    }
  }
  std::string path = "/api/v1/jobs?limit=" + QueryValue(limit);
  if (p.Given("state")) path += "&state=" + QueryValue(state);
  if (p.Given("kind")) path += "&kind=" + QueryValue(kind);
  if (p.Given("bug")) path += "&bug=" + QueryValue(bug);
  if (p.Given("before")) path += "&before=" + QueryValue(before);
  ApiClient api(ctx, server);
  StatusOr<JsonDoc> r = api.Get(path);
  if (!r.ok()) return ApiFail(ctx, r.status());
  StatusOr<orchestrator::JobList> list = orchestrator::ParseJobList(*r);
  if (!list.ok()) return Fail(ctx, Unexpected(list.status()));
  if (json) {
    *ctx.out << DumpJsonDocPretty(ToJson(*list)) << "\n";
    return kExitOk;
  }
  if (list->jobs.empty()) {
    *ctx.out << "no jobs\n";
    return kExitOk;
  }
  *ctx.out << JobsTable(list->jobs);
  if (list->next > 0) {
    *ctx.err << "trench: more jobs: add --before " << list->next << "\n";
  }
  return kExitOk;
}

}  // namespace trench::cli
