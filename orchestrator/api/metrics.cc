// Prometheus text rendering of the store's counts and the tool runner's.
#include "orchestrator/api/metrics.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <utility>
#include <vector>

#include "orchestrator/pipeline/fallback_reason.h"
#include "orchestrator/pipeline/tool_runner.h"
#include "orchestrator/store/job_queue.h"

namespace trench::orchestrator {
namespace {

constexpr JobState kJobStates[] = {JobState::kQueued, JobState::kLeased,
                                   JobState::kDone, JobState::kFailed,
                                   JobState::kParked};

// What the families read.
struct Sources {
  Store* store;
  const ToolRunner* runner;  // May be null.
};

// Appends one metric family: HELP, TYPE and its samples.
class Writer {
 public:
  void Family(const char* name, const char* type, const char* help) {
    name_ = name;
    out_ += std::string("# HELP ") + name + " " + help + "\n";
    out_ += std::string("# TYPE ") + name + " " + type + "\n";
  }
  void Sample(int64_t value, std::string_view state = {}) {
    Line(std::to_string(value), state);
  }
  void Sample(double value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", value);
    Line(buf, {});
  }
  // One sample with labels (values escaped as the text format wants).
  void Labelled(
      const std::vector<std::pair<std::string_view, std::string>>& labels,
      const std::string& value) {
    out_ += name_ + "{";
    for (size_t i = 0; i < labels.size(); ++i) {
      out_ += (i ? "," : "") + std::string(labels[i].first) + "=\"";
      for (char c : labels[i].second) {
        if (c == '\\' || c == '"') {
          out_ += '\\';
          out_ += c;
        } else if (c == '\n') {
          out_ += "\\n";
        } else {
          out_ += c;
        }
      }
      out_ += "\"";
    }
    out_ += "} " + value + "\n";
  }
  std::string Take() { return std::move(out_); }

 private:
  void Line(const std::string& value, std::string_view state) {
    out_ += name_;
    if (!state.empty()) out_ += "{state=\"" + std::string(state) + "\"}";
    out_ += " " + value + "\n";
  }
  std::string name_;
  std::string out_;
};

Status WriteBugs(const Sources& s, Writer* w) {
  ASSIGN_OR_RETURN(auto counts, s.store->CountBugsByState());
  for (BugState b : AllBugStates()) w->Sample(counts[b], BugStateName(b));
  return Status::Ok();
}

Status WriteJobs(const Sources& s, Writer* w) {
  JobQueue queue(s.store);
  for (JobState j : kJobStates) {
    ASSIGN_OR_RETURN(int64_t n, queue.Count(j));
    w->Sample(n, JobStateName(j));
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

// Counts as integers, amounts with their decimals.
std::string Number(double value) {
  if (value == std::floor(value) && std::fabs(value) < 9e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", value);
  return buf;
}

// The rows of `sql`: label columns first (as many as `labels`), then the
// value; one sample each.
Status WriteRows(const Sources& s, Writer* w, const char* sql,
                 std::vector<std::string_view> labels) {
  ASSIGN_OR_RETURN(Statement st, s.store->db()->Prepare(sql));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return Status::Ok();
    std::vector<std::pair<std::string_view, std::string>> l;
    for (size_t i = 0; i < labels.size(); ++i) {
      l.emplace_back(labels[i], st.ColumnText(static_cast<int>(i)));
    }
    w->Labelled(l, Number(st.ColumnDouble(static_cast<int>(labels.size()))));
  }
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
      "'fell back%' THEN 'fell_back' WHEN status = 'done' THEN 'done' WHEN "
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

StatusOr<std::string> RenderMetrics(Store* store, const ToolRunner* runner) {
  const Sources sources{store, runner};
  Writer w;
  for (const Family& f : kFamilies) {
    w.Family(f.name, f.type, f.help);
    RETURN_IF_ERROR(f.write(sources, &w));
  }
  return w.Take();
}

}  // namespace trench::orchestrator
