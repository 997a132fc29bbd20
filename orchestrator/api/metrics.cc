// Prometheus text rendering of the store's counts, the tool runner's and
// the HTTP server's.
#include "orchestrator/api/metrics.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "orchestrator/api/build_info.h"
#include "orchestrator/pipeline/executor.h"
#include "orchestrator/pipeline/fallback_reason.h"
#include "orchestrator/pipeline/pipeline.h"
#include "orchestrator/store/job_queue.h"

namespace trench::orchestrator {
namespace {

constexpr JobState kJobStates[] = {JobState::kQueued, JobState::kLeased,
                                   JobState::kDone, JobState::kFailed,
                                   JobState::kParked};

// Buckets (seconds) of the pipeline's durations: a minute to a week.
const std::vector<double>& StageBounds() {
  static const std::vector<double> b = {
      60, 300, 900, 1800, 3600, 10800, 21600, 43200, 86400, 172800, 604800};
  return b;
}
// Buckets (seconds) of build durations: half a minute to two hours.
const std::vector<double>& BuildBounds() {
  static const std::vector<double> b = {30,  60,   120,  300,  600,
                                        900, 1200, 1800, 3600, 7200};
  return b;
}

// What the families read.
struct Sources {
  Store* store;
  const Executor* runner;   // May be null.
  const HttpMetrics* http;  // May be null.
};

using Labels = std::vector<std::pair<std::string, std::string>>;

// A label value as the text format wants it: \ " and newline escaped.
std::string EscapeLabel(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// Appends one metric family: HELP, TYPE and its samples.
class Writer {
 public:
  void Family(const char* name, const char* type, const char* help) {
    name_ = name;
    out_ += std::string("# HELP ") + name + " " + help + "\n";
    out_ += std::string("# TYPE ") + name + " " + type + "\n";
  }
  void Sample(int64_t value, std::string_view state = {}) {
    Labels labels;
    if (!state.empty()) labels.emplace_back("state", std::string(state));
    Line("", labels, std::to_string(value));
  }
  void Sample(double value) { Line("", {}, Number(value)); }
  void Sample(const Labels& labels, int64_t value) {
    Line("", labels, std::to_string(value));
  }
  void Sample(const Labels& labels, double value) {
    Line("", labels, Number(value));
  }
  // A histogram's _bucket (cumulative, le ascending, +Inf last), _sum and
  // _count samples.
  void Histogram(const Labels& labels, const orchestrator::Histogram& h) {
    int64_t cumulative = 0;
    for (size_t i = 0; i < h.counts.size(); ++i) {
      cumulative += h.counts[i];
      Labels with_le = labels;
      with_le.emplace_back("le", i < h.bounds.size() ? Number(h.bounds[i])
                                                     : std::string("+Inf"));
      Line("_bucket", with_le, std::to_string(cumulative));
    }
    Line("_sum", labels, Number(h.sum));
    Line("_count", labels, std::to_string(h.count));
  }
  // A summary's _sum and _count samples.
  void Summary(const Labels& labels, double sum, int64_t count) {
    Line("_sum", labels, Number(sum));
    Line("_count", labels, std::to_string(count));
  }
  std::string Take() { return std::move(out_); }

 private:
  void Line(std::string_view suffix, const Labels& labels,
            const std::string& value) {
    out_ += name_;
    out_ += suffix;
    if (!labels.empty()) {
      out_ += "{";
      for (size_t i = 0; i < labels.size(); ++i) {
        if (i > 0) out_ += ",";
        out_ += labels[i].first + "=\"" + EscapeLabel(labels[i].second) + "\"";
      }
      out_ += "}";
    }
    out_ += " " + value + "\n";
  }
  std::string name_;
  std::string out_;
};

// Runs `sql` (no parameters) and calls `f` with each row.
Status ForEachRow(Store* store, const char* sql,
                  const std::function<void(Statement&)>& f) {
  ASSIGN_OR_RETURN(Statement st, store->db()->Prepare(sql));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return Status::Ok();
    f(st);
  }
}

Status WriteBugs(const Sources& s, Writer* w) {
  ASSIGN_OR_RETURN(auto counts, s.store->CountBugsByState());
  for (BugState b : AllBugStates()) w->Sample(counts[b], BugStateName(b));
  return Status::Ok();
}

// Every step kind and every kind in the queue, by every state (0 when
// none), so that a kind's failed and parked series exist before the first.
Status WriteJobs(const Sources& s, Writer* w) {
  std::set<std::string> kinds;
  for (const StepKind& step : Steps()) kinds.insert(step.kind);
  std::map<std::pair<std::string, std::string>, int64_t> counts;
  RETURN_IF_ERROR(ForEachRow(
      s.store, "SELECT kind, state, count(*) FROM jobs GROUP BY kind, state",
      [&](Statement& st) {
        kinds.insert(st.ColumnText(0));
        counts[{st.ColumnText(0), st.ColumnText(1)}] = st.ColumnInt64(2);
      }));
  for (const std::string& kind : kinds) {
    for (JobState j : kJobStates) {
      const std::string state(JobStateName(j));
      auto it = counts.find({kind, state});
      w->Sample({{"kind", kind}, {"state", state}},
                it == counts.end() ? int64_t{0} : it->second);
    }
  }
  return Status::Ok();
}

Status WriteTargetRuns(const Sources& s, Writer* w) {
  ASSIGN_OR_RETURN(int64_t n, s.store->CountRuns());
  w->Sample(n);
  return Status::Ok();
}

Status WriteToolRuns(const Sources& s, Writer* w) {
  w->Sample(s.runner ? s.runner->total_runs() : int64_t{0});
  return Status::Ok();
}

Status WriteToolRunsRunning(const Sources& s, Writer* w) {
  w->Sample(static_cast<int64_t>(s.runner ? s.runner->running() : 0));
  return Status::Ok();
}

Status WriteExecutorRuns(const Sources& s, Writer* w) {
  if (!s.runner) return Status::Ok();
  const ExecutorStats st = s.runner->Stats();
  for (const auto& [state, n] : st.runs_by_state) {
    w->Sample({{"executor", st.kind}, {"state", state}}, n);
  }
  return Status::Ok();
}

Status WriteExecutorQueueWait(const Sources& s, Writer* w) {
  if (!s.runner) return Status::Ok();
  const ExecutorStats st = s.runner->Stats();
  w->Summary({{"executor", st.kind}}, st.queue_wait_seconds_sum,
             st.queue_wait_count);
  return Status::Ok();
}

Status WriteExecutorRuntime(const Sources& s, Writer* w) {
  if (!s.runner) return Status::Ok();
  const ExecutorStats st = s.runner->Stats();
  w->Summary({{"executor", st.kind}}, st.runtime_seconds_sum, st.runtime_count);
  return Status::Ok();
}

Status WriteExecutorRequeues(const Sources& s, Writer* w) {
  if (!s.runner) return Status::Ok();
  const ExecutorStats st = s.runner->Stats();
  w->Sample({{"executor", st.kind}}, st.requeued);
  return Status::Ok();
}

Status WriteExecutorRestartRuns(const Sources& s, Writer* w) {
  if (!s.runner) return Status::Ok();
  const ExecutorStats st = s.runner->Stats();
  for (const auto& [outcome, n] : st.restart_runs) {
    w->Sample({{"executor", st.kind}, {"outcome", outcome}}, n);
  }
  return Status::Ok();
}

// The rows of `sql`: label columns first (as many as `labels`), then the
// value; one sample each.
Status WriteRows(const Sources& s, Writer* w, const char* sql,
                 std::vector<std::string_view> labels) {
  return ForEachRow(s.store, sql, [&](Statement& st) {
    Labels l;
    for (size_t i = 0; i < labels.size(); ++i) {
      l.emplace_back(labels[i], st.ColumnText(static_cast<int>(i)));
    }
    w->Sample(l, st.ColumnDouble(static_cast<int>(labels.size())));
  });
}

// The fallback classes where the backend failed, as an SQL list.
std::string BackendErrorClasses() {
  std::string list;
  for (FallbackReason r : AllFallbackReasons()) {
    if (!IsBackendError(r)) continue;
    list += std::string(list.empty() ? "" : ", ") + "'" +
            std::string(FallbackReasonName(r)) + "'";
  }
  return "(" + list + ")";
}

Status WriteAgentSessions(const Sources& s, Writer* w) {
  return WriteRows(
      s, w,
      "SELECT role, backend, CASE WHEN fallback_reason != '' OR status LIKE "
      "'fell back%' THEN 'fell_back' WHEN status LIKE 'done%' THEN 'done' WHEN "
      "status = 'interrupted' THEN 'interrupted' WHEN "
      "status LIKE 'error%' THEN 'error' WHEN ended_ms IS NULL THEN "
      "'running' ELSE 'other' END AS st, count(*) FROM agent_sessions "
      "GROUP BY role, backend, st ORDER BY role, backend, st",
      {"role", "backend", "status"});
}

Status WriteAgentFallbacks(const Sources& s, Writer* w) {
  return WriteRows(s, w,
                   "SELECT role, backend, fallback_reason, count(*) FROM "
                   "agent_sessions WHERE fallback_reason != '' GROUP BY role, "
                   "backend, fallback_reason ORDER BY 1, 2, 3",
                   {"role", "backend", "reason"});
}

Status WriteLlmRequests(const Sources& s, Writer* w) {
  const std::string sql =
      "SELECT s.role, s.backend, (SELECT count(*) FROM agent_messages m "
      "JOIN agent_sessions t ON m.session_id = t.id WHERE t.role = s.role "
      "AND t.backend = s.backend AND m.role = 'assistant') + "
      "sum(s.fallback_reason IN " +
      BackendErrorClasses() +
      ") FROM agent_sessions s WHERE s.backend != 'builtin' GROUP BY "
      "s.role, s.backend ORDER BY 1, 2";
  return WriteRows(s, w, sql.c_str(), {"role", "backend"});
}

Status WriteLlmErrors(const Sources& s, Writer* w) {
  const std::string sql =
      "SELECT role, backend, fallback_reason, count(*) FROM agent_sessions "
      "WHERE fallback_reason IN " +
      BackendErrorClasses() +
      " GROUP BY role, backend, fallback_reason ORDER BY 1, 2, 3";
  return WriteRows(s, w, sql.c_str(), {"role", "backend", "reason"});
}

Status WriteAgentTokens(const Sources& s, Writer* w) {
  return WriteRows(
      s, w,
      "SELECT s.role, s.backend, d.direction, sum(CASE d.direction WHEN "
      "'input' THEN m.input_tokens ELSE m.output_tokens END) FROM "
      "agent_messages m JOIN agent_sessions s ON m.session_id = s.id CROSS "
      "JOIN (SELECT 'input' AS direction UNION ALL SELECT 'output') d "
      "GROUP BY s.role, s.backend, d.direction "
      "ORDER BY 1, 2, 3",
      {"role", "backend", "direction"});
}

Status WriteAgentCost(const Sources& s, Writer* w) {
  return WriteRows(s, w,
                   "SELECT role, backend, sum(cost_usd) FROM agent_sessions "
                   "WHERE backend != 'builtin' GROUP BY role, backend "
                   "ORDER BY 1, 2",
                   {"role", "backend"});
}

// The fuzz rate: two counters summed over the finished fuzz jobs' results
// (rate = programs / seconds over any window), and the newest finished
// campaign's own rate as a gauge.
StatusOr<Statement> FuzzTotals(Store* store) {
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare(
          "SELECT coalesce(sum(json_extract(result, '$.programs')), 0), "
          "coalesce(sum(json_extract(result, '$.seconds')), 0) FROM jobs "
          "WHERE kind = 'fuzz' AND state = 'done' AND json_valid(result)"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return Internal("metrics: the fuzz totals gave no row");
  return st;
}

Status WriteFuzzPrograms(const Sources& s, Writer* w) {
  ASSIGN_OR_RETURN(Statement st, FuzzTotals(s.store));
  w->Sample(st.ColumnInt64(0));
  return Status::Ok();
}

Status WriteFuzzSeconds(const Sources& s, Writer* w) {
  ASSIGN_OR_RETURN(Statement st, FuzzTotals(s.store));
  w->Sample(static_cast<int64_t>(st.ColumnDouble(1)));
  return Status::Ok();
}

Status WriteFuzzRate(const Sources& s, Writer* w) {
  ASSIGN_OR_RETURN(
      Statement last,
      s.store->db()->Prepare(
          "SELECT coalesce(json_extract(result, '$.programs'), 0), "
          "coalesce(json_extract(result, '$.seconds'), 0) FROM jobs "
          "WHERE kind = 'fuzz' AND state = 'done' AND json_valid(result) "
          "ORDER BY updated_ms DESC, id DESC LIMIT 1"));
  ASSIGN_OR_RETURN(bool has_last, last.Step());
  const double seconds = has_last ? last.ColumnDouble(1) : 0;
  w->Sample(seconds > 0 ? last.ColumnInt64(0) / seconds : 0.0);
  return Status::Ok();
}

Status WriteHttpRequests(const Sources& s, Writer* w) {
  if (s.http == nullptr) return Status::Ok();
  for (const auto& [key, n] : s.http->Read().requests) {
    const auto& [route, method, code] = key;
    w->Sample(
        {{"route", route}, {"method", method}, {"code", std::to_string(code)}},
        n);
  }
  return Status::Ok();
}

Status WriteHttpLatency(const Sources& s, Writer* w) {
  if (s.http == nullptr) return Status::Ok();
  for (const auto& [route, h] : s.http->Read().latency) {
    w->Histogram({{"route", route}}, h);
  }
  return Status::Ok();
}

// For each bug, the time from its creation (the report, or the finding)
// to the first time it reached each stage (a flaky bug counts as
// reproduced), from the bug rows and their state-change events.
Status WriteBugStages(const Sources& s, Writer* w) {
  std::map<std::string, Histogram> stages;
  for (const char* stage : {"reproduced", "localized", "proposed"}) {
    stages.emplace(stage, Histogram(StageBounds()));
  }
  RETURN_IF_ERROR(ForEachRow(
      s.store,
      "SELECT e.stage, e.first_ms - b.created_ms FROM bugs b JOIN "
      "(SELECT bug_id, CASE to_state WHEN 'flaky' THEN 'reproduced' "
      "ELSE to_state END AS stage, min(at_ms) AS first_ms FROM events "
      "WHERE bug_id IS NOT NULL AND to_state IN ('reproduced', 'flaky', "
      "'localized', 'proposed') GROUP BY bug_id, stage) e "
      "ON e.bug_id = b.id",
      [&](Statement& st) {
        auto it = stages.find(st.ColumnText(0));
        if (it == stages.end()) return;
        it->second.Observe(std::max<int64_t>(st.ColumnInt64(1), 0) / 1000.0);
      }));
  for (const auto& [stage, h] : stages) w->Histogram({{"stage", stage}}, h);
  return Status::Ok();
}

// For each landed commit that has a bug found on it (a bug whose details
// name the commit), the time from its commit_landed event to the first
// such bug's creation.
Status WriteCommitFirstFinding(const Sources& s, Writer* w) {
  Histogram h(StageBounds());
  RETURN_IF_ERROR(ForEachRow(
      s.store,
      "SELECT f.first_ms - min(c.at_ms) FROM events c JOIN "
      "(SELECT json_extract(details, '$.commit') AS sha, "
      "min(created_ms) AS first_ms FROM bugs WHERE json_valid(details) "
      "GROUP BY sha) f ON f.sha = c.commit_sha "
      "WHERE c.name = 'commit_landed' GROUP BY c.commit_sha",
      [&](Statement& st) {
        h.Observe(std::max<int64_t>(st.ColumnInt64(0), 0) / 1000.0);
      }));
  w->Histogram({}, h);
  return Status::Ok();
}

// The build jobs' results (BuildResult JSON): a result taken from the
// cache is a hit, any other a miss whose build took "seconds".
Status ForEachBuild(Store* store, const std::function<void(bool, double)>& f) {
  return ForEachRow(
      store,
      "SELECT coalesce(json_extract(result, '$.cached'), 0), "
      "coalesce(json_extract(result, '$.seconds'), 0) FROM jobs "
      "WHERE kind = 'build' AND state = 'done' AND json_valid(result)",
      [&](Statement& st) { f(st.ColumnInt64(0) != 0, st.ColumnDouble(1)); });
}

Status WriteBuildDurations(const Sources& s, Writer* w) {
  Histogram h(BuildBounds());
  RETURN_IF_ERROR(ForEachBuild(s.store, [&](bool cached, double seconds) {
    if (!cached) h.Observe(seconds);
  }));
  w->Histogram({}, h);
  return Status::Ok();
}

Status WriteBuildCacheHits(const Sources& s, Writer* w) {
  int64_t n = 0;
  RETURN_IF_ERROR(
      ForEachBuild(s.store, [&](bool cached, double) { n += cached; }));
  w->Sample(n);
  return Status::Ok();
}

Status WriteBuildCacheMisses(const Sources& s, Writer* w) {
  int64_t n = 0;
  RETURN_IF_ERROR(
      ForEachBuild(s.store, [&](bool cached, double) { n += !cached; }));
  w->Sample(n);
  return Status::Ok();
}

// The notification outbox (migration 11) by channel and state; every
// channel and outcome present, 0 included.
Status WriteNotifyStates(const Sources& s, Writer* w,
                         std::vector<std::string> states, bool outcome_label) {
  std::map<std::pair<std::string, std::string>, int64_t> counts;
  RETURN_IF_ERROR(ForEachRow(
      s.store,
      "SELECT channel, state, count(*) FROM "
      "notify_outbox GROUP BY channel, state",
      [&](Statement& st) {
        counts[{st.ColumnText(0), st.ColumnText(1)}] = st.ColumnInt64(2);
      }));
  for (const char* channel : {"webhook", "email"}) {
    for (const std::string& state : states) {
      Labels l = {{"channel", channel}};
      if (outcome_label) l.emplace_back("outcome", state);
      auto it = counts.find({channel, state});
      w->Sample(l, it == counts.end() ? int64_t{0} : it->second);
    }
  }
  return Status::Ok();
}

Status WriteNotifyDeliveries(const Sources& s, Writer* w) {
  return WriteNotifyStates(s, w, {"sent", "failed", "dead"}, true);
}

Status WriteNotifyPending(const Sources& s, Writer* w) {
  return WriteNotifyStates(s, w, {"pending"}, false);
}

Status WriteBuildInfo(const Sources&, Writer* w) {
  const BuildInfo& b = TrenchBuildInfo();
  w->Sample(
      {{"version", b.version}, {"commit", b.commit}, {"compiler", b.compiler}},
      int64_t{1});
  return Status::Ok();
}

struct Family {
  Status (*write)(const Sources&, Writer*);
  const char* name;
  const char* type;
  const char* help;
};

constexpr Family kFamilies[] = {
#define TRENCH_METRIC(writer, name, type, help) {writer, name, type, help},
#include "orchestrator/api/metrics.def"
};

}  // namespace

StatusOr<std::string> RenderMetrics(Store* store, const Executor* runner,
                                    const HttpMetrics* http) {
  const Sources sources{store, runner, http};
  Writer w;
  for (const Family& f : kFamilies) {
    w.Family(f.name, f.type, f.help);
    RETURN_IF_ERROR(f.write(sources, &w));
  }
  return w.Take();
}

}  // namespace trench::orchestrator
